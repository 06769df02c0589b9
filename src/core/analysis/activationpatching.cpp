#include "analysis/activationpatching.h"

#include "analysis/logitlens.h"

#include "engine/engine.h"
#include "trace/names.h"
#include "util/error.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

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

// The corrupted forward pass, stepped by hand so that the noise (on X₀) and the patches are written into its trace
// as soon as the operation that makes them has run.
class CorruptedRun
{
public:
    CorruptedRun(std::shared_ptr<const Model> model, const Input &clean, const Corruption &corruption)
        : m_engine(model, Input {corruption.tokens.empty() ? clean.tokens : corruption.tokens, clean.padding})
    {
        if (!corruption.noisePositions.empty())
            m_noise = noiseFor(*model, clean, corruption);
    }

    Engine &engine() { return m_engine; }
    const Tensor *noised() const { return m_noise.empty() ? nullptr : &m_noise; }

    // Runs from `cursor` through the last block with `edits` (tensor name → what to write into it) applied as they
    // are made. The output head is left to the metric, which needs one position's logits, not every position's.
    void runFrom(int cursor, const std::map<std::string, std::function<void(Tensor &)>> &edits)
    {
        m_engine.runTo(cursor);
        const int head = outputHeadStart(m_engine.program());
        while (m_engine.cursor() < head) {
            const int op = m_engine.cursor();
            m_engine.step();
            for (const OpOutput &out : m_engine.program().ops[size_t(op)].outputs) {
                const bool noise = !m_noise.empty() && out.name == names::residualStream(0);
                const auto edit = edits.find(out.name);
                if (!noise && edit == edits.end())
                    continue;
                const TraceEntry &entry = *m_engine.trace().find(out.name);
                Tensor t = noise ? m_noise : entry.tensor; // a copy: written below, shared until then
                if (edit != edits.end())
                    edit->second(t);
                m_engine.trace().put(out.name, entry.formula, op, std::move(t));
            }
        }
    }

private:
    // X₀ of the clean input plus N(0, (scale · σ)²) at the chosen positions, σ the embedding matrix's standard
    // deviation (Meng et al. 2022 corrupt the subject's embeddings with 3σ).
    static Tensor noiseFor(const Model &model, const Input &clean, const Corruption &corruption)
    {
        Engine e(std::make_shared<const Model>(model), clean);
        e.runTo(e.program().producerOf(names::residualStream(0)) + 1);
        Tensor x = e.trace().tensor(names::residualStream(0));
        const Tensor wte = model.wte.unpacked();
        double mean = 0, square = 0;
        for (int64_t i = 0; i < wte.numel(); ++i) {
            mean += wte.data()[i];
            square += double(wte.data()[i]) * wte.data()[i];
        }
        mean /= double(wte.numel());
        const double sigma = std::sqrt(std::max(0.0, square / double(wte.numel()) - mean * mean));
        std::mt19937_64 random(corruption.seed);
        std::normal_distribution<double> normal(0.0, corruption.noiseScale * sigma);
        const int64_t D = x.dim(1);
        float *data = x.data();
        for (int t : corruption.noisePositions)
            for (int64_t i = 0; i < D; ++i)
                data[t * D + i] += float(normal(random));
        return x;
    }

    Engine m_engine;
    Tensor m_noise;
};

// The metric from the output head applied to the metric's position alone (the same arithmetic for every run, so a
// patch that changes nothing gives the corrupted metric exactly).
double metricOf(const Engine &run, const PatchMetric &metric, int position)
{
    const Tensor z = outputHeadLogits(
        *run.modelPtr(), run.program(), run.trace(), run.input(), run.modelPtr()->config.layers, {position});
    const float *row = z.data();
    if (metric.contrast >= 0)
        return double(row[metric.target]) - double(row[metric.contrast]);
    const int64_t V = z.dim(1);
    const double top = *std::max_element(row, row + V);
    double sum = 0;
    for (int64_t v = 0; v < V; ++v)
        sum += std::exp(double(row[v]) - top);
    return std::exp(double(row[metric.target]) - top) / sum;
}

int resolvedPosition(const PatchMetric &metric, size_t tokens)
{
    return metric.position < 0 ? int(tokens) - 1 : metric.position;
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
    std::map<std::string, std::function<void(Tensor &)>> edits;
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
