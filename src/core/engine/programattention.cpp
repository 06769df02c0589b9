#include "engine/programbuilder.h"

#include "engine/blockcomponents.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

// Kernels with random parts (LSH rotations, BigBird's random blocks, Linformer's E, Performer's features)
// draw them from `seed`: offset it per layer and head so that heads do not share their randomness.
attention::AttentionKernelSpec seededForHead(attention::AttentionKernelSpec spec, int layer, int head, int heads)
{
    const std::vector<attention::KernelParam> &params = attention::attentionKernel(spec.kind).params;
    if (std::any_of(params.begin(), params.end(),
            [](const attention::KernelParam &p) { return p.type == attention::KernelParamType::Seed; })) {
        const auto it = spec.params.find("seed");
        const long base = it == spec.params.end() ? 0 : std::stol(it->second);
        spec.params["seed"] = std::to_string(base + long(layer) * heads + head);
    }
    return spec;
}

} // namespace

void ProgramBuilder::attention(int i, const std::string &in, const std::string &queryIn)
{
    if (!queryIn.empty())
        pooledQueryProjections(i, in, queryIn);
    else
        qkvProjections(i, in);
    if (m_c.qkNorm != QkNorm::None)
        qkNorm(i);
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t D = m_c.dModel;
    if (m_c.rotates(i))
        rotary(i);
    if (const attention::AttentionKernelSpec *kernel = m_input.kernelFor(i)) {
        if (m_c.normaliser != Normaliser::Softmax)
            throw Error("layer " + std::to_string(i) + ": the " + kernel->kind + " kernel approximates softmax "
                + "attention, and this model normalises with " + normaliserName(m_c.normaliser)
                + ": run it with full attention");
        if (m_c.biasesScores())
            throw Error("layer " + std::to_string(i) + ": the " + kernel->kind + " kernel cannot add "
                + positionKindName(m_c.positions)
                + "'s position term to its scores: run this model with full attention");
        if (!m_c.scaleScores || m_c.windowed(i))
            throw Error("layer " + std::to_string(i) + ": the " + kernel->kind + " kernel computes QKᵀ/√d over every "
                + "earlier key, and this " + m_c.modelType + " layer "
                + (m_c.scaleScores ? "sees a sliding window only" : "does not scale its scores")
                + ": run this model with full attention");
        if (m_c.attentionSoftcap > 0 || m_c.queryScaleBase > 0)
            throw Error("layer " + std::to_string(i) + ": the " + kernel->kind + " kernel computes QKᵀ/√d, and this "
                + m_c.modelType + " model divides by √query_pre_attn_scalar and soft-caps its scores: run it with "
                + "full attention");
        if (m_c.attentionSinks)
            throw Error("layer " + std::to_string(i) + ": the " + kernel->kind + " kernel's softmax has no place for "
                + "this " + m_c.modelType + " model's attention sinks: run it with full attention");
        efficientAttention(i, attention::kernelSpecAtLayer(*kernel, i));
    } else {
        if (m_c.sinkhorn.active())
            sortingNetwork(i, in);
        exactAttention(i);
        if (m_input.retention.eliminatesAfter(i))
            extractTokens(i);
    }
    mergeHeads(i);
    unary(p + "attn.out", "output projection", i, p + "attn.merged", {T, D}, outputFormula(m_c),
        [i, src = m_source](Tensor &o, const Tensor &x, const Model &m) {
            moduleForward(o, x, blockModule(m.config, blocksOf(m, src)[size_t(i)], BlockPart::Out));
        });
}

// The block's Q/K/V projection in its family's layout (engine/blockcomponents.h), then its H heads. With grouped-query
// attention (Ainslie et al. 2023) each K/V head serves H / Hkv query heads: the split hands head h the K/V head
// ⌊h / (H/Hkv)⌋, as Hugging Face's repeat_kv does, so that every later op and view sees H heads; the K/V cache of
// generation stores the Hkv heads only.
void ProgramBuilder::qkvProjections(int i, const std::string &in)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    unary(p + "attn.qkv", "Q/K/V projection", i, in, {T, qkvWidth(m_c)}, qkvFormula(m_c),
        [i, src = m_source](
            Tensor &o, const Tensor &x, const Model &m) { projectQkv(o, x, m.config, blocksOf(m, src)[size_t(i)]); });
    const QkvSplitFormulas split = splitFormulas(m_c);
    add(p + "split", "split heads", i, {p + "attn.qkv"},
        {{p + "attn.q", {H, T, d}, split.q}, {p + "attn.k", {H, T, d}, split.k}, {p + "attn.v", {H, T, d}, split.v}},
        [p](const Model &m, const Input &, const Trace &tr) {
            QkvHeads heads = splitQkv(tr.tensor(p + "attn.qkv"), m.config, true);
            return Outputs {std::move(heads.q), std::move(heads.k), std::move(heads.v)};
        });
}

