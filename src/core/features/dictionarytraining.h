#pragma once

#include "features/saefile.h"
#include "features/saesplice.h"
#include "features/saetraining.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

// A dictionary trained and measured the way `train-sae` and the Features view's Train a dictionary… do it: the site's
// activations over a text, training, then its quality on held-out text, recorded in its cfg.json ("atlas_training").
namespace atlas {

// The text to train on and the text to measure on: the built-in corpus's training and held-out parts, or a text
// file with its last tenth held out.
struct DictionaryText
{
    std::string name; // "built-in corpus", or the file's path
    std::string training, heldOut;
};
DictionaryText builtInCorpusText();
DictionaryText textFileText(const std::string &path); // throws atlas::Error naming the file (engine/inputbuilder.h)

// What a dictionary keeps of held-out text: its reconstruction of up to `maxRows` of the site's rows (variance
// unexplained, L0, dead and dense features; a transcoder's prediction of the rows of `writes` from those of `reads`)
// and, for a model that predicts the next token, the loss with it spliced in over 16 contexts of tokens
// (features/saesplice.h).
struct HeldOutMeasures
{
    int64_t rows = 0;
    SaeQuality quality;
    bool hasLosses = false;
    SpliceLosses losses;
};
HeldOutMeasures measureHeldOut(std::shared_ptr<const Model> model, const SparseAutoencoder &sae, const SaeSite &reads,
    const SaeSite &writes, const std::string &heldOut, int64_t maxRows, const std::atomic<bool> *cancel = nullptr);

struct DictionaryTrainingProgress
{
    std::function<bool(int64_t, int64_t)> reading; // rows read of the training text; false stops
    std::function<bool(const SaeTrainingStep &)> step; // after each step; false stops
    std::function<void(int)> resumed; // before the first step of a run that goes on from a saved state: its step
    std::function<void(int)> saved; // after each checkpoint: its step
};

struct TrainedDictionary
{
    SaeDirectory directory; // ready for saveSaeDirectory, its "atlas_training" filled
    int64_t rows = 0; // trained on
    double readSeconds = 0, trainSeconds = 0;
    HeldOutMeasures heldOut; // on max(16, maxRows / 10) held-out rows
    std::vector<double> curve; // the loss at every step
};
// Where a run keeps its state (train-sae's --out, --checkpoint-every and --resume): every options.checkpointEvery
// steps the dictionary so far is saved to `directory` with the run's state (saveSaeDirectory), so that a run stopped
// on the way (killed, the machine switched off) loses at most that many steps; with `resume` the run goes on from the
// state saved there, which must be the same run's: the same model, site, text, rows and options.
struct DictionaryCheckpoints
{
    enum class Resume {
        No, // start afresh (the first checkpoint replaces what the directory holds)
        Yes, // go on from the state, refused when there is none or it is another run's (train-sae --resume)
        IfSameRun, // go on when the state is this run's, else start afresh (Train… in the app)
    };
    std::string directory; // "": none
    Resume resume = Resume::No;
};
// Reads up to `maxRows` of the site's rows over text.training, trains on them, and measures the result on
// text.heldOut. With `writes`, a transcoder: it learns to predict that site's rows (read over the same text) from the
// site's, which the model must make first (blocks.L.ln2.hook_normalized → blocks.L.hook_mlp_out); SAELens has no
// TopK transcoder, so TopK is refused. Throws atlas::Error for bad options, a budget refused, a stop ("cancelled"),
// or a state to resume from that is missing, damaged or another run's.
TrainedDictionary trainDictionary(std::shared_ptr<const Model> model, const SaeSite &site,
    const SaeTrainingOptions &options, const DictionaryText &text, int64_t maxRows,
    const DictionaryTrainingProgress &progress = {}, const std::atomic<bool> *cancel = nullptr,
    const WorkBudget &budget = WorkBudget::process(), const DictionaryCheckpoints &checkpoints = {},
    const std::optional<SaeSite> &writes = std::nullopt);

} // namespace atlas
