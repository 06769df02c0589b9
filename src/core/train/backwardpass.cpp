#include "train/backwardpass.h"

#include "engine/feedforward.h"

#include "ops/ops.h"
#include "trace/allocationrecorder.h"
#include "trace/names.h"
#include "util/error.h"

#include <cmath>

namespace atlas {

BackwardPass::BackwardPass(const Model &model, const Input &input, Gradients &g, int ffnChunks)
    : m_model(model)
    , m_c(model.config)
    , m_input(input)
    , m_g(g)
    , m_ffnChunks(ffnChunks)
    , T(static_cast<int64_t>(input.tokens.size()))
{
    if (m_c.isEncoderDecoder())
        startStack(names::kDecoderStack);
    MemoryScope scope(MemoryPhase::Backward, -1, "gradients", MemoryCategory::Gradients);
    for (const auto &[name, p] : model.parameters()) {
        auto it = m_g.grads.find(name);
        if (it == m_g.grads.end())
            m_g.grads.emplace(name, Tensor(p->shape()));
        else if (it->second.shape() != p->shape())
            throw Error("gradient '" + name + "' has shape " + it->second.shapeString() + ", its parameter "
                + p->shapeString());
    }
}

void BackwardPass::layernorm(
    Tensor &din, const std::string &param, const Tensor &dout, const Tensor &in, const Tensor &weight)
{
    if (m_c.norm == NormKind::RmsNorm)
        return ops::rmsnorm_backward(din, grad(param + ".weight"), dout, in, weight, m_c.lnEpsilon);
    ops::layernorm_backward(din, grad(param + ".weight"), grad(param + ".bias"), dout, in, weight, m_c.lnEpsilon);
}

std::string BackwardPass::normParam(int i, int which) const
{
    if (m_c.family == Family::T5) // layer.0 self-attention, layer.1 cross-attention (decoder), then the feed-forward
        return t5Layer(i) + (which == 1 ? "0" : which == 3 || m_source ? "1" : "2") + ".layer_norm";
    if (m_c.family == Family::Llama || m_c.family == Family::GptNeoX)
        return "layers." + std::to_string(i) + (which == 1 ? ".input_layernorm" : ".post_attention_layernorm");
    if (m_c.family == Family::Bert)
        return bertLayer(i) + (which == 1 ? "attention.output.LayerNorm" : "output.LayerNorm");
    return paramName(i) + (which == 1 ? "ln_1" : which == 3 ? "ln_cross_attn" : "ln_2");
}

std::string BackwardPass::embeddingParam() const
{
    switch (m_c.family) {
    case Family::Llama:
        return "embed_tokens.weight";
    case Family::GptNeoX:
        return "embed_in.weight";
    case Family::Bert:
        return "embeddings.word_embeddings.weight";
    case Family::T5:
        return "shared.weight";
    default:
        return "wte.weight";
    }
}

std::string BackwardPass::projection(int i, Projection which) const
{
    static constexpr const char *bert[] = {"attention.self.query", "attention.self.key", "attention.self.value", "",
        "attention.output.dense", "intermediate.dense", "output.dense", ""};
    static constexpr const char *neo[] = {"attn.attention.q_proj", "attn.attention.k_proj", "attn.attention.v_proj", "",
        "attn.attention.out_proj", "mlp.c_fc", "mlp.c_proj", ""};
    static constexpr const char *neox[]
        = {"", "", "", "attention.query_key_value", "attention.dense", "mlp.dense_h_to_4h", "mlp.dense_4h_to_h", ""};
    static constexpr const char *t5[] = {"0.SelfAttention.q", "0.SelfAttention.k", "0.SelfAttention.v", "",
        "0.SelfAttention.o", "DenseReluDense.wi", "DenseReluDense.wo", "DenseReluDense.wi_0", "1.EncDecAttention.q",
        "1.EncDecAttention.k", "1.EncDecAttention.v", "1.EncDecAttention.o"};
    static constexpr const char *llama[] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "",
        "self_attn.o_proj", "mlp.up_proj", "mlp.down_proj", "mlp.gate_proj"};
    const size_t k = size_t(which);
    if (which >= Projection::CrossQ && m_c.family != Family::T5)
        throw Error("backward: only T5's cross-attention is in nn.Linear layout");
    const std::string layer = "layers." + std::to_string(i) + ".";
    switch (m_c.family) {
    case Family::Bert:
        return bertLayer(i) + bert[k];
    case Family::GptNeo:
        return "h." + std::to_string(i) + "." + neo[k];
    case Family::GptNeoX:
        return layer + neox[k];
    case Family::T5: {
        const bool ffn = which == Projection::Up || which == Projection::Down || which == Projection::Gate;
        const std::string name = which == Projection::Up && m_c.gatedFfn ? "DenseReluDense.wi_1" : t5[k];
        return t5Layer(i) + (ffn ? (m_source ? "1." : "2.") : "") + name;
    }
    default:
        return layer + llama[k];
    }
}

