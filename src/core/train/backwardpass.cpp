#include "train/backwardpass.h"

#include "ops/ops.h"
#include "trace/allocationrecorder.h"
#include "trace/names.h"
#include "util/error.h"

#include <cmath>

namespace atlas {

namespace {

// The backward of one operation: what it allocates is transient workspace (gradients of activations).
struct Step : MemoryScope
{
    Step(int layer, std::string_view op)
        : MemoryScope(MemoryPhase::Backward, layer, op, MemoryCategory::Workspace)
    {
    }
};

} // namespace

BackwardPass::BackwardPass(const Model &model, const Input &input, Gradients &g, int ffnChunks)
    : m_model(model)
    , m_c(model.config)
    , m_input(input)
    , m_g(g)
    , m_ffnChunks(ffnChunks)
    , T(static_cast<int64_t>(input.tokens.size()))
{
    const bool backward = m_c.family == Family::Gpt2 || m_c.family == Family::Bert
        || (m_c.family == Family::Llama && !m_c.hasExperts());
    if (!backward)
        throw Error("training and the memory lab have backward passes for GPT-2's layout, the Llama family's "
                    "(Llama, Mistral, Qwen2) and BERT's, not for "
            + m_c.modelType + "'s: a " + m_c.modelType + " model runs forward only");
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
    if (m_c.family == Family::Llama)
        return "layers." + std::to_string(i) + (which == 1 ? ".input_layernorm" : ".post_attention_layernorm");
    if (m_c.family == Family::Bert)
        return bertLayer(i) + (which == 1 ? "attention.output.LayerNorm" : "output.LayerNorm");
    return paramName(i) + (which == 1 ? "ln_1" : "ln_2");
}

std::string BackwardPass::embeddingParam() const
{
    return m_c.family == Family::Llama ? "embed_tokens.weight"
        : m_c.family == Family::Bert   ? "embeddings.word_embeddings.weight"
                                       : "wte.weight";
}

// BERT's masked-LM head: logits = LN_t(GELU(X W_tᵀ + b_t)) W_teᵀ + b_out, the embedding tied. Returns dX (T,D).
Tensor BackwardPass::bertHead(const Tensor &dlogits)
{
    const int64_t D = m_c.dModel;
    Tensor dlnf({T, D}), dact({T, D}), ddense({T, D}), dx({T, D});
    Step step(-1, "MLM head");
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
        Step step(-1, "logits");
        Tensor losses({T});
        m_g.loss += ops::crossentropy_forward(losses, logits, targets);
        Tensor dlogits(logits.shape()); // (T,V)
        ops::crossentropy_softmax_backward(dlogits, act("next_probs"), targets);
        if (m_c.family == Family::Bert)
            return bertHead(dlogits);
        ops::logits_backward(dlnf, grad(m_c.tiedHead ? embeddingParam() : "lm_head.weight"), dlogits, act("ln_f"),
            m_model.outputWeight());
    }
    Step step(-1, "ln_f");
    Tensor dx({T, m_c.dModel});
    const std::string in = m_c.reversible ? names::streamMean() : names::residualStream(m_s, m_c.layers);
    layernorm(dx, m_c.family == Family::Llama ? "norm" : "ln_f", dlnf, act(in), m_model.lnfWeight);
    return dx;
}

void BackwardPass::streamMean(const Tensor &dmean, Tensor &dy1, Tensor &dy2)
{
    Step step(-1, names::streamMean());
    ops::average_backward(dy1, dy2, dmean);
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
    Tensor dx = copyOf(dmid, i, "mid"); // mid = x + F(x)
    attentionSublayer(i, dmid, act(names::residualStream(m_s, i)), dx);
    return dx;
}

void BackwardPass::startStack(const names::Stack &stack)
{
    m_s = stack;
    m_source = stack == names::kEncoderStack;
    m_causal = !m_source && m_c.causal;
    T = static_cast<int64_t>((m_source ? m_input.source : m_input.tokens).size());
    if (stack == names::kDecoderStack) {
        Step step(-1, "cross-attention");
        m_dEncoderOutput = Tensor({static_cast<int64_t>(m_input.source.size()), m_c.dModel});
    }
}

