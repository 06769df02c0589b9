#pragma once

#include "engine/input.h"
#include "features/saesite.h"
#include "features/sparseautoencoder.h"
#include "model/model.h"
#include "util/workbudget.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

// Training a sparse autoencoder on one site's activations: the model runs over a text in windows of its context and
// the site's rows are kept, then the dictionary is fitted to them with Adam (features/sparseautoencoder.h's
// objective), b_dec starting at the rows' mean.
namespace atlas {

// The site's rows [T, D] in the run of `input`, the model run up to the site alone.
Tensor siteRows(std::shared_ptr<const Model> model, const SaeSite &site, const Input &input);

// The site's rows over `text`, tokenised by the model's tokenizer and read in windows of the model's context, each
// window run up to the site alone; at most `maxRows` rows. The rows' memory is checked against `budget` first.
// `progress(done, total)` in rows; false or `cancel` stops it ("cancelled").
Tensor siteActivations(std::shared_ptr<const Model> model, const SaeSite &site, const std::string &text,
    int64_t maxRows, const std::function<bool(int64_t, int64_t)> &progress = {},
    const std::atomic<bool> *cancel = nullptr, const WorkBudget &budget = WorkBudget::process());

struct SaeTrainingOptions
{
    SaeArchitecture architecture = SaeArchitecture::TopK;
    int width = 256;
    int k = 8; // TopK
    SaeObjective objective;
    double initialThreshold = 0.1; // JumpReLU's θ at the start, on the scaled rows
    int steps = 2000;
    int batch = 256;
    double learningRate = 4e-3; // Adam's, warmed up over the first 5 % of steps, then cosine-decayed to a tenth
    uint64_t seed = 0; // the dictionary's draw and the batches' order
    // A feature that fired on no row of the last `deadAfterSteps` batches counts as dead: AuxK (objective.auxiliary)
    // reads those, and each step reports their number.
    int deadAfterSteps = 100;
    int checkpointEvery = 0; // steps between the states handed to trainSparseAutoencoder's `checkpoint`; 0: none
};

// A run's state between two steps, enough to go on exactly as if it had not stopped: the dictionary as trained (on
// the scaled rows), Adam's moments, and each feature's steps since it last fired. The batches' order is replayed from
// the seed, so it is not kept.
struct SaeTrainingState
{
    int step = 0; // steps done
    float scale = 1; // s, the rows' scale while training
    SparseAutoencoder sae; // on the scaled rows
    Tensor logThreshold; // JumpReLU's log θ as trained (θ = exp of it); empty otherwise
    std::map<std::string, Tensor> moments; // AdamW::state(): "m.W_enc", "v.W_enc", …
    std::vector<int> quiet; // [F]
};
// The dictionary the state holds, reading the model's own activations (s folded into the weights).
SparseAutoencoder unscaledDictionary(const SaeTrainingState &state);

struct SaeTrainingStep
{
    int step = 0;
    double loss = 0, reconstruction = 0, auxiliary = 0, l0 = 0;
    int dead = 0; // features that fired on no row of the last deadAfterSteps batches (before this step)
};

// Trains on `rows` [N, d]; `progress` after each step, false (or `cancel`) stops it ("cancelled"). The batches walk
// the rows in an order shuffled by `seed`. The rows are scaled to a mean ‖x‖² of d while training (the losses
// `progress` reports are in those units), and the scale is folded into the weights after, so the dictionary reads
// the model's own activations. Throws atlas::Error for an empty set of rows or options out of range.
// The dictionary, its gradients, Adam's two moments and a batch's [B, F] intermediates are checked against `budget`
// before anything is allocated, and refused with the figure.
// Every options.checkpointEvery steps (but not after the last) `checkpoint` gets the run's state; given such a state
// as `resume`, a run with the same rows and options goes on from it to the dictionary the uninterrupted run makes.
// A state that does not fit (another width or input size, another scale of the rows, a step past the end) is refused
// naming what differs.
// With `targets` [N, d] it trains a transcoder: row n of `targets` is what it learns to predict from row n of `rows`
// (saeBatch's target), b_dec starts at their mean, the input is never shifted by b_dec, and both are scaled by the
// input rows' s, so that the scale folds into the weights as for a dictionary.
SparseAutoencoder trainSparseAutoencoder(const Tensor &rows, const SaeTrainingOptions &options,
    const std::function<bool(const SaeTrainingStep &)> &progress = {}, const std::atomic<bool> *cancel = nullptr,
    const WorkBudget &budget = WorkBudget::process(), const SaeTrainingState *resume = nullptr,
    const std::function<void(const SaeTrainingState &)> &checkpoint = {}, const Tensor *targets = nullptr);

} // namespace atlas
