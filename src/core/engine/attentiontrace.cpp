#include "engine/attentiontrace.h"

#include "engine/blockcomponents.h"
#include "model/blockrecipe.h"
#include "trace/names.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <memory>

namespace atlas {

std::string onDemandObstacle(const ModelConfig &c, const Input &input, int layer)
{
    if (c.isEncoderDecoder())
        return "an encoder–decoder keeps whole matrices";
    if (c.normaliser != Normaliser::Softmax)
        return std::string("its ") + normaliserName(c.normaliser) + " sets a threshold from every score of a row";
    if (c.biasesScores())
        return positionKindName(c.positions) + "'s position term is a T × T tensor of its own";
    if (c.sinkhorn.active())
        return "Sinkhorn attention sorts blocks of every token";
    if (c.adaptiveSpan())
        return "an adaptive span weighs its softmax by a mask";
    if (c.funnel.active())
        return "a funnel pools its tokens";
    if (!input.retention.empty())
        return "token retention reads every head's probabilities";
    if (const attention::AttentionKernelSpec *kernel = input.kernelFor(layer))
        return "the " + kernel->kind + " kernel keeps its own pattern";
    return {};
}

std::string onDemandObstacle(const ModelConfig &c, const Input &input)
{
    for (int i = 0; i < c.layers; ++i)
        if (std::string why = onDemandObstacle(c, input, i); !why.empty())
            return "layer " + std::to_string(i) + ": " + why;
    return {};
}

ops::ScoreRule scoreRule(const Model &m, const std::vector<int> &padding, int layer)
{
    const ModelConfig &c = m.config;
    ops::ScoreRule rule;
    rule.scale = scoreScale(c);
    rule.softcap = c.attentionSoftcap;
    rule.causal = c.causal;
    rule.window = c.windowed(layer) ? c.slidingWindow : 0;
    rule.padding = padding;
    if (c.attentionSinks) {
        const Tensor &sinks = m.blocks[size_t(layer)].weight(BlockPart::Sinks);
        rule.sinks.assign(sinks.data(), sinks.data() + sinks.numel());
    }
    return rule;
}

std::vector<std::string> attentionInputAndReadout(const ModelConfig &c, int layer)
{
    if (c.isEncoderDecoder())
        return {};
    std::vector<std::string> names = {mixingInput(c, names::kOnlyStack, layer)};
    for (std::string &name : readoutInputs(c, layer))
        names.push_back(std::move(name));
    return names;
}

std::vector<std::string> readoutInputs(const ModelConfig &c, int layer)
{
    if (c.fourier.mixes(layer)) // FNet's block: no queries or keys
        return {};
    const bool normed = c.qkNorm != QkNorm::None;
    return {names::queriesOf(names::kOnlyStack, layer, c.rotates(layer), normed),
        names::keysOf(names::kOnlyStack, layer, c.rotates(layer), normed)};
}

std::unique_ptr<AttentionReadout> AttentionReadout::find(
    const Model &m, const std::vector<int> &padding, const Trace &trace, int layer)
{
    const ModelConfig &c = m.config;
    if (layer < 0 || layer >= c.layers || c.isEncoderDecoder() || c.fourier.mixes(layer))
        return nullptr;
    const TraceEntry *lse = trace.find(names::layerTensor(layer, "attn.lse"));
    const std::vector<std::string> inputs = readoutInputs(c, layer);
    const TraceEntry *q = trace.find(inputs[0]);
    const TraceEntry *k = trace.find(inputs[1]);
    if (lse == nullptr || q == nullptr || k == nullptr)
        return nullptr;
    return std::unique_ptr<AttentionReadout>(
        new AttentionReadout(q->tensor, k->tensor, lse->tensor, scoreRule(m, padding, layer)));
}

AttentionReadout::AttentionReadout(const Tensor &q, const Tensor &k, const Tensor &lse, ops::ScoreRule rule)
    : m_q(&q)
    , m_k(&k)
    , m_lse(&lse)
    , m_rule(std::move(rule))
{
}

void AttentionReadout::tile(
    float *out, int64_t stride, ops::ScoreStage stage, int64_t h, int64_t r0, int64_t r1, int64_t c0, int64_t c1) const
{
    ops::attention_tile(out, stride, stage, *m_q, *m_k, *m_lse, m_rule, h, r0, r1, c0, c1);
}

Tensor AttentionReadout::head(ops::ScoreStage stage, int64_t h) const
{
    Tensor out = Tensor::uninitialized({queries(), keys()});
    const int64_t S = keys();
    parallelForPieces(queries(), 64, [&](int64_t r0, int64_t r1) { // rows of 64: the tiled forward's
        tile(out.data() + r0 * S, S, stage, h, r0, r1, 0, S);
    });
    return out;
}

PooledCells AttentionReadout::pooled(ops::ScoreStage stage, ops::PoolCells cells, int64_t h, const ops::PoolGrid &grid,
    const std::atomic<bool> *cancel) const
{
    PooledCells p {{}, {}, grid};
    p.sums.resize(size_t(std::max<int64_t>(0, grid.rows() * grid.cols())));
    p.counts.resize(p.sums.size());
    ops::attention_pool(p.sums.data(), p.counts.data(), stage, cells, *m_q, *m_k, *m_lse, m_rule, h, grid, cancel);
    return p;
}

std::optional<LayerAttention> LayerAttention::find(const Model *model, const std::vector<int> &padding,
    const Trace &trace, const names::AttentionSite &site, int layer)
{
    LayerAttention out;
    out.m_name = names::attentionTensor(site, layer, "probs");
    if (const TraceEntry *probs = trace.find(out.m_name)) {
        if (probs->tensor.rank() != 3)
            throw Error(out.m_name + " is " + probs->tensor.shapeString() + ", not [heads, queries, keys]");
        out.m_probs = &probs->tensor;
        if (const TraceEntry *masked = trace.find(names::attentionTensor(site, layer, "masked"));
            masked && masked->tensor.shape() == probs->tensor.shape())
            out.m_masked = &masked->tensor;
        out.m_heads = probs->tensor.dim(0), out.m_queries = probs->tensor.dim(1), out.m_keys = probs->tensor.dim(2);
        return out;
    }
    if (!model || site.cross || site.stack != names::kOnlyStack)
        return std::nullopt;
    out.m_readout = AttentionReadout::find(*model, padding, trace, layer);
    if (!out.m_readout)
        return std::nullopt;
    out.m_heads = out.m_readout->heads(), out.m_queries = out.m_readout->queries(), out.m_keys = out.m_readout->keys();
    return out;
}

bool LayerAttention::has(ops::ScoreStage stage) const
{
    if (stage != ops::ScoreStage::Probs && stage != ops::ScoreStage::Masked)
        return false;
    return m_readout || (stage == ops::ScoreStage::Probs ? m_probs : m_masked);
}

const float *LayerAttention::rows(
    ops::ScoreStage stage, int64_t h, int64_t r0, int64_t r1, std::vector<float> &buffer) const
{
    if (!has(stage) || h < 0 || h >= m_heads || r0 < 0 || r1 > m_queries || r0 > r1)
        throw Error(m_name + ": no rows " + std::to_string(r0) + "–" + std::to_string(r1) + " of head "
            + std::to_string(h) + " to read");
    if (!m_readout)
        return (stage == ops::ScoreStage::Probs ? m_probs : m_masked)->data() + (h * m_queries + r0) * m_keys;
    // Whole blocks of the tiled forward's 64 rows (counted from row 0), as AttentionReadout::head computes a head: a
    // tile's product sums in an order its shape decides, so only the same blocks give the same bits.
    buffer.resize(size_t((r1 - r0) * m_keys));
    const int64_t first = r0 / 64, last = (r1 + 63) / 64;
    parallelForPieces(last - first, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> block;
        for (int64_t b = first + begin; b < first + end; ++b) {
            const int64_t blockEnd = std::min(m_queries, b * 64 + 64);
            const int64_t from = std::max(r0, b * 64), to = std::min(r1, blockEnd);
            if (from == b * 64 && to == blockEnd) {
                m_readout->tile(buffer.data() + (from - r0) * m_keys, m_keys, stage, h, from, to, 0, m_keys);
                continue;
            }
            block.resize(size_t((blockEnd - b * 64) * m_keys));
            m_readout->tile(block.data(), m_keys, stage, h, b * 64, blockEnd, 0, m_keys);
            std::copy(block.begin() + (from - b * 64) * m_keys, block.begin() + (to - b * 64) * m_keys,
                buffer.begin() + (from - r0) * m_keys);
        }
    });
    return buffer.data();
}

} // namespace atlas