Tensor *BackwardPass::biasGrad(const std::string &module)
{
    const auto it = m_g.grads.find(module + ".bias");
    return it == m_g.grads.end() ? nullptr : &it->second;
}

// A linear-layout module y = x Wᵀ (+ b) named `module`: dx += dy W, and its weight's and bias's gradients.
void BackwardPass::linearBackward(
    Tensor &dx, const std::string &module, const Tensor &dy, const Tensor &x, const Tensor &weight)
{
    ops::linear_t_backward(dx, grad(module + ".weight"), biasGrad(module), dy, x, weight);
}

// BERT's masked-LM head: logits = LN_t(GELU(X W_tᵀ + b_t)) W_teᵀ + b_out, the embedding tied. Returns dX (T,D).
Tensor BackwardPass::bertHead(const Tensor &dlogits)
{
    const int64_t D = m_c.dModel;
    Tensor dlnf({T, D}), dact({T, D}), ddense({T, D}), dx({T, D});
    BackwardStep step(m_s, -1, "MLM head");
    ops::logits_backward(dlnf, grad(embeddingParam()), dlogits, act("ln_f"), m_model.wte);
    RowVectorMap(grad("cls.predictions.bias").data(), m_c.vocab) += dlogits.matrix().colwise().sum();
    const std::string t = "cls.predictions.transform.";
    ops::layernorm_backward(dact, grad(t + "LayerNorm.weight"), grad(t + "LayerNorm.bias"), dlnf, act("head.act"),
        m_model.lnfWeight, m_c.lnEpsilon);
    ops::activation_backward(ddense, dact, act("head.dense"), m_c.activation);
    ops::linear_t_backward(dx, grad(t + "dense.weight"), &grad(t + "dense.bias"), ddense,
        act(names::residualStream(m_s, m_c.layers)), m_model.headDenseWeight);
    return dx;
}

Tensor BackwardPass::head(const std::vector<int> &targets)
{
    const Tensor &logits = act("logits");
    if (logits.shape() != Shape {T, m_c.vocab})
        throw Error("backward: the trace's logits are " + logits.shapeString() + ", not [" + std::to_string(T) + ", "
            + std::to_string(m_c.vocab) + "]: the trace is not of this model and input");
    Tensor dlnf({T, m_c.dModel});
    {
        BackwardStep step(m_s, -1, "logits");
        Tensor losses({T});
        m_g.loss += ops::crossentropy_forward(losses, logits, targets);
        Tensor dlogits(logits.shape()); // (T,V)
        ops::crossentropy_softmax_backward(dlogits, act("next_probs"), targets);
        if (m_c.family == Family::Bert)
            return bertHead(dlogits);
        if (const float scale = m_c.outputScale(); scale != 1.0f) // Z = (s · ln_f) Wᵀ: s scales both gradients
            dlogits.matrix() *= scale;
        const std::string untied = m_c.family == Family::GptNeoX ? "embed_out.weight" : "lm_head.weight";
        ops::logits_backward(
            dlnf, grad(m_c.tiedHead ? embeddingParam() : untied), dlogits, act("ln_f"), m_model.outputWeight());
    }
    BackwardStep step(m_s, -1, "ln_f");
    Tensor dx({T, m_c.dModel});
    const std::string in = m_c.reversible ? names::streamMean() : names::residualStream(m_s, m_c.layers);
    const std::string norm = m_c.family == Family::Llama ? "norm"
        : m_c.family == Family::GptNeoX                  ? "final_layer_norm"
        : m_c.family == Family::T5                       ? "decoder.final_layer_norm"
                                                         : "ln_f";
    layernorm(dx, norm, dlnf, act(in), m_model.lnfWeight);
    return dx;
}

