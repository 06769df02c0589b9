#pragma once

#include "engine/input.h"
#include "model/model.h"
#include "util/workbudget.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

// Activation patching (causal tracing: Meng et al. 2022; Wang et al. 2022's path to the IOI heads). The model runs a
// corrupted input; one activation is replaced by its value in the clean run, the rest of the forward pass runs again
// from there, and a metric of the output says how much of the clean behaviour that one activation restores:
//   recovered = (m_patched − m_corrupted) / (m_clean − m_corrupted), 1 = all of it, 0 = none.
// Each patch reruns only the operations after the patched one, from the corrupted run's own trace.
namespace atlas {

// What is patched, one cell of the result each:
//  - Residual: the residual stream entering block l at position t (l = 0 … L−1; block 0 reads the embedding);
//  - Heads: head h's context C_h in layer l (`layer.l.attn.context`, every position), what the head writes;
//  - Mlp: layer l's feed-forward output (`layer.l.mlp.down`, every position).
enum class PatchSite { Residual, Heads, Mlp };
PatchSite patchSiteFromName(const std::string &name); // "residual" | "heads" | "mlp"; throws atlas::Error
const char *patchSiteName(PatchSite site);

// The metric at one position's output: logit(target) − logit(contrast), or with no contrast p(target).
struct PatchMetric
{
    int position = -1; // −1 = the last
    int target = 0;
    int contrast = -1; // −1: the probability of target
};

// The corrupted run: another input of the same length, or the clean one with Gaussian noise of standard deviation
// `noiseScale` × (the token embeddings' standard deviation) added to the embedding at `noisePositions` (Meng et al.
// use 3), drawn from `seed`.
struct Corruption
{
    std::vector<int> tokens; // empty: the noise below
    std::vector<int> noisePositions;
    double noiseScale = 3.0;
    uint64_t seed = 0;
};

struct PatchingOptions
{
    PatchSite site = PatchSite::Residual;
    PatchMetric metric;
    // Called after each patch with (done, total); returning false stops the sweep (the result is then refused).
    std::function<bool(int, int)> progress;
    const std::atomic<bool> *cancel = nullptr;
    // Checked before the first forward pass against patchingWork's estimate (util/workbudget.h).
    WorkBudget budget = WorkBudget::process();
};

// Patching's work on `tokens` tokens at `site`: a forward pass per cell (layers × positions, heads or 1) and three
// traces of `tracedBytes` held at once (the clean run, the corrupted one, the patched one); `what` names it.
struct PatchingWork
{
    double passes = 0, flops = 0, bytes = 0;
    std::string what;
};
PatchingWork patchingWork(const ModelConfig &config, int tokens, PatchSite site, double tracedBytes);

struct PatchingResult
{
    PatchSite site = PatchSite::Residual;
    int rows = 0, cols = 0; // layers × (positions | heads | 1)
    int position = 0; // the metric's position, resolved
    double clean = 0, corrupted = 0; // the metric of the two runs
    std::vector<double> metric; // [rows, cols] with that cell patched
    std::vector<double> recovered; // [rows, cols]
    std::vector<int> corruptedTokens; // the corrupted run's tokens (the clean ones under noise)
    int patches = 0;
    double recoveredAt(int row, int col) const { return recovered[size_t(row) * size_t(cols) + size_t(col)]; }
};

// One activation to patch: site, layer, and the position (Residual) or head (Heads); −1 for Mlp.
struct PatchCell
{
    PatchSite site = PatchSite::Residual;
    int layer = 0;
    int index = 0;
};

// Why this model and these inputs cannot be patched ("" when they can): lengths that differ, a metric position or
// token out of range, a model without the site's tensors (reversible streams, an encoder-decoder), clean and
// corrupted runs whose metric is equal.
std::string patchingProblem(
    const Model &model, const Input &clean, const Corruption &corruption, const PatchingOptions &options);
// Every cell of options.site patched alone. Throws atlas::Error with patchingProblem's text, or "cancelled".
PatchingResult activationPatching(std::shared_ptr<const Model> model, const Input &clean, const Corruption &corruption,
    const PatchingOptions &options);
// The metric of the corrupted run with `cells` patched together (none: the corrupted run's own metric).
double patchedMetric(std::shared_ptr<const Model> model, const Input &clean, const Corruption &corruption,
    const PatchMetric &metric, const std::vector<PatchCell> &cells);

} // namespace atlas