// dF is (T,D), the gradient of cross.out; x is mid (T,D); adds into dx (T,D), and into the gradient of the
// encoder's output Z (S,D), which every decoder block reads.
void BackwardPass::crossAttentionSublayer(int i, const Tensor &dF, const Tensor &x, Tensor &dx)
{
    const std::string p = layerName(i), h = paramName(i), c = p + "cross.", w = h + "crossattention.";
    const BlockWeights &b = m_model.blocks[size_t(i)];
    const int64_t H = m_c.heads, D = m_c.dModel, d = m_c.headDim(), S = m_dEncoderOutput.dim(0);
    const Tensor &probs = act(c + "probs");
    Tensor dctx({H, T, d});
    {
        Step step(i, "cross.out");
        Tensor dmerged({T, D});
        ops::linear_backward(
            dmerged, grad(w + "c_proj.weight"), grad(w + "c_proj.bias"), dF, act(c + "merged"), b.crossProjWeight);
        ops::merge_heads_backward(dctx, dmerged);
    }
    Tensor dscores({H, T, S}), dv({H, S, d});
    {
        Step step(i, "cross.probs");
        Tensor dprobs({H, T, S}), dmasked({H, T, S});
        ops::attention_context_backward(dprobs, dv, dctx, probs, act(c + "v"));
        ops::softmax_backward(dmasked, dprobs, probs);
        ops::attention_mask_backward(dscores, dmasked, false, m_input.sourcePadding);
    }
    Tensor dln({T, D});
    {
        Step step(i, "cross.qkv");
        Tensor dq({H, T, d}), dk({H, S, d}), dquery({T, D}), dkv({S, 2 * D});
        ops::attention_scores_backward(
            dq, dk, dscores, act(c + "q"), act(c + "k"), 1.0f / std::sqrt(static_cast<float>(d)));
        ops::split_heads_backward(dquery, {&dq});
        ops::split_heads_backward(dkv, {&dk, &dv});
        ops::linear_backward(
            dln, grad(w + "q_attn.weight"), grad(w + "q_attn.bias"), dquery, act(p + "ln_cross"), b.crossQWeight);
        ops::linear_backward(m_dEncoderOutput, grad(w + "c_attn.weight"), grad(w + "c_attn.bias"), dkv,
            act(names::encoderOutput()), b.crossKvWeight);
    }
    Step step(i, "ln_cross");
    layernorm(dx, h + "ln_cross_attn", dln, x, b.lnCrossWeight);
}

Tensor BackwardPass::encoderOutput()
{
    Step step(-1, names::encoderOutput());
    Tensor dx({T, m_c.dModel});
    layernorm(dx, std::string(names::kEncoderStack.parameters) + "ln_f", m_dEncoderOutput,
        act(names::residualStream(m_s, m_c.encoderLayers)), m_model.encoderLnfWeight);
    return dx;
}

