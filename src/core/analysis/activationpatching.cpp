#include "analysis/activationpatching.h"

#include "analysis/corruptedrun.h"
#include "analysis/logitlens.h"

#include "engine/engine.h"
#include "trace/names.h"
#include "util/error.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace atlas {

PatchSite patchSiteFromName(const std::string &name)
{
    if (name == "residual")
        return PatchSite::Residual;
    if (name == "heads")
        return PatchSite::Heads;
    if (name == "mlp")
        return PatchSite::Mlp;
    throw Error("patch site \"" + name + "\": use residual, heads or mlp");
}

const char *patchSiteName(PatchSite site)
{
    switch (site) {
    case PatchSite::Residual:
        return "residual";
    case PatchSite::Heads:
        return "heads";
    case PatchSite::Mlp:
        return "mlp";
    }
    return "residual";
}

namespace {

// The traced tensor a cell replaces.
std::string tensorOf(const PatchCell &cell)
{
    switch (cell.site) {
    case PatchSite::Residual:
        return names::residualStream(cell.layer);
    case PatchSite::Heads:
        return names::layerTensor(cell.layer, "attn.context");
    case PatchSite::Mlp:
        return names::layerTensor(cell.layer, "mlp.down");
    }
    return {};
}

// Writes the clean value of `cell` into `patched` (the corrupted run's tensor of the same name).
void copyCell(Tensor &patched, const Tensor &clean, const PatchCell &cell)
{
    float *to = patched.data();
    const float *from = clean.data();
    switch (cell.site) {
    case PatchSite::Residual: { // [T, D]: row t
        const int64_t D = clean.dim(1);
        std::copy(from + cell.index * D, from + (cell.index + 1) * D, to + cell.index * D);
        break;
    }
    case PatchSite::Heads: { // [H, T, d]: slice h
        const int64_t size = clean.dim(1) * clean.dim(2);
        std::copy(from + cell.index * size, from + (cell.index + 1) * size, to + cell.index * size);
        break;
    }
    case PatchSite::Mlp:
        std::copy(from, from + clean.numel(), to);
        break;
    }
}

// Every cell of `site` in the program's order of the tensors they patch.
std::vector<PatchCell> cellsOf(PatchSite site, const ModelConfig &config, int tokens)
{
    std::vector<PatchCell> cells;
    const int across = site == PatchSite::Residual ? tokens : site == PatchSite::Heads ? config.heads : 1;
    for (int l = 0; l < config.layers; ++l)
        for (int i = 0; i < across; ++i)
            cells.push_back({site, l, site == PatchSite::Mlp ? -1 : i});
    return cells;
}

} // namespace

PatchingWork patchingWork(const ModelConfig &config, int tokens, PatchSite site, double tracedBytes)
{
    PatchingWork w;
    w.passes = double(cellsOf(site, config, tokens).size());
    w.flops = w.passes * Model::forwardFlopsOf(config, tokens);
    w.bytes = 3.0 * tracedBytes;
    w.what = "Patching " + countOf(size_t(tokens), "token") + " ("
        + countOf(size_t(w.passes), "forward pass", "forward passes") + ", site " + patchSiteName(site) + ")";
    return w;
}

std::string patchingProblem(
    const Model &model, const Input &clean, const Corruption &corruption, const PatchingOptions &options)
{
    const ModelConfig &config = model.config;
    const int T = int(clean.tokens.size()), V = config.vocab;
    if (config.isEncoderDecoder())
        return "activation patching runs models of one stack; this one is an encoder-decoder";
    if (T < 1)
        return "the clean input is empty";
    if (corruption.tokens.empty() && corruption.noisePositions.empty())
        return "give a corrupted input of the same length, or positions to corrupt with noise";
    if (!corruption.tokens.empty() && corruption.tokens.size() != clean.tokens.size())
        return "the corrupted input has " + std::to_string(corruption.tokens.size()) + " tokens and the clean one "
            + std::to_string(T) + ": patching compares the same positions, give inputs of equal length";
    for (int t : corruption.noisePositions)
        if (t < 0 || t >= T)
            return "noise position " + std::to_string(t) + " is not in 0 … " + std::to_string(T - 1);
    if (options.metric.position < -1 || options.metric.position >= T)
        return "the metric's position " + std::to_string(options.metric.position) + " is not in 0 … "
            + std::to_string(T - 1) + " (−1: the last)";
    if (options.metric.target < 0 || options.metric.target >= V)
        return "the target token " + std::to_string(options.metric.target) + " is not in the vocabulary (0 … "
            + std::to_string(V - 1) + ")";
    if (options.metric.contrast >= V || options.metric.contrast == options.metric.target)
        return "the contrast token must be another token of the vocabulary (or none, for the target's probability)";
    if (config.reversible && options.site == PatchSite::Residual)
        return "a reversible model carries two streams between its blocks, not one residual stream: patch heads or "
               "the feed-forward outputs";
    return {};
}