void BackwardPass::streamMean(const Tensor &dmean, Tensor &dy1, Tensor &dy2)
{
    BackwardStep step(m_s, -1, names::streamMean());
    ops::average_backward(dy1, dy2, dmean);
}

Tensor BackwardPass::block(int i, const Tensor &dout)
{
    if (m_c.funnel.active() && i == m_c.funnel.skipLayer() && m_dFunnelSkip.numel() > 0) {
        Tensor d = copyOf(dout, i, "out"); // the skip layer's output also went into the upsampled stream
        d.matrix() += m_dFunnelSkip.matrix();
        m_dFunnelSkip = Tensor();
        return blockPre(i, d);
    }
    if (m_c.parallelResidual)
        return blockParallel(i, dout);
    return m_c.layerNorm == LayerNormPlacement::Pre ? blockPre(i, dout) : blockPost(i, dout);
}

Tensor BackwardPass::blockParallel(int i, const Tensor &dout)
{
    const Tensor &x = act(names::residualStream(m_s, i));
    Tensor dx = copyOf(dout, i, "out"); // out = x + F(x) + G(x)
    mlpSublayer(i, dout, x, dx);
    attentionSublayer(i, dout, x, dx);
    return dx;
}

Tensor BackwardPass::blockPre(int i, const Tensor &dout)
{
    const bool cross = m_s == names::kDecoderStack;
    const std::string p = layerName(i);
    Tensor dmid = copyOf(dout, i, "out"); // out = mid + G(mid), mid_cross in a decoder block with cross-attention
    mlpSublayer(i, dout, act(p + (cross ? "mid_cross" : "mid")), dmid);
    if (cross) { // mid_cross = mid + Cross(LN_c(mid), Z)
        Tensor dx = copyOf(dmid, i, "mid_cross");
        crossAttentionSublayer(i, dmid, act(p + "mid"), dx);
        dmid = std::move(dx);
    }
    if (m_c.funnel.poolsAt(i))
        return pooledAttentionSublayer(i, dmid);
    Tensor dx = copyOf(dmid, i, "mid"); // mid = x + F(x)
    attentionSublayer(i, dmid, act(blockInput(i)), dx);
    return m_c.funnel.upsamplesAt(i) ? upsampleBackward(i, dx) : dx;
}

void BackwardPass::startStack(const names::Stack &stack)
{
    m_s = stack;
    m_source = stack == names::kEncoderStack;
    m_causal = !m_source && m_c.causal;
    T = static_cast<int64_t>((m_source ? m_input.source : m_input.tokens).size());
    if (stack == names::kDecoderStack) {
        BackwardStep step(m_s, -1, "cross-attention");
        m_dEncoderOutput = Tensor({static_cast<int64_t>(m_input.source.size()), m_c.dModel});
    }
}