Tensor BackwardPass::blockPost(int i, const Tensor &dout)
{
    const std::string p = layerName(i), h = paramName(i);
    const BlockWeights &b = blocks()[static_cast<size_t>(i)];
    Tensor dresid({T, m_c.dModel});
    {
        Step step(i, "out");
        layernorm(dresid, normParam(i, 2), dout, act(p + "resid"), b.ln2Weight);
    }
    Tensor dln1({T, m_c.dModel}), ddown({T, m_c.dModel});
    {
        Step step(i, "resid");
        ops::add_backward(dln1, ddown, dresid);
    }
    mlp(i, ddown, act(p + "ln_1"), dln1); // ln_1 feeds both the MLP and the residual: both add into dln1
    Tensor dmid({T, m_c.dModel}), dx({T, m_c.dModel}), dattn({T, m_c.dModel});
    {
        Step step(i, "ln_1");
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
    Step step(-1, "input");
    Tensor dx(dx1.shape());
    ops::add_forward(dx, dx1, dx2);
    return dx;
}

void BackwardPass::attentionSublayer(int i, const Tensor &dF, const Tensor &x, Tensor &dx)
{
    Tensor dln1({T, m_c.dModel});
    attention(i, dF, act(layerName(i) + "ln_1"), dln1);
    Step step(i, "ln_1");
    layernorm(dx, normParam(i, 1), dln1, x, blocks()[size_t(i)].ln1Weight);
}

void BackwardPass::mlpSublayer(int i, const Tensor &dG, const Tensor &y, Tensor &dy)
{
    Tensor dln2({T, m_c.dModel});
    mlp(i, dG, act(layerName(i) + "ln_2"), dln2);
    Step step(i, "ln_2");
    layernorm(dy, normParam(i, 2), dln2, y, blocks()[size_t(i)].ln2Weight);
}

// dout is (T,D), the gradient of attn.out; in is (T,D), the input of attn.qkv; adds d in into din (T,D).
void BackwardPass::attention(int i, const Tensor &dout, const Tensor &in, Tensor &din)
{
    const std::string p = layerName(i), h = paramName(i);
    const BlockWeights &b = blocks()[static_cast<size_t>(i)];
    const int64_t H = m_c.heads, d = m_c.headDim();
    const Tensor &probs = act(p + "attn.probs");
    const bool linear = m_c.linearLayout();
    const std::string o = m_c.family == Family::Bert ? bertLayer(i) + "attention.output.dense"
                                                     : "layers." + std::to_string(i) + ".self_attn.o_proj";
    Tensor dctx({H, T, d});
    {
        Step step(i, "attn.out");
        Tensor dmerged({T, m_c.innerDim()}); // the heads side by side: H·d, d_model unless head_dim says otherwise
        if (linear)
            ops::linear_t_backward(dmerged, grad(o + ".weight"), m_c.outBias ? &grad(o + ".bias") : nullptr, dout,
                act(p + "attn.merged"), b.oWeight);
        else
            ops::linear_backward(dmerged, grad(h + "attn.c_proj.weight"), grad(h + "attn.c_proj.bias"), dout,
                act(p + "attn.merged"), b.attnProjWeight);
        ops::merge_heads_backward(dctx, dmerged);
    }
    Tensor dscores({H, T, T}), dv({H, T, d});
    {
        Step step(i, "attn.probs");
        Tensor dprobs({H, T, T});
        ops::attention_context_backward(dprobs, dv, dctx, probs, act(p + "attn.v"));
        Tensor dmasked({H, T, T});
        ops::softmax_backward(dmasked, dprobs, probs);
        ops::attention_mask_backward(dscores, dmasked, m_causal, m_source ? m_input.sourcePadding : m_input.padding);
    }
    Step step(i, "attn.qkv");
    Tensor dq({H, T, d}), dk({H, T, d});
    const float scale = 1.0f / std::sqrt(static_cast<float>(d)); // as the forward (program.cpp)
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
    if (m_c.positions == PositionKind::T5)
        ops::t5_bias_backward(grad("relative_attention_bias.weight"), dscores, !m_c.causal, m_c.relativeMaxDistance);
    else if (m_c.positions == PositionKind::Shaw)
        ops::shaw_bias_backward(dq, grad(h + "attn.relative_key.weight"), dscores, act(p + "attn.q"), b.relativeKey,
            m_c.relativeClip, scale);
    if (linear)
        return linearLayoutProjectionsBackward(i, dq, dk, dv, in, din);
    Tensor dqkv({T, 3 * m_c.innerDim()});
    ops::split_heads_backward(dqkv, dq, dk, dv);
    ops::linear_backward(din, grad(h + "attn.c_attn.weight"), grad(h + "attn.c_attn.bias"), dqkv, in, b.attnWeight);
}

// The Llama family's split handed query head h the K/V head ⌊h / (H/Hkv)⌋ (repeat_kv): a K/V head's gradient is the
// sum of its query heads'. Then back through q_proj, k_proj and v_proj into din.
void BackwardPass::linearLayoutProjectionsBackward(
    int i, const Tensor &dq, const Tensor &dk, const Tensor &dv, const Tensor &in, Tensor &din)
{
    const BlockWeights &b = m_model.blocks[size_t(i)];
    const int64_t H = m_c.heads, d = m_c.headDim(), Hkv = m_c.kvHeadCount(), group = H / Hkv;
    const std::string a = "layers." + std::to_string(i) + ".self_attn.";
    Tensor dQ({T, H * d}), dK({T, Hkv * d}), dV({T, Hkv * d});
    for (int64_t h = 0; h < H; ++h) {
        dQ.matrix().block(0, h * d, T, d) = dq.slice(h);
        dK.matrix().block(0, (h / group) * d, T, d) += dk.slice(h);
        dV.matrix().block(0, (h / group) * d, T, d) += dv.slice(h);
    }
    const bool bias = m_c.qkvBias, bert = m_c.family == Family::Bert;
    const std::string names[3] = {bert ? bertLayer(i) + "attention.self.query" : a + "q_proj",
        bert ? bertLayer(i) + "attention.self.key" : a + "k_proj",
        bert ? bertLayer(i) + "attention.self.value" : a + "v_proj"};
    const Tensor *gradients[3] = {&dQ, &dK, &dV}, *weights[3] = {&b.qWeight, &b.kWeight, &b.vWeight};
    for (int j = 0; j < 3; ++j)
        ops::linear_t_backward(din, grad(names[j] + ".weight"), bias ? &grad(names[j] + ".bias") : nullptr,
            *gradients[j], in, *weights[j]);
}

// ddown is (T,D), the gradient of mlp.down; in is (T,D), the input of mlp.up; adds d in into din (T,D).
void BackwardPass::mlp(int i, const Tensor &ddown, const Tensor &in, Tensor &din)
{
    const std::string p = layerName(i), h = paramName(i);
    const BlockWeights &b = blocks()[static_cast<size_t>(i)];
    if (m_c.isMoeLayer(i))
        return mixtureOfExperts(i, ddown, in, din);
    Step step(i, "mlp");
    if (m_c.gatedFfn) { // SwiGLU: M = (act(X W_gateᵀ) ⊙ X W_upᵀ) W_downᵀ
        if (m_ffnChunks > 1)
            throw Error("--ffn-chunks: the chunked feed-forward is GPT-2's; a gated one runs whole");
        const std::string f = "layers." + std::to_string(i) + ".mlp.";
        const bool bias = m_c.mlpBias;
        const Tensor &gate = act(p + "mlp.gate"), &up = act(p + "mlp.up");
        Tensor dact(up.shape()), dgate(up.shape()), dup(up.shape());
        ops::linear_t_backward(dact, grad(f + "down_proj.weight"), bias ? &grad(f + "down_proj.bias") : nullptr, ddown,
            act(p + "mlp.act"), b.downWeight);
        ops::gated_activation_backward(dgate, dup, dact, gate, up, m_c.activation);
        ops::linear_t_backward(
            din, grad(f + "gate_proj.weight"), bias ? &grad(f + "gate_proj.bias") : nullptr, dgate, in, b.gateWeight);
        ops::linear_t_backward(
            din, grad(f + "up_proj.weight"), bias ? &grad(f + "up_proj.bias") : nullptr, dup, in, b.upWeight);
        return;
    }
    if (m_ffnChunks > 1) {
        ops::ffn_chunked_backward(din,
            {grad(h + "mlp.c_fc.weight"), grad(h + "mlp.c_fc.bias"), grad(h + "mlp.c_proj.weight"),
                grad(h + "mlp.c_proj.bias")},
            ddown, in, {b.fcWeight, b.fcBias, b.fcProjWeight, b.fcProjBias, m_c.activation}, m_ffnChunks);
        return;
    }
    const Tensor &up = act(p + "mlp.up");
    Tensor dact(up.shape()), dup(up.shape()); // (T,F)
    if (m_c.family == Family::Bert) { // intermediate.dense, then output.dense, nn.Linear with biases
        const std::string l = bertLayer(i);
        ops::linear_t_backward(dact, grad(l + "output.dense.weight"), &grad(l + "output.dense.bias"), ddown,
            act(p + "mlp.act"), b.downWeight);
        ops::activation_backward(dup, dact, up, m_c.activation);
        ops::linear_t_backward(
            din, grad(l + "intermediate.dense.weight"), &grad(l + "intermediate.dense.bias"), dup, in, b.upWeight);
        return;
    }
    ops::linear_backward(
        dact, grad(h + "mlp.c_proj.weight"), grad(h + "mlp.c_proj.bias"), ddown, act(p + "mlp.act"), b.fcProjWeight);
    ops::activation_backward(dup, dact, up, m_c.activation);
    ops::linear_backward(din, grad(h + "mlp.c_fc.weight"), grad(h + "mlp.c_fc.bias"), dup, in, b.fcWeight);
}

// M = Σ g·FFN_e(x) with g = softmax(x W_r)_e, plus α·aux and β·z on the router: the gradient reaches the router
// through the gates and the two losses, the experts through the tokens they took.
void BackwardPass::mixtureOfExperts(int i, const Tensor &ddown, const Tensor &in, Tensor &din)
{
    const std::string p = layerName(i), h = paramName(i);
    const BlockWeights &b = m_model.blocks[size_t(i)];
    Step step(i, "experts");
    const Tensor &choice = act(p + "router.choice"), &gate = act(p + "router.gate");
    const Tensor &logits = act(p + "router.logits"), &probs = act(p + "router.probs");
    std::vector<ops::FfnWeights> weights;
    std::vector<ops::FfnGradients> grads;
    for (size_t e = 0; e < b.experts.size(); ++e) {
        const std::string x = names::expertPrefix(i, int(e));
        weights.push_back({b.experts[e].fcWeight, b.experts[e].fcBias, b.experts[e].fcProjWeight,
            b.experts[e].fcProjBias, m_c.activation});
        grads.push_back(
            {grad(x + "c_fc.weight"), grad(x + "c_fc.bias"), grad(x + "c_proj.weight"), grad(x + "c_proj.bias")});
    }
    Tensor dgate(gate.shape());
    ops::moe_backward(din, dgate, grads, ddown, in, choice, gate, weights);
    Tensor dprobs(probs.shape()), dlogits(logits.shape());
    ops::router_gate_backward(dprobs, dgate, choice);
    ops::router_aux_loss_backward(dprobs, probs, m_c.routerAuxLossCoef);
    ops::softmax_backward(dlogits, dprobs, probs);
    ops::router_z_loss_backward(dlogits, logits, probs, m_c.routerZLossCoef);
    m_g.routerLoss += m_c.routerAuxLossCoef * act(p + "router.aux_loss").data()[0]
        + m_c.routerZLossCoef * act(p + "router.z_loss").data()[0];
    // L = X W_r (no bias): dX += dL W_rᵀ, dW_r += Xᵀ dL.
    din.matrix().noalias() += dlogits.matrix() * b.routerWeight.matrix().transpose();
    grad(h + "mlp.router.weight").matrix().noalias() += in.matrix().transpose() * dlogits.matrix();
}

void BackwardPass::embeddings(const Tensor &dinput)
{
    Step step(-1, "input");
    Tensor dembed(dinput.shape()), dpos(dinput.shape());
    if (m_c.family == Family::Bert) { // input = LN_e(E + P + S), S the segment's embedding (A, or B of a pair)
        Tensor dsum(dinput.shape());
        ops::layernorm_backward(dsum, grad("embeddings.LayerNorm.weight"), grad("embeddings.LayerNorm.bias"), dinput,
            act("embed.sum"), m_model.embedLnWeight, m_c.lnEpsilon);
        ops::embedding_backward(grad(embeddingParam()), dsum, m_input.tokens);
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
    Step step(layer, op);
    Tensor copy(t.shape());
    std::copy(t.data(), t.data() + t.numel(), copy.data());
    return copy;
}

} // namespace atlas