// QK-norm: an RMSNorm of the queries and of the keys, each with a γ of its own, before RoPE: over each head's d
// dimensions (Qwen3), or over the whole projection, a position's heads together (OLMo 2). A query's length then no
// longer grows with its input, so the scores cannot grow without bound (Dehghani et al. 2023 found attention
// entropy collapse without it).
void ProgramBuilder::qkNorm(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    add(p + "qk_norm", "QK-norm (RMSNorm)", i, {p + "attn.q", p + "attn.k"},
        {{p + "attn.q_norm", {H, T, d}, qkNormFormula(m_c, false)},
            {p + "attn.k_norm", {H, T, d}, qkNormFormula(m_c, true)}},
        [p, i, src = m_source](const Model &m, const Input &, const Trace &tr) {
            const BlockWeights &b = blocksOf(m, src)[size_t(i)];
            Tensor q, k;
            qkNormForward(q, tr.tensor(p + "attn.q"), b.normWeight(BlockPart::QNorm), m.config);
            qkNormForward(k, tr.tensor(p + "attn.k"), b.normWeight(BlockPart::KNorm), m.config);
            return Outputs {std::move(q), std::move(k)};
        });
}

// C = [C_1 … C_H]; an ablated head's block holds zeros or its mean instead (engine/headablation.h).
void ProgramBuilder::mergeHeads(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t D = m_c.innerDim(), d = m_c.headDim();
    const std::vector<int> off = m_input.ablation.headsOf(i);
    std::string formula = "C = [C_1 … C_H]", label = "merge heads";
    if (!off.empty()) {
        std::string list;
        for (int h : off)
            list += (list.empty() ? "" : ", ") + std::to_string(h);
        const bool zero = m_input.ablation.mode == HeadAblation::Mode::Zero;
        formula += (off.size() == 1 ? ", head " : ", heads ") + list + (zero ? ": C_h = 0" : ": C_h = mean C_h");
        label += zero ? " (heads off: zero)" : " (heads off: mean)";
    }
    add(p + "attn.merged", label, i, {p + "attn.context"}, {{p + "attn.merged", {T, D}, formula}},
        [p, i, off, d, T = T, D](const Model &, const Input &in, const Trace &tr) {
            Tensor o({T, D});
            ops::merge_heads_forward(o, tr.tensor(p + "attn.context"));
            MatrixMap merged = o.matrix();
            for (int h : off) {
                const HeadAblation::Head *head = in.ablation.find(i, h);
                if (in.ablation.mode == HeadAblation::Mode::Zero)
                    merged.block(0, h * d, merged.rows(), d).setZero();
                else
                    for (int64_t t = 0; t < merged.rows(); ++t)
                        for (int64_t c = 0; c < d; ++c)
                            merged(t, h * d + c) = head->mean[size_t(c)];
            }
            return Outputs {std::move(o)};
        });
}

std::string ProgramBuilder::scoreFormula(int i) const
{
    return std::string(m_c.rotates(i)            ? "S = R(Q_h) R(K_h)ᵀ"
                   : m_c.rotatesQueriesAndKeys() ? "S = Q_h K_hᵀ  (a NoPE layer: q and k are not turned)"
                                                 : "S = Q_h K_hᵀ")
        + (!m_c.scaleScores ? "  (not divided by √d: " + m_c.modelType + " does not scale its scores)"
                : m_c.queryScaleBase > 0
                ? " / √s  (s = " + formulaNumber(m_c.queryScaleBase) + ": query_pre_attn_scalar)"
                : " / √d");
}

std::string ProgramBuilder::keyRule(int i) const
{
    const int window = m_c.windowed(i) ? m_c.slidingWindow : 0;
    return std::string(!m_causal ? "every key"
                   : window > 0  ? "i − " + std::to_string(window) + " < key j ≤ query i (sliding window)"
                                 : "key j ≤ query i")
        + " and j not padding";
}