// dF is (T,D), the gradient of cross.out; x is mid (T,D); adds into dx (T,D), and into the gradient of the
// encoder's output Z (S,D), which every decoder block reads.
void BackwardPass::crossAttentionSublayer(int i, const Tensor &dF, const Tensor &x, Tensor &dx)
{
    const std::string p = layerName(i), h = paramName(i), c = p + "cross.", w = h + "crossattention.";
    const BlockWeights &b = m_model.blocks[size_t(i)];
    const int64_t H = m_c.heads, I = m_c.innerDim(), d = m_c.headDim(), S = m_dEncoderOutput.dim(0);
    const bool linear = m_c.linearLayout(); // T5's EncDecAttention: q, k, v, o without biases
    const Tensor &probs = act(c + "probs");
    Tensor dctx({H, T, d});
    {
        BackwardStep step(m_s, i, "cross.out");
        Tensor dmerged({T, I});
        if (linear)
            linearBackward(dmerged, projection(i, Projection::CrossOut), dF, act(c + "merged"), b.crossProjWeight);
        else
            ops::linear_backward(
                dmerged, grad(w + "c_proj.weight"), grad(w + "c_proj.bias"), dF, act(c + "merged"), b.crossProjWeight);
        ops::merge_heads_backward(dctx, dmerged);
    }
    Tensor dscores({H, T, S}), dv({H, S, d});
    {
        BackwardStep step(m_s, i, "cross.probs");
        Tensor dprobs({H, T, S}), dmasked({H, T, S});
        ops::attention_context_backward(dprobs, dv, dctx, probs, act(c + "v"));
        ops::softmax_backward(dmasked, dprobs, probs);
        ops::attention_mask_backward(dscores, dmasked, false, m_input.sourcePadding);
    }
    Tensor dln({T, m_c.dModel});
    {
        BackwardStep step(m_s, i, "cross.qkv");
        Tensor dq({H, T, d}), dk({H, S, d}), dquery({T, I});
        ops::attention_scores_backward(dq, dk, dscores, act(c + "q"), act(c + "k"), scoreScale());
        ops::split_heads_backward(dquery, {&dq});
        const Tensor &z = act(names::encoderOutput());
        if (linear) {
            Tensor dK({S, I}), dV({S, I});
            ops::split_heads_backward(dK, {&dk});
            ops::split_heads_backward(dV, {&dv});
            linearBackward(dln, projection(i, Projection::CrossQ), dquery, act(p + "ln_cross"), b.crossQWeight);
            linearBackward(m_dEncoderOutput, projection(i, Projection::CrossK), dK, z, b.crossKWeight);
            linearBackward(m_dEncoderOutput, projection(i, Projection::CrossV), dV, z, b.crossVWeight);
        } else {
            Tensor dkv({S, 2 * I});
            ops::split_heads_backward(dkv, {&dk, &dv});
            ops::linear_backward(
                dln, grad(w + "q_attn.weight"), grad(w + "q_attn.bias"), dquery, act(p + "ln_cross"), b.crossQWeight);
            ops::linear_backward(
                m_dEncoderOutput, grad(w + "c_attn.weight"), grad(w + "c_attn.bias"), dkv, z, b.crossKvWeight);
        }
    }
    BackwardStep step(m_s, i, "ln_cross");
    layernorm(dx, normParam(i, 3), dln, x, b.lnCrossWeight);
}

Tensor BackwardPass::encoderOutput()
{
    BackwardStep step(m_s, -1, names::encoderOutput());
    Tensor dx({T, m_c.dModel});
    const std::string norm
        = m_c.family == Family::T5 ? "encoder.final_layer_norm" : std::string(names::kEncoderStack.parameters) + "ln_f";
    layernorm(dx, norm, m_dEncoderOutput, act(names::residualStream(m_s, m_c.encoderLayers)), m_model.encoderLnfWeight);
    return dx;
}

Tensor BackwardPass::blockPost(int i, const Tensor &dout)
{
    const std::string p = layerName(i), h = paramName(i);
    const BlockWeights &b = blocks()[static_cast<size_t>(i)];
    Tensor dresid({T, m_c.dModel});
    {
        BackwardStep step(m_s, i, "out");
        layernorm(dresid, normParam(i, 2), dout, act(p + "resid"), b.ln2Weight);
    }
    Tensor dln1({T, m_c.dModel}), ddown({T, m_c.dModel});
    {
        BackwardStep step(m_s, i, "resid");
        ops::add_backward(dln1, ddown, dresid);
    }
    mlp(i, ddown, act(p + "ln_1"), dln1); // ln_1 feeds both the MLP and the residual: both add into dln1
    Tensor dmid({T, m_c.dModel}), dx({T, m_c.dModel}), dattn({T, m_c.dModel});
    {
        BackwardStep step(m_s, i, "ln_1");
        layernorm(dmid, normParam(i, 1), dln1, act(p + "mid"), b.ln1Weight);
        ops::add_backward(dx, dattn, dmid);
    }
    attention(i, dattn, act(names::residualStream(m_s, i)), dx);
    return dx;
}