double patchedMetric(std::shared_ptr<const Model> model, const Input &clean, const Corruption &corruption,
    const PatchMetric &metric, const std::vector<PatchCell> &cells)
{
    PatchingOptions options;
    options.metric = metric;
    for (const PatchCell &cell : cells)
        if (const std::string why = patchingProblem(*model, clean, corruption, {cell.site, metric}); !why.empty())
            throw Error("activation patching: " + why);
    if (const std::string why = patchingProblem(*model, clean, corruption, options); !why.empty())
        throw Error("activation patching: " + why);
    Engine cleanRun(model, clean);
    cleanRun.runTo(outputHeadStart(cleanRun.program()));
    TraceEdits edits;
    for (const PatchCell &cell : cells) {
        const std::string name = tensorOf(cell);
        auto previous = edits[name];
        edits[name] = [previous, &cleanRun, name, cell](Tensor &t) {
            if (previous)
                previous(t);
            copyCell(t, cleanRun.trace().tensor(name), cell);
        };
    }
    CorruptedRun run(model, clean, corruption);
    run.runFrom(0, edits);
    return metricOf(run.engine(), metric, resolvedPosition(metric, clean.tokens.size()));
}

PatchingResult activationPatching(std::shared_ptr<const Model> model, const Input &clean, const Corruption &corruption,
    const PatchingOptions &options)
{
    if (const std::string why = patchingProblem(*model, clean, corruption, options); !why.empty())
        throw Error("activation patching: " + why);
    const ModelConfig &config = model->config;
    const int T = int(clean.tokens.size());
    PatchingResult result;
    result.site = options.site;
    result.position = resolvedPosition(options.metric, clean.tokens.size());
    Engine cleanRun(model, clean);
    const PatchingWork work = patchingWork(config, T, options.site, double(cleanRun.estimatedTraceBytes()));
    if (const std::string why = overBudget(work.what, work.flops, work.bytes, options.budget); !why.empty())
        throw Error(why);
    cleanRun.runTo(outputHeadStart(cleanRun.program()));
    result.clean = metricOf(cleanRun, options.metric, result.position);
    CorruptedRun run(model, clean, corruption);
    run.runFrom(0, {});
    result.corrupted = metricOf(run.engine(), options.metric, result.position);
    result.corruptedTokens = run.engine().input().tokens;
    const double span = result.clean - result.corrupted;
    if (std::abs(span) <= 1e-9 * std::max(1.0, std::abs(result.clean)))
        throw Error("activation patching: the clean and the corrupted run give the same metric ("
            + std::to_string(result.clean) + "): there is nothing to recover; corrupt the input differently");
    const std::vector<PatchCell> cells = cellsOf(options.site, config, T);
    result.rows = config.layers;
    result.cols = int(cells.size()) / config.layers;
    result.metric.resize(cells.size());
    result.recovered.resize(cells.size());
    // Last cell first: each patch reruns the operations after its own, so the next patch, made no later in the
    // program, steps back past every operation the last one touched.
    for (size_t done = 0; done < cells.size(); ++done) {
        if ((options.cancel && options.cancel->load())
            || (options.progress && !options.progress(int(done), int(cells.size()))))
            throw Error("activation patching: cancelled");
        const size_t c = cells.size() - 1 - done;
        const PatchCell &cell = cells[c];
        const std::string name = tensorOf(cell);
        const int op = run.engine().program().producerOf(name);
        // From the corrupted trace as it stands up to the patched operation: only what follows runs again.
        run.runFrom(op, {{name, [&](Tensor &t) { copyCell(t, cleanRun.trace().tensor(name), cell); }}});
        result.metric[c] = metricOf(run.engine(), options.metric, result.position);
        result.recovered[c] = (result.metric[c] - result.corrupted) / span;
        ++result.patches;
    }
    if (options.progress)
        options.progress(int(cells.size()), int(cells.size()));
    return result;
}

} // namespace atlas