void ProgramBuilder::exactAttention(int i)
{
    if (m_onDemand)
        return tiledAttention(i);
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    const float scale = scoreScale(m_c);
    const std::string q = scoredQueries(i), k = scoredKeys(i);
    const bool biased = m_c.biasesScores();
    if (biased)
        positionBias(i);
    std::vector<std::string> inputs = {q, k};
    if (biased)
        inputs.push_back(p + "attn.bias");
    const std::string content = scoreFormula(i);
    add(p + "scores", "scores", i, inputs,
        {{p + "attn.scores", {H, T, T}, content + (biased ? " + B" : "") + "  (d = " + std::to_string(d) + ")"}},
        [p, q, k, biased, H, T = T, scale](const Model &, const Input &, const Trace &tr) {
            Tensor s({H, T, T});
            ops::attention_scores_forward(s, tr.tensor(q), tr.tensor(k), scale);
            if (biased)
                ops::add_forward(s, Tensor(s), tr.tensor(p + "attn.bias"));
            return Outputs {std::move(s)};
        });
    // Gemma 2: every score soft-capped before the mask; the mask reads the capped scores.
    std::string scores = p + "attn.scores";
    if (const float cap = m_c.attentionSoftcap; cap > 0) {
        add(p + "softcap", "soft-cap", i, {scores},
            {{p + "attn.capped", {H, T, T},
                "S_c = c · tanh(S / c)  (c = " + formulaNumber(cap)
                    + ", attn_logit_softcapping: every score within ±c)"}},
            [scores, cap](const Model &, const Input &, const Trace &tr) {
                const Tensor &s = tr.tensor(scores);
                Tensor o = Tensor::uninitialized(s.shape());
                ops::softcap_forward(o, s, cap);
                return Outputs {std::move(o)};
            });
        scores = p + "attn.capped";
    }
    const int window = m_c.windowed(i) ? m_c.slidingWindow : 0;
    const std::string rule = keyRule(i);
    // PoWER-BERT: the tokens an earlier layer eliminated are no longer keys (engine/tokenretention.h).
    const std::string present = m_input.retention.eliminatesAfter(i - 1) ? names::layerPrefix(m_s, i - 1) + "kept" : "";
    std::vector<std::string> maskInputs = {scores};
    if (!present.empty())
        maskInputs.push_back(present);
    // A funnel's keys: the tokens present at the stride of the layer's keys (model/funnel.h).
    const int keyStride = m_c.funnel.active() ? m_c.funnel.keyStride(i) : 1;
    const std::string funnelRule = keyStride > 1
        ? " and key j present at stride " + std::to_string(keyStride) + " (j mod " + std::to_string(keyStride)
            + " = 0: the funnel's " + (m_c.funnel.poolsAt(i) ? "unpooled keys" : "pooled tokens") + ")"
        : "";
    add(p + "mask", "mask", i, maskInputs,
        {{p + "attn.masked", {H, T, T},
            "S′ᵢⱼ = Sᵢⱼ if " + rule + funnelRule + (present.empty() ? "" : " and still present (" + present + ")")
                + ", else −∞"}},
        [scores, window, present, keyStride, causal = m_causal, src = m_source](
            const Model &, const Input &in, const Trace &tr) {
            const Tensor &s = tr.tensor(scores);
            Tensor o = Tensor::uninitialized(s.shape()); // attention_mask_forward sets every element
            ops::attention_mask_forward(o, s, causal, paddingOf(in, src));
            if (window > 0)
                ops::sliding_window_mask(o, window);
            ops::funnel_mask_keys(o, keyStride);
            if (!present.empty())
                maskEliminatedKeys(o, tr.tensor(present));
            return Outputs {std::move(o)};
        });
    normaliser(i);
    add(p + "context", "weighted sum of V", i, {p + "attn.probs", p + "attn.v"},
        {{p + "attn.context", {H, T, d}, "C_h = A_h V_h"}},
        [p, H, T = T, d](const Model &, const Input &, const Trace &tr) {
            Tensor o({H, T, d});
            ops::attention_context_forward(o, tr.tensor(p + "attn.probs"), tr.tensor(p + "attn.v"));
            return Outputs {std::move(o)};
        });
}