void BackwardPass::blockReversible(int i, Tensor &dy1, Tensor &dy2)
{
    // Y₂ = X₂ + G(Y₁): dX₂ = dY₂ + …, dY₁ += dY₂·∂G/∂Y₁.
    mlpSublayer(i, dy2, act(layerName(i) + "out1"), dy1);
    // Y₁ = X₁ + F(X₂): dX₁ = dY₁, dX₂ += dY₁·∂F/∂X₂.
    attentionSublayer(i, dy1, act(names::reversibleStream(i, 2)), dy2);
}

Tensor BackwardPass::streamsStart(const Tensor &dx1, const Tensor &dx2)
{
    BackwardStep step(m_s, -1, names::stackTensor(m_s, "input"));
    Tensor dx(dx1.shape());
    ops::add_forward(dx, dx1, dx2);
    return dx;
}

void BackwardPass::attentionSublayer(int i, const Tensor &dF, const Tensor &x, Tensor &dx)
{
    Tensor dln1({T, m_c.dModel});
    attention(i, dF, act(layerName(i) + "ln_1"), dln1);
    BackwardStep step(m_s, i, "ln_1");
    layernorm(dx, normParam(i, 1), dln1, x, blocks()[size_t(i)].ln1Weight);
}

void BackwardPass::mlpSublayer(int i, const Tensor &dG, const Tensor &y, Tensor &dy)
{
    Tensor dln2({T, m_c.dModel});
    mlp(i, dG, act(layerName(i) + "ln_2"), dln2);
    BackwardStep step(m_s, i, "ln_2");
    layernorm(dy, normParam(i, 2), dln2, y, blocks()[size_t(i)].ln2Weight);
}

