#include "positions/positionprofile.h"

#include "engine/attentiontrace.h"
#include "ops/ops.h"
#include "trace/names.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace atlas {

namespace {

// Cosine similarity of every pair of rows of p [T, C].
Tensor rowCosines(const Tensor &p)
{
    const int64_t T = p.dim(0);
    MatrixRM unit = p.matrix();
    for (int64_t t = 0; t < T; ++t) {
        const float norm = unit.row(t).norm();
        if (norm > 0)
            unit.row(t) /= norm;
    }
    Tensor out({T, T});
    out.matrix() = unit * unit.transpose();
    return out;
}

void additive(PositionProfile &out, const Model &model, const Trace &trace, const names::Stack &stack)
{
    const std::string name = names::stackTensor(stack, "pos.encoding");
    const TraceEntry *p = trace.find(name);
    if (!p)
        throw Error("the trace has no " + name + ": run the model first");
    out.encoding = p->tensor;
    out.encodingColumns = "dimension";
    out.similarity = rowCosines(p->tensor);
    out.similarityTitle = "cosine similarity of P_t and P_s";
    if (out.kind == PositionKind::Learned) {
        out.encodingTitle = "learned P = W_pe";
        out.formula = "X₀ = E + W_pe[t]";
        return;
    }
    out.encodingTitle = "sinusoidal P";
    out.formula = "X₀ = E + P,  P(t,2i) = sin(t/10000^(2i/D)),  P(t,2i+1) = cos(t/10000^(2i/D))";
    const int64_t D = model.config.dModel;
    for (int64_t i = 0; i < D / 2; ++i)
        out.wavelengths.push_back(2 * std::numbers::pi * std::pow(10000.0, 2.0 * double(i) / double(D)));
}

// "2", "0.25": a factor as short as it reads.
std::string shortNumber(double x)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
}

void rotary(PositionProfile &out, const ModelConfig &c, int T, int layer)
{
    // Gemma 3's local layers: a base of their own; LongRoPE: factors chosen by the text's length. A partial rotary
    // (GPT-NeoX, Phi-4-mini) turns the first r = 2·theta.size() dimensions of a head only.
    const std::vector<double> theta = c.ropeFrequencies(layer, T);
    const int64_t pairs = int64_t(theta.size());
    const bool interleaved = c.positions == PositionKind::Rope;
    out.encoding = Tensor({T, pairs});
    for (int64_t j = 0; j < pairs; ++j)
        out.wavelengths.push_back(2 * std::numbers::pi / theta[size_t(j)]);
    for (int t = 0; t < T; ++t)
        for (int64_t j = 0; j < pairs; ++j)
            out.encoding.data()[t * pairs + j] = float(std::cos(t * theta[size_t(j)]));
    out.similarity = Tensor({T, T});
    for (int t = 0; t < T; ++t)
        for (int s = 0; s < T; ++s) {
            double sum = 0;
            for (double th : theta)
                sum += std::cos((t - s) * th);
            out.similarity.data()[int64_t(t) * T + s] = float(sum / double(pairs));
        }
    out.encodingTitle = std::string("cos(t·θⱼ): the turn of pair j at t");
    const bool partial = c.rotaryDims > 0;
    out.encodingColumns = interleaved ? "pair j (dimensions 2j, 2j+1)"
        : partial ? "pair j (dimensions j, j+r/2 of the first r = " + std::to_string(c.rotaryDims) + ")"
                  : "pair j (dimensions j, j+d/2)";
    out.similarityTitle = "R(t)q · R(s)q: a function of t − s";
    // The layer's own base (Gemma 3's local layers have one) and rope_scaling, which those local layers skip.
    const bool local = c.ropeLocalBase > 0 && c.windowed(layer);
    const float base = local ? c.ropeLocalBase : c.ropeBase;
    std::string scaling;
    if (!local && c.ropeScaling.kind == RopeScaling::Kind::Linear)
        scaling = " / " + shortNumber(c.ropeScaling.factor) + " (rope_scaling linear)";
    else if (!local && c.ropeScaling.kind == RopeScaling::Kind::Llama3)
        scaling = ", the low frequencies divided by " + shortNumber(c.ropeScaling.factor) + " (rope_scaling llama3)";
    else if (!local && c.ropeScaling.kind == RopeScaling::Kind::Factors)
        scaling = " / fⱼ, a factor per pair (the GGUF file's rope_freqs)";
    else if (!local && c.ropeScaling.kind == RopeScaling::Kind::LongRope) {
        const bool longer = T > c.ropeScaling.originalContext;
        scaling = " / λⱼ, LongRoPE's " + std::string(longer ? "long" : "short") + " factors (" + std::to_string(T)
            + (longer ? " > " : " ≤ ") + std::to_string(c.ropeScaling.originalContext) + " positions); cos and sin × "
            + shortNumber(c.ropeAmplitude(layer));
    }
    out.formula = std::string(c.queryScaleBase > 0 ? "S = R(Q) R(K)ᵀ/√s,  pairs " : "S = R(Q) R(K)ᵀ/√d,  pairs ")
        + (interleaved    ? "(x₂ⱼ, x₂ⱼ₊₁)"
                : partial ? "(xⱼ, xⱼ₊r/2)"
                          : "(xⱼ, xⱼ₊d/2)")
        + " turned by t·θⱼ,  θⱼ = " + std::to_string(int64_t(base)) + (partial ? "^(−2j/r)" : "^(−2j/d)") + scaling
        + (local ? "  (this windowed layer's own base, rope_local_base_freq)" : "");
}

