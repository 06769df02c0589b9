#pragma once

#include "features/saesite.h"
#include "features/sparseautoencoder.h"
#include "model/model.h"
#include "util/workbudget.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

// A feature's dashboard (Bricken et al. 2023's feature pages; sae_vis and Neuronpedia draw the same): where it fires
// over a corpus, how strongly, what it writes into the logits and which features write nearly the same direction.
// The corpus part is one pass of the model over the text, in windows of its context, each window run up to the site
// and encoded by the dictionary; it is kept per feature, for every feature at once, so that any feature's page is
// then read without running the model again.
namespace atlas {

struct FeatureCorpusOptions
{
    int64_t maxTokens = 100'000; // at most 10 M (the cache stores token indices as float32, exact below 2^24)
    int top = 20; // the strongest examples kept per feature
    int before = 32, after = 8; // the tokens kept around each example
};

// What the pass keeps, per feature f of F. An activation is "active" when it is above 0 (every architecture's output
// is ReLU'd). The histogram counts the active values of f in bins of log10 activation, kBinsPerDecade a decade from
// 10^kLowestDecade; values below fall into the first bin, above into the last.
struct FeatureCorpusStats
{
    static constexpr int kBins = 64, kBinsPerDecade = 8, kLowestDecade = -4;
    int64_t features = 0;
    int top = 0, before = 0, after = 0;
    int window = 0; // tokens a run reads: token i was in the run of tokens [i − i % window, … + window)
    std::vector<int> tokens; // the corpus's tokens read
    std::vector<float> topActivation; // [F, top], largest first, a tie to the earlier token; 0 past the last
    std::vector<int64_t> topToken; // [F, top]: where, an index into `tokens`; −1 past the last
    // [F, top, before + 1 + after]: f on each token around the example, NaN where the token was not in its run
    std::vector<float> context;
    std::vector<int64_t> activeCount; // [F]
    std::vector<float> histogram; // [F, kBins] (counts, exact below 2^24)
    double seconds = 0; // the pass's time

    int contextSize() const { return before + 1 + after; }
    double density(int64_t feature) const
    {
        return tokens.empty() ? 0.0 : double(activeCount[size_t(feature)]) / double(tokens.size());
    }
    // The bin of an activation above 0, and bin b's lower edge.
    static int binOf(float activation);
    static double binLow(int bin);
};

// Runs `model` over `tokens` (at most options.maxTokens of them) and encodes the site's rows. The work's memory (the
// stats, a window's rows and features) is checked against `budget` first. `progress(done, total)` in tokens; false or
// `cancel` stops it (atlas::Error "cancelled"). Throws for a dictionary that does not fit the model.
FeatureCorpusStats featureCorpusPass(std::shared_ptr<const Model> model, const SparseAutoencoder &sae,
    const SaeSite &site, const std::vector<int> &tokens, const FeatureCorpusOptions &options,
    const std::function<bool(int64_t, int64_t)> &progress = {}, const std::atomic<bool> *cancel = nullptr,
    const WorkBudget &budget = WorkBudget::process());

// The tokens a feature's decoder direction d = W_dec[f] raises and lowers most when it is written into the last
// residual stream, read directly by the output head (sae_vis's and Neuronpedia's "logit effects"): d through the
// final norm as TransformerLens folds it (centred for LayerNorm, times its γ as the model applies it), then the
// unembedding: e = W_U (γ ⊙ centre(d)). The norm's 1/σ, a positive number of the run, is left out: it scales every
// token's effect alike. Later layers and a soft-cap are left out too.
struct LogitEffects
{
    std::vector<std::pair<int, float>> raised, lowered; // (token id, e), the largest (most negative) first
};
LogitEffects featureLogitEffects(const Model &model, const SparseAutoencoder &sae, int feature, int count);

// The features whose decoder directions are nearest to `feature`'s by cosine, the largest first (not itself).
std::vector<std::pair<int, float>> nearestFeatures(const SparseAutoencoder &sae, int feature, int count);

} // namespace atlas