// dout is (T,D), the gradient of attn.out; in is (T,D), the input of attn.qkv; adds d in into din (T,D).
void BackwardPass::attention(
    int i, const Tensor &dout, const Tensor &in, Tensor &din, const Tensor *queryIn, Tensor *dqueryIn)
{
    const std::string p = layerName(i), h = paramName(i);
    const BlockWeights &b = blocks()[static_cast<size_t>(i)];
    const int64_t H = m_c.heads, d = m_c.headDim();
    const Tensor &probs = act(p + "attn.probs");
    const bool linear = m_c.linearLayout();
    Tensor dctx({H, T, d});
    {
        BackwardStep step(m_s, i, "attn.out");
        Tensor dmerged({T, m_c.innerDim()}); // the heads side by side: H·d, d_model unless head_dim says otherwise
        if (linear)
            linearBackward(dmerged, projection(i, Projection::Out), dout, act(p + "attn.merged"), b.oWeight);
        else
            ops::linear_backward(dmerged, grad(h + "attn.c_proj.weight"), grad(h + "attn.c_proj.bias"), dout,
                act(p + "attn.merged"), b.attnProjWeight);
        ops::merge_heads_backward(dctx, dmerged);
    }
    Tensor dscores({H, T, T}), dv({H, T, d});
    {
        BackwardStep step(m_s, i, "attn.probs");
        Tensor dprobs({H, T, T});
        ops::attention_context_backward(dprobs, dv, dctx, probs, act(p + "attn.v"));
        Tensor dmasked({H, T, T});
        normaliserBackward(i, dmasked, dprobs, probs);
        ops::attention_mask_backward(dscores, dmasked, m_causal, m_source ? m_input.sourcePadding : m_input.padding);
    }
    BackwardStep step(m_s, i, "attn.qkv");
    Tensor dq({H, T, d}), dk({H, T, d});
    const float scale = scoreScale();
    if (m_c.rotatesQueriesAndKeys()) { // S = R(Q) R(K)ᵀ/√d: back through the scores, then the rotation
        const ops::RopeStyle style
            = m_c.positions == PositionKind::Rope ? ops::RopeStyle::Interleaved : ops::RopeStyle::RotateHalf;
        Tensor dqRot({H, T, d}), dkRot({H, T, d});
        ops::attention_scores_backward(
            dqRot, dkRot, dscores, act(names::queriesOf(m_s, i, true)), act(names::keysOf(m_s, i, true)), scale);
        ops::rope_backward(dq, dqRot, style, m_c.ropeFrequencies());
        ops::rope_backward(dk, dkRot, style, m_c.ropeFrequencies());
    } else {
        ops::attention_scores_backward(dq, dk, dscores, act(p + "attn.q"), act(p + "attn.k"), scale);
    }
    // The position term B was added to the scores: dB = dS.
    if (m_c.positions == PositionKind::T5) // a T5 checkpoint's stacks each have a table in their block 0
        ops::t5_bias_backward(
            grad(m_c.family == Family::T5 ? t5Layer(0) + "0.SelfAttention.relative_attention_bias.weight"
                                          : "relative_attention_bias.weight"),
            dscores, !m_causal, m_c.relativeMaxDistance);
    else if (m_c.positions == PositionKind::Shaw)
        ops::shaw_bias_backward(dq,
            grad(m_c.family == Family::Bert ? bertLayer(i) + "attention.self.distance_embedding.weight"
                                            : h + "attn.relative_key.weight"),
            dscores, act(p + "attn.q"), b.relativeKey, m_c.relativeClip, scale, m_c.relativeKeySign);
    if (m_c.sinkhorn.active())
        sortingNetworkBackward(i, din);
    if (queryIn)
        return pooledProjectionsBackward(i, dq, dk, dv, in, din, *queryIn, *dqueryIn);
    if (m_c.family == Family::GptNeoX)
        return fusedProjectionsBackward(i, dq, dk, dv, in, din);
    if (linear)
        return linearLayoutProjectionsBackward(i, dq, dk, dv, in, din);
    Tensor dqkv({T, 3 * m_c.innerDim()});
    ops::split_heads_backward(dqkv, dq, dk, dv);
    ops::linear_backward(din, grad(h + "attn.c_attn.weight"), grad(h + "attn.c_attn.bias"), dqkv, in, b.attnWeight);
}

// Softmax's backward, or the sparse normaliser's (ops::entmax_backward); a learned α also gets its gradient, through
// α = 1 + σ(a): dα/da = σ(a)(1 − σ(a)) = (α − 1)(2 − α).
void BackwardPass::normaliserBackward(int i, Tensor &dmasked, const Tensor &dprobs, const Tensor &probs)
{
    if (m_c.sinkhorn.active())
        return sinkhornBackward(i, dmasked, dprobs);
    if (m_c.adaptiveSpan())
        return adaptiveSpanBackward(i, dmasked, dprobs, probs);
    const std::vector<float> alpha = m_model.attentionAlphas(i);
    if (alpha.empty())
        return ops::softmax_backward(dmasked, dprobs, probs);
    if (m_c.normaliser != Normaliser::LearnedEntmax)
        return ops::entmax_backward(dmasked, nullptr, dprobs, probs, alpha);
    std::vector<float> dalpha(alpha.size(), 0.0f);
    ops::entmax_backward(dmasked, &dalpha, dprobs, probs, alpha);
    Tensor &da = grad(paramName(i) + "attn.alpha_logit");
    for (size_t h = 0; h < alpha.size(); ++h)
        da.data()[h] += dalpha[h] * (alpha[h] - 1.0f) * (2.0f - alpha[h]);
}