// attn.masked → attn.probs: softmax, or the model's sparse normaliser (ops::entmax_forward), whose zeros are exact.
void ProgramBuilder::normaliser(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads;
    const auto sparse
        = [i](Tensor &o, const Tensor &x, const Model &m) { ops::entmax_forward(o, x, m.attentionAlphas(i)); };
    switch (m_c.normaliser) {
    case Normaliser::Softmax:
        if (m_c.sinkhorn.active())
            return sinkhornAttention(i);
        if (m_c.adaptiveSpan())
            return adaptiveSpan(i);
        if (m_c.attentionSinks)
            return sinkSoftmax(i);
        unary(p + "attn.probs", "softmax", i, p + "attn.masked", {H, T, T}, "Aᵢⱼ = exp(S′ᵢⱼ) / Σₖ exp(S′ᵢₖ)",
            [](Tensor &o, const Tensor &x, const Model &) { ops::softmax_forward(o, x); });
        return;
    case Normaliser::Sparsemax:
        unary(p + "attn.probs", "sparsemax", i, p + "attn.masked", {H, T, T},
            "Aᵢⱼ = [S′ᵢⱼ − τᵢ]₊, τᵢ such that Σⱼ Aᵢⱼ = 1 (sparsemax: keys below τᵢ get exactly 0)", sparse);
        return;
    case Normaliser::Entmax15:
        unary(p + "attn.probs", "1.5-entmax", i, p + "attn.masked", {H, T, T},
            "Aᵢⱼ = [S′ᵢⱼ / 2 − τᵢ]₊², τᵢ such that Σⱼ Aᵢⱼ = 1 (1.5-entmax: keys below 2τᵢ get exactly 0)", sparse);
        return;
    case Normaliser::LearnedEntmax:
        add(p + "alpha", "α per head", i, {},
            {{p + "attn.alpha", {H}, "α_h = 1 + sigmoid(a_h)  (learned; 1 → softmax, 2 → sparsemax)"}},
            [i](const Model &m, const Input &, const Trace &) {
                const std::vector<float> alpha = m.attentionAlphas(i);
                Tensor o({int64_t(alpha.size())});
                std::copy(alpha.begin(), alpha.end(), o.data());
                return Outputs {std::move(o)};
            });
        add(p + "normalise", "α-entmax", i, {p + "attn.masked", p + "attn.alpha"},
            {{p + "attn.probs", {H, T, T},
                "Aᵢⱼ = [(α_h − 1) S′ᵢⱼ − τᵢ]₊^(1/(α_h − 1)), τᵢ such that Σⱼ Aᵢⱼ = 1 (α-entmax: exact zeros)"}},
            [p](const Model &, const Input &, const Trace &tr) {
                const Tensor &x = tr.tensor(p + "attn.masked"), &alpha = tr.tensor(p + "attn.alpha");
                Tensor o(x.shape());
                ops::entmax_forward(o, x, {alpha.data(), alpha.data() + alpha.numel()});
                return Outputs {std::move(o)};
            });
        return;
    }
}

// gpt-oss's sinks: head h's learned logit z_h joins every row's softmax and keeps its share, with no value to return.
void ProgramBuilder::sinkSoftmax(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads;
    add(p + "normalise", "softmax with a sink", i, {p + "attn.masked"},
        {{p + "attn.probs", {H, T, T},
             "Aᵢⱼ = exp(S′ᵢⱼ) / (Σₖ exp(S′ᵢₖ) + exp(z_h))  (z_h: the head's learned sink logit, self_attn.sinks; a "
             "row sums to 1 − its sink share)"},
            {p + "attn.sink", {H, T}, "the sink's share of row i: exp(z_h) / (Σₖ exp(S′ᵢₖ) + exp(z_h))"}},
        [p, i, H, T = T, src = m_source](const Model &m, const Input &, const Trace &tr) {
            Tensor probs({H, T, T}), share({H, T});
            ops::sink_softmax_forward(
                probs, share, tr.tensor(p + "attn.masked"), blocksOf(m, src)[size_t(i)].weight(BlockPart::Sinks));
            return Outputs {std::move(probs), std::move(share)};
        });
}