// The query's pairs and those of the key it attends to most, from the trace, before and after the rotation.
void rotatedPairs(PositionProfile &out, const Model &model, const Trace &trace, int T, int layer, int head, int query,
    const names::Stack &s, const std::vector<int> &padding)
{
    const ModelConfig &c = model.config;
    const TraceEntry *q = trace.find(names::layerTensor(s, layer, "attn.q"));
    const TraceEntry *k = trace.find(names::layerTensor(s, layer, "attn.k"));
    const TraceEntry *qr = trace.find(names::queriesOf(s, layer, true));
    const TraceEntry *kr = trace.find(names::keysOf(s, layer, true));
    const TraceEntry *probs = trace.find(names::layerTensor(s, layer, "attn.probs"));
    // A trace that keeps attention on demand: the query's row recomputed from its log-sum-exp
    // (engine/attentiontrace.h).
    const std::unique_ptr<AttentionReadout> readout
        = probs || s != names::kOnlyStack ? nullptr : AttentionReadout::find(model, padding, trace, layer);
    if (!q || !k || !qr || !kr || !(probs || readout) || head < 0 || head >= q->tensor.dim(0))
        return; // not computed yet: the encoding and similarity are drawn without the pairs
    const int64_t d = c.headDim();
    out.query = query < 0 || query >= T ? T - 1 : query;
    std::vector<float> row(static_cast<size_t>(T));
    if (probs)
        std::copy_n(probs->tensor.data() + (int64_t(head) * T + out.query) * T, T, row.begin());
    else
        readout->tile(row.data(), T, ops::ScoreStage::Probs, head, out.query, out.query + 1, 0, T);
    out.key = int(std::max_element(row.begin(), row.end()) - row.begin());
    const auto at = [&](const Tensor &t, int position, int64_t dim) {
        return double(t.data()[(int64_t(head) * T + position) * d + dim]);
    };
    const bool interleaved = c.positions == PositionKind::Rope;
    const std::vector<double> theta = c.ropeFrequencies(layer, T);
    const int64_t turned = int64_t(theta.size()); // the pairs that turn (a partial rotary's first r/2)
    for (int64_t j = 0; j < std::min<int64_t>(4, turned); ++j) {
        const int64_t a = interleaved ? 2 * j : j, b = interleaved ? 2 * j + 1 : j + turned;
        PositionProfile::RotatedPair p {};
        p.q[0] = at(q->tensor, out.query, a);
        p.q[1] = at(q->tensor, out.query, b);
        p.k[0] = at(k->tensor, out.key, a);
        p.k[1] = at(k->tensor, out.key, b);
        p.qRot[0] = at(qr->tensor, out.query, a);
        p.qRot[1] = at(qr->tensor, out.query, b);
        p.kRot[0] = at(kr->tensor, out.key, a);
        p.kRot[1] = at(kr->tensor, out.key, b);
        p.theta = theta[size_t(j)];
        out.rotatedPairs.push_back(p);
    }
}