// Adaptive span: the scores' gradient as softmax's, each head's span z_h through the mask's ramp, and the penalty
// λ · mean_h z_h of this layer; v_h = z_h / n_positions is the parameter, so ∂L/∂v_h = n_positions · ∂L/∂z_h.
void BackwardPass::adaptiveSpanBackward(int i, Tensor &dmasked, const Tensor &dprobs, const Tensor &probs)
{
    const std::vector<float> spans = m_model.attentionSpans(i);
    std::vector<float> dspans(spans.size(), 0.0f);
    ops::span_softmax_backward(
        dmasked, dspans, dprobs, probs, act(layerName(i) + "attn.span_mask"), float(m_c.spanRamp));
    const float heads = float(spans.size()), S = float(m_c.context);
    Tensor &dv = grad(paramName(i) + "attn.span_fraction");
    for (size_t h = 0; h < spans.size(); ++h) {
        dv.data()[h] += S * (dspans[h] + m_c.spanPenalty / heads);
        m_g.spanLoss += m_c.spanPenalty * spans[h] / heads;
    }
}

// The Llama family's split handed query head h the K/V head ⌊h / (H/Hkv)⌋ (repeat_kv): a K/V head's gradient is the
// sum of its query heads'. Then back through q_proj, k_proj and v_proj into din.
void BackwardPass::linearLayoutProjectionsBackward(
    int i, const Tensor &dq, const Tensor &dk, const Tensor &dv, const Tensor &in, Tensor &din)
{
    const BlockWeights &b = blocks()[size_t(i)];
    const int64_t H = m_c.heads, d = m_c.headDim(), Hkv = m_c.kvHeadCount(), group = H / Hkv;
    Tensor dQ({T, H * d}), dK({T, Hkv * d}), dV({T, Hkv * d});
    for (int64_t h = 0; h < H; ++h) {
        dQ.matrix().block(0, h * d, T, d) = dq.slice(h);
        dK.matrix().block(0, (h / group) * d, T, d) += dk.slice(h);
        dV.matrix().block(0, (h / group) * d, T, d) += dv.slice(h);
    }
    linearBackward(din, projection(i, Projection::Q), dQ, in, b.qWeight);
    linearBackward(din, projection(i, Projection::K), dK, in, b.kWeight);
    linearBackward(din, projection(i, Projection::V), dV, in, b.vWeight);
}

// GPT-NeoX's query_key_value holds, for each head h in turn, its query, key and value (programattention.cpp).
void BackwardPass::fusedProjectionsBackward(
    int i, const Tensor &dq, const Tensor &dk, const Tensor &dv, const Tensor &in, Tensor &din)
{
    const int64_t H = m_c.heads, d = m_c.headDim();
    Tensor dqkv({T, 3 * H * d});
    for (int64_t h = 0; h < H; ++h) {
        dqkv.matrix().block(0, 3 * h * d, T, d) = dq.slice(h);
        dqkv.matrix().block(0, (3 * h + 1) * d, T, d) = dk.slice(h);
        dqkv.matrix().block(0, (3 * h + 2) * d, T, d) = dv.slice(h);
    }
    linearBackward(din, projection(i, Projection::Qkv), dqkv, in, m_model.blocks[size_t(i)].qkvWeight);
}

// ddown is (T,D), the gradient of mlp.down; in is (T,D), the input of mlp.up; adds d in into din (T,D).
void BackwardPass::mlp(int i, const Tensor &ddown, const Tensor &in, Tensor &din)
{
    if (m_c.isMoeLayer(i))
        return mixtureOfExperts(i, ddown, in, din);
    BackwardStep step(m_s, i, "mlp");
    if (m_ffnChunks <= 1) {
        const std::string p = layerName(i);
        denseMlp(
            i, ddown, in, din, {m_c.gatedFfn ? act(p + "mlp.gate") : Tensor(), act(p + "mlp.up"), act(p + "mlp.act")});
        return;
    }
    // Reformer's chunks: each chunk's activations recomputed from its rows, then backpropagated; the weights'
    // gradients add up over the chunks.
    const BlockWeights &b = blocks()[static_cast<size_t>(i)];
    for (int chunk = 0; chunk < m_ffnChunks; ++chunk) {
        const auto [begin, end] = ops::chunk_rows(T, m_ffnChunks, chunk);
        if (begin == end)
            continue;
        const Tensor x = copyRows(in, begin, end);
        Tensor dx(x.shape());
        denseMlp(i, copyRows(ddown, begin, end), x, dx, feedForwardActivations(m_c, b, x));
        din.matrix().middleRows(begin, end - begin) += dx.matrix();
    }
}