// Sukhbaatar et al. 2019: each head's learned span, the soft mask it makes, and softmax weighted by that mask.
void ProgramBuilder::adaptiveSpan(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads;
    const float ramp = float(m_c.spanRamp);
    const std::string R = std::to_string(m_c.spanRamp), S = std::to_string(m_c.context);
    add(p + "span", "span mask", i, {},
        {{p + "attn.span", {H}, "z_h = v_h · " + S + "  (learned, v_h in [0, 1])"},
            {p + "attn.span_mask", {H, T, T},
                "mᵢⱼ = clamp((R + z_h − (i − j)) / R, 0, 1), R = " + R + "  (1 within the span, a ramp of " + R
                    + " tokens, 0 beyond)"}},
        [i, H, T = T, ramp](const Model &m, const Input &, const Trace &) {
            const std::vector<float> spans = m.attentionSpans(i);
            Tensor z({H}), mask({H, T, T});
            std::copy(spans.begin(), spans.end(), z.data());
            ops::span_mask_forward(mask, spans, ramp);
            return Outputs {std::move(z), std::move(mask)};
        });
    add(p + "normalise", "softmax within the span", i, {p + "attn.masked", p + "attn.span_mask"},
        {{p + "attn.probs", {H, T, T}, "Aᵢⱼ = mᵢⱼ exp(S′ᵢⱼ) / Σₖ mᵢₖ exp(S′ᵢₖ)  (keys beyond z_h + R get exactly 0)"}},
        [p](const Model &, const Input &, const Trace &tr) {
            const Tensor &x = tr.tensor(p + "attn.masked");
            Tensor o(x.shape());
            ops::span_softmax_forward(o, x, tr.tensor(p + "attn.span_mask"));
            return Outputs {std::move(o)};
        });
}

// The cos and sin of every position's angles, computed once for the queries and keys of every layer of the stack
// (once more for Gemma 3's windowed layers, which turn with a base of their own).
std::shared_ptr<const RopeTableOnDemand> ProgramBuilder::ropeTable(int layer)
{
    const bool local = m_c.ropeLocalBase > 0 && m_c.windowed(layer);
    std::shared_ptr<const RopeTableOnDemand> &table = local ? m_localRopeTable : m_ropeTable;
    if (!table || table->positions() != T)
        table = std::make_shared<const RopeTableOnDemand>(T, m_c.ropeFrequencies(layer, T), m_c.ropeAmplitude(layer));
    return table;
}

void ProgramBuilder::rotary(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    const ops::RopeStyle style = ropeStyle(m_c);
    const std::string pairs = style == ops::RopeStyle::Interleaved ? "pairs (x₂ⱼ, x₂ⱼ₊₁)"
        : m_c.rotaryDims > 0 ? "pairs (xⱼ, xⱼ₊ᵣ/₂) of the first r = " + std::to_string(m_c.rotaryDims)
            + " of d = " + std::to_string(d) + " dimensions (partial rotary; the rest pass through)"
                             : "pairs (xⱼ, xⱼ₊d/2)";
    const RopeScaling &r = m_c.ropeScaling;
    const std::string exponent = m_c.rotaryDims > 0 ? "^(−2j/r)" : "^(−2j/d)";
    const std::string theta = std::to_string(int64_t(m_c.ropeBase))
        + (r.kind == RopeScaling::Kind::None ? exponent
                : r.kind == RopeScaling::Kind::Linear
                ? exponent + ", each divided by " + formulaNumber(r.factor) + " (linear rope_scaling)"
                : r.kind == RopeScaling::Kind::Llama3 ? " with Llama 3's rope_scaling (factor "
                    + formulaNumber(r.factor) + ": low frequencies divided, the middle band blended)" + exponent
                : r.kind == RopeScaling::Kind::Factors
                ? exponent + " / fⱼ, a factor per pair (the GGUF file's rope_freqs)"
                : r.kind == RopeScaling::Kind::Yarn
                ? exponent + " blended with its value / " + formulaNumber(r.factor)
                    + " by YaRN's ramp (pairs that turn more than " + formulaNumber(r.betaFast) + " times in "
                    + std::to_string(r.originalContext) + " positions keep θⱼ, fewer than " + formulaNumber(r.betaSlow)
                    + " take θⱼ / " + formulaNumber(r.factor) + ")"
                : exponent + " / λⱼ, LongRoPE's " + (T > r.originalContext ? "long" : "short") + " factors (the text's "
                    + std::to_string(T) + " positions " + (T > r.originalContext ? ">" : "≤") + " "
                    + std::to_string(r.originalContext) + ")");
    const double amplitude = m_c.ropeAmplitude(i);
    const std::string times = amplitude != 1.0 ? formulaNumber(amplitude) + "·" : "";
    const std::string scaled = amplitude == 1.0 ? ""
        : r.kind == RopeScaling::Kind::Yarn
        ? "; cos and sin × " + formulaNumber(amplitude) + " (YaRN's attention factor, 0.1 ln s + 1 unless config.json "
            + "gives it; s = " + formulaNumber(r.factor) + ")"
        : "; cos and sin × " + formulaNumber(amplitude)
            + " (LongRoPE's attention factor √(1 + ln s / ln L), s = " + formulaNumber(r.factor) + ")";
    const std::string q = p + (m_c.qkNorm != QkNorm::None ? "attn.q_norm" : "attn.q"),
                      k = p + (m_c.qkNorm != QkNorm::None ? "attn.k_norm" : "attn.k");
    add(p + "rotate", "rotate (RoPE)", i, {q, k},
        {{names::queriesOf(m_s, i, true), {H, T, d},
             times + (m_c.qkNorm != QkNorm::None ? "R(RMS_q(Q)_h): " : "R(Q_h): ") + pairs
                 + " turned by t·θⱼ, θⱼ = " + theta + scaled},
            {names::keysOf(m_s, i, true), {H, T, d},
                times + (m_c.qkNorm != QkNorm::None ? "R(RMS_k(K)_h): " : "R(K_h): ") + pairs
                    + " turned by t·θⱼ, θⱼ = " + theta + scaled}},
        [q, k, style, H, T = T, d, table = ropeTable(i)](const Model &, const Input &, const Trace &tr) {
            Tensor qRot({H, T, d}), kRot({H, T, d});
            ops::rope_forward(qRot, tr.tensor(q), style, table->table());
            ops::rope_forward(kRot, tr.tensor(k), style, table->table());
            return Outputs {std::move(qRot), std::move(kRot)};
        });
}

