#include "analysis/corruptedrun.h"

#include "engine/outputhead.h"
#include "trace/names.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace atlas {

namespace {

// X₀ of the clean input plus N(0, (scale · σ)²) at the chosen positions, σ the embedding matrix's standard
// deviation (Meng et al. 2022 corrupt the subject's embeddings with 3σ).
Tensor noiseFor(const Model &model, const Input &clean, const Corruption &corruption)
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

} // namespace

CorruptedRun::CorruptedRun(std::shared_ptr<const Model> model, const Input &clean, const Corruption &corruption)
    : m_engine(model, Input {corruption.tokens.empty() ? clean.tokens : corruption.tokens, clean.padding})
{
    if (!corruption.noisePositions.empty())
        m_noise = noiseFor(*model, clean, corruption);
}

void CorruptedRun::runFrom(int cursor, const TraceEdits &edits, bool throughHead)
{
    m_engine.runTo(cursor);
    const int end = throughHead ? m_engine.opCount() : outputHeadStart(m_engine.program());
    while (m_engine.cursor() < end) {
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

} // namespace atlas
