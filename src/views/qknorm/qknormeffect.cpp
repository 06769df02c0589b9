#include "qknorm/qknormeffect.h"

#include "engine/attentiontrace.h"
#include "engine/blockcomponents.h"
#include "trace/names.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace atlas {

namespace {

// ‖x[h, t, :]‖ for every position t of head h of a [H, T, d] tensor.
std::vector<float> rowLengths(const Tensor &x, int64_t head)
{
    const int64_t tokens = x.dim(1), d = x.dim(2);
    std::vector<float> lengths(size_t(tokens), 0.0f);
    const float *base = x.data() + head * tokens * d;
    for (int64_t t = 0; t < tokens; ++t) {
        double sum = 0;
        for (int64_t c = 0; c < d; ++c)
            sum += double(base[t * d + c]) * base[t * d + c];
        lengths[size_t(t)] = float(std::sqrt(sum));
    }
    return lengths;
}

// max|γ| over the γ entries that head `head` (of `heads` sharing the norm's row) reads: all of a per-head γ [d], or
// the head's slice of a whole projection's γ [heads·d].
float largestGain(const Tensor &gamma, int64_t head, int64_t d, bool slices)
{
    const float *g = gamma.data() + (slices ? head * d : 0);
    float largest = 0;
    for (int64_t c = 0; c < d; ++c)
        largest = std::max(largest, std::abs(g[c]));
    return largest;
}

float largestOf(const std::vector<float> &values)
{
    return values.empty() ? 0.0f : *std::max_element(values.begin(), values.end());
}

std::string metName(const ModelConfig &c, int layer, bool keys)
{
    if (c.rotates(layer))
        return keys ? names::keysOf(layer, true) : names::queriesOf(layer, true);
    if (c.qkNorm != QkNorm::None)
        return names::layerTensor(layer, keys ? "attn.k_norm" : "attn.q_norm");
    return keys ? names::keysOf(layer, false) : names::queriesOf(layer, false);
}

} // namespace

std::string qkNormEffectProblem(const Model &model, int layer)
{
    const ModelConfig &c = model.config;
    if (c.isEncoderDecoder())
        return "this model is an encoder–decoder; the view reads the self-attention of a decoder-only or "
               "encoder-only model";
    if (c.biasesScores())
        return "this model adds a position bias to its scores (" + positionKindName(c.positions)
            + "), so they are not q·k alone";
    if (layer < 0 || layer >= c.layers)
        return "the model has layers 0 to " + std::to_string(c.layers - 1) + ", not " + std::to_string(layer);
    return {};
}

std::vector<std::string> qkNormEffectInputs(const ModelConfig &c, int layer)
{
    std::vector<std::string> inputs = {names::queriesOf(layer, false), names::keysOf(layer, false)};
    for (bool keys : {false, true})
        if (const std::string met = metName(c, layer, keys);
            std::find(inputs.begin(), inputs.end(), met) == inputs.end())
            inputs.push_back(met);
    inputs.push_back(names::layerTensor(layer, "attn.masked"));
    return inputs;
}

QkNormEffect qkNormEffect(const Model &model, const Trace &trace, int layer, const std::vector<int> &padding)
{
    const ModelConfig &c = model.config;
    if (const std::string why = qkNormEffectProblem(model, layer); !why.empty())
        throw Error(why);
    const std::string maskedName = names::layerTensor(layer, "attn.masked");
    // A trace that keeps attention on demand: each head's masked scores recomputed a block of rows at a time.
    const std::unique_ptr<AttentionReadout> readout
        = trace.find(maskedName) ? nullptr : AttentionReadout::find(model, padding, trace, layer);
    for (const std::string &name : qkNormEffectInputs(c, layer))
        if (!trace.find(name) && !(name == maskedName && readout))
            throw Error(name + " is not traced yet");
    const Tensor &q = trace.tensor(names::queriesOf(layer, false)), &k = trace.tensor(names::keysOf(layer, false));
    const Tensor &qMet = trace.tensor(metName(c, layer, false)), &kMet = trace.tensor(metName(c, layer, true));
    const Tensor *masked = readout ? nullptr : &trace.tensor(maskedName);

    QkNormEffect e;
    e.layer = layer;
    e.kind = c.qkNorm;
    e.dim = int(q.dim(2));
    e.scale = scoreScale(c);
    const int64_t heads = q.dim(0), d = q.dim(2), queries = masked ? masked->dim(1) : readout->queries(),
                  keys = masked ? masked->dim(2) : readout->keys();
    constexpr int64_t kRowsAtOnce = 64;
    std::vector<float> rows(size_t(masked ? 0 : std::min(queries, kRowsAtOnce) * keys));
    const int64_t group = std::max<int64_t>(1, heads / std::max<int64_t>(1, c.kvHeadCount()));
    const BlockWeights &b = model.blocks[size_t(layer)];
    const bool slices = c.qkNorm == QkNorm::Projections;
    const double nq = double(slices ? heads * d : d), nk = double(slices ? c.kvHeadCount() * d : d);
    for (int64_t h = 0; h < heads; ++h) {
        QkNormHead head;
        head.queryBefore = rowLengths(q, h);
        head.keyBefore = rowLengths(k, h);
        head.queryAfter = rowLengths(qMet, h);
        head.keyAfter = rowLengths(kMet, h);
        head.inputBound = e.scale * largestOf(head.queryAfter) * largestOf(head.keyAfter);
        if (c.qkNorm != QkNorm::None) {
            // What the norm multiplies by: γ, or Gemma 3's 1 + γ.
            head.queryLimit
                = float(std::sqrt(nq) * largestGain(normScale(b.weight(BlockPart::QNorm), c), h, d, slices));
            head.keyLimit
                = float(std::sqrt(nk) * largestGain(normScale(b.weight(BlockPart::KNorm), c), h / group, d, slices));
            head.weightBound = e.scale * head.queryLimit * head.keyLimit;
        }
        float lowest = std::numeric_limits<float>::infinity(), highest = -lowest;
        const auto range = [&lowest, &highest](const float *s, int64_t n) {
            for (int64_t i = 0; i < n; ++i)
                if (std::isfinite(s[i])) {
                    lowest = std::min(lowest, s[i]);
                    highest = std::max(highest, s[i]);
                }
        };
        if (masked)
            range(masked->data() + h * queries * keys, queries * keys);
        else
            for (int64_t r0 = 0; r0 < queries; r0 += kRowsAtOnce) {
                const int64_t r1 = std::min(queries, r0 + kRowsAtOnce);
                readout->tile(rows.data(), keys, ops::ScoreStage::Masked, h, r0, r1, 0, keys);
                range(rows.data(), (r1 - r0) * keys);
            }
        head.lowest = std::isfinite(lowest) ? lowest : 0.0f;
        head.highest = std::isfinite(highest) ? highest : 0.0f;
        e.heads.push_back(std::move(head));
    }
    return e;
}

} // namespace atlas