std::string ProgramBuilder::scoredQueries(int i) const
{
    return names::queriesOf(m_s, i, m_c.rotates(i), m_c.qkNorm != QkNorm::None);
}

std::string ProgramBuilder::scoredKeys(int i) const
{
    return names::keysOf(m_s, i, m_c.rotates(i), m_c.qkNorm != QkNorm::None);
}

void ProgramBuilder::positionBias(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    std::string formula;
    std::vector<std::string> inputs;
    switch (m_c.positions) {
    case PositionKind::Alibi:
        formula = "Bᵢⱼ = −m_h·|i − j|,  m_h = 2^(−8h/H) (ALiBi)";
        break;
    case PositionKind::T5:
        formula = "Bᵢⱼ = b[bucket(j − i), h]  (T5: " + std::to_string(m_c.relativeBuckets) + " buckets, "
            + (m_causal ? "past only" : "both directions") + ", log-spaced up to "
            + std::to_string(m_c.relativeMaxDistance) + ")";
        break;
    default: // Shaw
        formula = m_c.relativeKeySign < 0
            ? "Bᵢⱼ = Q_h,i · e(i − j) / √d  (BERT's relative_key: a learned key per distance, every distance up to ±"
                + std::to_string(m_c.relativeClip) + ")"
            : "Bᵢⱼ = Q_h,i · a_clip(j − i) / √d  (Shaw et al.: a learned key per distance, clipped to ±"
                + std::to_string(m_c.relativeClip) + ")";
        inputs = {p + "attn.q"};
    }
    add(p + "bias", "position bias", i, inputs, {{p + "attn.bias", {H, T, T}, formula}},
        [p, i, H, T = T, d, causal = m_causal, src = m_source](const Model &m, const Input &, const Trace &tr) {
            const ModelConfig &c = m.config;
            Tensor b({H, T, T});
            if (c.positions == PositionKind::Alibi)
                ops::alibi_bias_forward(b);
            else if (c.positions == PositionKind::T5) // a T5 checkpoint's encoder has its own table
                ops::t5_bias_forward(b, src && !m.encoderRelativeBias.empty() ? m.encoderRelativeBias : m.relativeBias,
                    !causal, c.relativeMaxDistance);
            else
                ops::shaw_bias_forward(b, tr.tensor(p + "attn.q"), m.blocks[size_t(i)].weight(BlockPart::RelativeKey),
                    c.relativeClip, 1.0f / std::sqrt(float(d)), 0, c.relativeKeySign);
            return Outputs {std::move(b)};
        });
}