// A dense feed-forward's backward on the rows of `in`, from its activations a (engine/feedforward.h).
void BackwardPass::denseMlp(int i, const Tensor &ddown, const Tensor &in, Tensor &din, const FeedForwardActivations &a)
{
    const std::string h = paramName(i);
    const BlockWeights &b = blocks()[static_cast<size_t>(i)];
    Tensor dact(a.up.shape()), dup(a.up.shape());
    if (m_c.gatedFfn) { // SwiGLU: M = (act(X W_gateᵀ) ⊙ X W_upᵀ) W_downᵀ
        Tensor dgate(a.up.shape());
        linearBackward(dact, projection(i, Projection::Down), ddown, a.act, b.downWeight);
        ops::gated_activation_backward(dgate, dup, dact, a.gate, a.up, m_c.activation);
        linearBackward(din, projection(i, Projection::Gate), dgate, in, b.gateWeight);
        linearBackward(din, projection(i, Projection::Up), dup, in, b.upWeight);
        return;
    }
    if (m_c.linearLayout()) { // BERT's intermediate and output.dense, GPT-Neo's c_fc and c_proj, GPT-NeoX's 4h
        linearBackward(dact, projection(i, Projection::Down), ddown, a.act, b.downWeight);
        ops::activation_backward(dup, dact, a.up, m_c.activation);
        linearBackward(din, projection(i, Projection::Up), dup, in, b.upWeight);
        return;
    }
    ops::linear_backward(
        dact, grad(h + "mlp.c_proj.weight"), grad(h + "mlp.c_proj.bias"), ddown, a.act, b.fcProjWeight);
    ops::activation_backward(dup, dact, a.up, m_c.activation);
    ops::linear_backward(din, grad(h + "mlp.c_fc.weight"), grad(h + "mlp.c_fc.bias"), dup, in, b.fcWeight);
}

void BackwardPass::embeddings(const Tensor &dinput)
{
    BackwardStep step(m_s, -1, names::stackTensor(m_s, "input"));
    Tensor dembed(dinput.shape()), dpos(dinput.shape());
    if (m_c.family == Family::Bert) { // input = LN_e(E + P + S), S the segment's embedding (A, or B of a pair)
        Tensor dsum(dinput.shape());
        ops::layernorm_backward(dsum, grad("embeddings.LayerNorm.weight"), grad("embeddings.LayerNorm.bias"), dinput,
            act("embed.sum"), m_model.embedLnWeight, m_c.lnEpsilon);
        ops::embedding_backward(grad(embeddingParam()), dsum, m_input.tokens);
        if (m_c.positions == PositionKind::Learned) // relative_key adds no absolute positions
            ops::positions_learned_backward(grad("embeddings.position_embeddings.weight"), dsum);
        const std::vector<int> types = m_c.segmentsOf(m_input.tokens);
        MatrixMap dtypes = grad("embeddings.token_type_embeddings.weight").matrix();
        for (int64_t t = 0; t < T; ++t)
            dtypes.row(types[size_t(t)]) += dsum.matrix().row(t);
        return;
    }
    ops::add_backward(dembed, dpos, dinput);
    if (m_c.embeddingScale != 1.0f) // E = s · W_te[ids]
        dembed.matrix() *= m_c.embeddingScale;
    ops::embedding_backward(grad(embeddingParam()), dembed, m_source ? m_input.source : m_input.tokens);
    if (m_c.positions == PositionKind::Learned)
        ops::positions_learned_backward(grad("wpe.weight"), dpos);
}

Tensor BackwardPass::copyOf(const Tensor &t, int layer, std::string_view op)
{
    BackwardStep step(m_s, layer, op);
    Tensor copy(t.shape());
    std::copy(t.data(), t.data() + t.numel(), copy.data());
    return copy;
}

} // namespace atlas