void scoreTerm(
    PositionProfile &out, const Model &model, const Trace &trace, int T, int layer, int head, const names::Stack &stack)
{
    const ModelConfig &c = model.config;
    const std::string name = names::layerTensor(stack, layer, "attn.bias");
    const TraceEntry *b = trace.find(name);
    if (!b || b->tensor.rank() != 3 || head < 0 || head >= b->tensor.dim(0))
        throw Error("the trace has no " + name + " for head " + std::to_string(head) + ": run the model first");
    out.encoding = Tensor({T, T});
    std::copy(
        b->tensor.data() + int64_t(head) * T * T, b->tensor.data() + int64_t(head + 1) * T * T, out.encoding.data());
    out.encodingColumns = "key j";
    const std::string which = "layer " + std::to_string(layer) + ", head " + std::to_string(head);
    if (c.positions == PositionKind::Shaw) {
        out.encodingTitle = "Shaw term, " + which;
        out.formula = c.relativeKeySign < 0
            ? "S = (Q Kᵀ + Q e(i−j)ᵀ)/√d,  BERT's relative_key: a key per distance up to ±"
                + std::to_string(c.relativeClip)
            : "S = (Q Kᵀ + Q a_clip(j−i)ᵀ)/√d,  distances clipped to ±" + std::to_string(c.relativeClip);
        return;
    }
    const bool alibi = c.positions == PositionKind::Alibi;
    // An encoder–decoder's encoder looks both ways; a T5 checkpoint's encoder has a bucket table of its own.
    const bool encoder = stack == names::kEncoderStack, bidirectional = encoder || !c.causal;
    const Tensor &table
        = encoder && !model.encoderRelativeBias.empty() ? model.encoderRelativeBias : model.relativeBias;
    out.encodingTitle = alibi ? "ALiBi bias, " + which : "T5 bias, " + which;
    const std::string scores = c.scaleScores ? "S = Q Kᵀ/√d" : "S = Q Kᵀ (not divided by √d)";
    out.formula = alibi ? scores + " − m_h·|i − j|,  m_h = 2^(−8h/H)"
                        : scores + " + b[bucket(j − i), h],  " + std::to_string(c.relativeBuckets) + " buckets"
            + (bidirectional ? " (half for keys ahead, half behind)" : " (keys behind only)") + ", log-spaced up to "
            + std::to_string(c.relativeMaxDistance)
            + (c.isEncoderDecoder() ? (encoder ? ": the encoder's table" : ": the decoder's table") : "");
    const std::vector<float> slopes = ops::alibiSlopes(c.heads);
    for (int h = 0; h < c.heads; ++h) {
        std::vector<double> row;
        for (int dist = 0; dist < T; ++dist)
            row.push_back(alibi ? -double(slopes[size_t(h)]) * dist
                                : double(table.data()[int64_t(ops::t5Bucket(-dist, bidirectional, c.relativeBuckets,
                                                          c.relativeMaxDistance))
                                        * c.heads
                                    + h]));
        out.biasByDistance.push_back(std::move(row));
    }
}

} // namespace

PositionProfile positionProfile(const Model &model, const Trace &trace, int tokens, int layer, int head, int query,
    const names::Stack &stack, const std::vector<int> &padding)
{
    PositionProfile out;
    out.kind = model.config.positions;
    out.length = tokens;
    if (model.config.addsPositions())
        additive(out, model, trace, stack);
    else if (model.config.rotatesQueriesAndKeys() && !model.config.rotates(layer)) {
        out.kind = PositionKind::None; // SmolLM3's NoPE layers: nothing to draw but the formula
        out.nopeLayer = true;
        out.formula = "layer " + std::to_string(layer) + " (NoPE): S = Q Kᵀ/√d with q and k not turned; this "
            + "layer's scores see where a token is only through what earlier layers wrote into the stream and "
            + "through the causal mask (the model's other layers turn q and k with RoPE)";
    } else if (model.config.rotatesQueriesAndKeys()) {
        rotary(out, model.config, tokens, layer);
        if (model.gguf)
            out.formula += model.gguf->pairedRope
                ? "  (the GGUF file stores q and k for pairs (x₂ⱼ, x₂ⱼ₊₁), llama.cpp's convention for its llama "
                  "architecture; they were put back in this order when it was read)"
                : "  (as the GGUF file stores them: llama.cpp's NeoX convention, pairs half a head apart)";
        rotatedPairs(out, model, trace, tokens, layer, head, query, stack, padding);
    } else if (model.config.biasesScores())
        scoreTerm(out, model, trace, tokens, layer, head, stack);
    else
        out.formula = "X₀ = E: no positions (a causal mask only says which tokens came before)";
    return out;
}

} // namespace atlas