void ProgramBuilder::efficientAttention(int i, const attention::AttentionKernelSpec &spec)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    std::vector<OpOutput> outputs = {{p + "attn.context", {H, T, d},
        "C_h = " + attention::describeAttentionKernel(spec) + " attention of Q_h, K_h, V_h"}};
    std::vector<std::string> extras; // kernel extras kept in the trace, as "layer.i.<kind>.<name>"
    if (m_traced) {
        outputs.push_back({p + "attn.mask", {H, T, T},
            "Mᵢⱼ = 1 where the " + spec.kind + " pattern lets query i attend key j"
                + (attention::attentionKernel(spec.kind).hashes ? " (in any hash round)" : "")});
        outputs.push_back({p + "attn.probs", {H, T, T}, "Aᵢⱼ = the weight of V_j in C_i (effective attention)"});
        if (attention::attentionKernel(spec.kind).hashes) { // its buckets and rotations, for the LSH view
            const attention::LshParams lsh = attention::lshParams(spec);
            outputs.push_back(
                {p + "lsh.buckets", {H, lsh.rounds, T}, "bucket of each token in each hash round: argmax([xR; −xR])"});
            outputs.push_back({p + "lsh.rotations", {H, lsh.rounds, d, std::max(lsh.buckets / 2, 0)},
                "R, a random rotation per round"});
            extras = {"buckets", "rotations"};
        }
    }
    const bool dense = m_traced;
    const std::string qName = scoredQueries(i), kName = scoredKeys(i);
    add(p + "kernel", spec.kind + " attention", i, {qName, kName, p + "attn.v"}, outputs,
        [p, i, spec, dense, extras, qName, kName, H, T = T, d](const Model &m, const Input &in, const Trace &tr) {
            const Tensor &q = tr.tensor(qName), &k = tr.tensor(kName), &v = tr.tensor(p + "attn.v");
            Outputs out(1, Tensor({H, T, d}));
            const attention::AttentionOptions options {m.config.causal, in.padding, dense};
            for (int64_t h = 0; h < H; ++h) {
                const attention::AttentionResult r = attention::attention_kernel_forward(
                    seededForHead(spec, i, int(h), int(H)), q.slice(h), k.slice(h), v.slice(h), options);
                out[0].slice(h) = r.context.matrix();
                if (!dense)
                    continue;
                std::vector<const Tensor *> parts = {&r.mask, &r.weights};
                for (const std::string &e : extras)
                    parts.push_back(&r.extras.at(e));
                for (size_t j = 0; j < parts.size(); ++j) {
                    if (h == 0) {
                        Shape shape = parts[j]->shape();
                        shape.insert(shape.begin(), H);
                        out.emplace_back(shape);
                    }
                    std::copy(parts[j]->data(), parts[j]->data() + parts[j]->numel(),
                        out[j + 1].data() + h * parts[j]->numel());
                }
            }
            return out;
        });
}

// The decoder's queries attend to the encoder's output (Vaswani et al. 2017, §3.2.3), as Hugging Face GPT-2's
// add_cross_attention: X″ = X′ + Cross(LN_c(X′), Z), Z = the encoder's ln_f output; no causal mask (every source
// token is already known), the source's padding masked; no positions inside (each stack added its own).
// A T5 decoder block's is the same with its own layout: nn.Linear q, k, v and o without biases, RMS layer norm, and
// scores not divided by √d.
void ProgramBuilder::crossAttention(int i, const std::string &in)
{
    const std::string p = names::layerPrefix(m_s, i), c = p + "cross.", z = names::encoderOutput();
    const int64_t D = m_c.dModel, H = m_c.heads, d = m_c.headDim(), I = m_c.innerDim();
    const int64_t S = static_cast<int64_t>(m_input.source.size());
    const bool linear = !m_c.fusesCrossKv();
    const std::string norm = m_c.norm == NormKind::RmsNorm ? "RMS_c(X′)" : "LN_c(X′)";
    unary(c + "query", "cross Q projection", i, in, {T, I},
        "Q = " + norm + (linear ? " W_qᵀ" : " W_q + b_q") + "  (decoder side)",
        [i](Tensor &o, const Tensor &x, const Model &m) {
            moduleForward(o, x, blockModule(m.config, m.blocks[size_t(i)], BlockPart::CrossQ));
        });
    unary(c + "kv", "cross K/V projection", i, z, {S, 2 * I},
        std::string(linear ? "[K V] = [Z W_kᵀ  Z W_vᵀ]" : "[K V] = Z W_kv + b_kv") + "  (Z: the encoder's output)",
        [i, linear, I](Tensor &o, const Tensor &x, const Model &m) {
            const BlockWeights &b = m.blocks[size_t(i)];
            if (!linear)
                return moduleForward(o, x, blockModule(m.config, b, BlockPart::CrossKv));
            Tensor k({x.dim(0), I}), v({x.dim(0), I});
            moduleForward(k, x, blockModule(m.config, b, BlockPart::CrossK));
            moduleForward(v, x, blockModule(m.config, b, BlockPart::CrossV));
            o.matrix() << k.matrix(), v.matrix();
        });
    add(c + "split", "split heads", i, {c + "query", c + "kv"},
        {{c + "q", {H, T, d}, "Q_h = Q[:, h·d : (h+1)·d]"}, {c + "k", {H, S, d}, "K_h = K[:, h·d : (h+1)·d]"},
            {c + "v", {H, S, d}, "V_h = V[:, h·d : (h+1)·d]"}},
        [c, H, T = T, S, d](const Model &, const Input &, const Trace &tr) {
            Tensor q({H, T, d}), k({H, S, d}), v({H, S, d});
            ops::split_heads_forward({&q}, tr.tensor(c + "query"), int(H));
            ops::split_heads_forward({&k, &v}, tr.tensor(c + "kv"), int(H));
            return Outputs {std::move(q), std::move(k), std::move(v)};
        });
    const float scale = scoreScale(m_c);
    add(c + "scores", "cross scores", i, {c + "q", c + "k"},
        {{c + "scores", {H, T, S},
            std::string(m_c.scaleScores ? "S = Q_h K_hᵀ / √d" : "S = Q_h K_hᵀ  (not divided by √d)")
                + "  (decoder queries × source keys, d = " + std::to_string(d) + ")"}},
        [c, H, T = T, S, scale](const Model &, const Input &, const Trace &tr) {
            Tensor s({H, T, S});
            ops::attention_scores_forward(s, tr.tensor(c + "q"), tr.tensor(c + "k"), scale);
            return Outputs {std::move(s)};
        });
    add(c + "mask", "cross mask", i, {c + "scores"},
        {{c + "masked", {H, T, S}, "S′ᵢⱼ = Sᵢⱼ if source token j is not padding, else −∞  (no causal mask)"}},
        [c](const Model &, const Input &in, const Trace &tr) {
            const Tensor &s = tr.tensor(c + "scores");
            Tensor o(s.shape());
            ops::attention_mask_forward(o, s, false, in.sourcePadding);
            return Outputs {std::move(o)};
        });
    unary(c + "probs", "cross softmax", i, c + "masked", {H, T, S}, "Aᵢⱼ = exp(S′ᵢⱼ) / Σₖ exp(S′ᵢₖ)",
        [](Tensor &o, const Tensor &x, const Model &) { ops::softmax_forward(o, x); });
    add(c + "context", "weighted sum of source V", i, {c + "probs", c + "v"},
        {{c + "context", {H, T, d}, "C_h = A_h V_h"}}, [c, H, T = T, d](const Model &, const Input &, const Trace &tr) {
            Tensor o({H, T, d});
            ops::attention_context_forward(o, tr.tensor(c + "probs"), tr.tensor(c + "v"));
            return Outputs {std::move(o)};
        });
    unary(c + "merged", "merge heads", i, c + "context", {T, I}, "C = [C_1 … C_H]",
        [](Tensor &o, const Tensor &x, const Model &) { ops::merge_heads_forward(o, x); });
    unary(c + "out", "cross output projection", i, c + "merged", {T, D}, linear ? "O_c = C W_oᵀ" : "O_c = C W_o + b_o",
        [i](Tensor &o, const Tensor &x, const Model &m) {
            moduleForward(o, x, blockModule(m.config, m.blocks[size_t(i)], BlockPart::CrossOut));
        });
}

} // namespace atlas
