#include "train/backwardpass.h"

#include "engine/blockcomponents.h"
#include "engine/feedforward.h"

#include "model/blockrecipe.h"
#include "ops/ops.h"
#include "tensor/matrixproduct.h"
#include "trace/allocationrecorder.h"
#include "trace/names.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace atlas {

BackwardPass::BackwardPass(const Model &model, const Input &input, Gradients &g, int ffnChunks, Computes computes)
    : m_model(model)
    , m_c(model.config)
    , m_input(input)
    , m_g(g)
    , m_ffnChunks(ffnChunks)
    , m_inputsOnly(computes == Computes::InputsOnly)
    , T(static_cast<int64_t>(input.tokens.size()))
{
    if (m_c.isEncoderDecoder())
        startStack(names::kDecoderStack);
    if (m_inputsOnly) {
        m_parameters = model.parameters();
        return;
    }
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

Tensor &BackwardPass::grad(const std::string &param)
{
    if (const auto it = m_g.grads.find(param); it != m_g.grads.end())
        return it->second;
    const auto p = m_parameters.find(param);
    if (!m_inputsOnly || p == m_parameters.end())
        throw Error("backward: no gradient for the parameter '" + param + "'");
    return m_g.grads.emplace(param, Tensor(p->second->shape())).first->second;
}

void BackwardPass::layernorm(
    Tensor &din, const std::string &param, const Tensor &dout, const Tensor &in, const Tensor &weight)
{
    if (m_c.norm == NormKind::RmsNorm)
        return ops::rmsnorm_backward(din, grad(param + ".weight"), dout, in, normScale(weight, m_c), m_c.lnEpsilon);
    ops::layernorm_backward(din, grad(param + ".weight"), grad(param + ".bias"), dout, in, weight, m_c.lnEpsilon);
}

void BackwardPass::blockNorm(Tensor &din, int i, BlockPart part, const Tensor &dout, const Tensor &in)
{
    layernorm(din, param(i, part), dout, in, blocks()[size_t(i)].normWeight(part));
}

Tensor *BackwardPass::biasGrad(const std::string &module)
{
    const auto it = m_g.grads.find(module + ".bias");
    return it == m_g.grads.end() ? nullptr : &it->second;
}

// Block i's module `part` (model/blockmodules.h), y = x Wᵀ + b: dx += dy W, and its weight's and bias's gradients.
void BackwardPass::moduleBackward(Tensor &dx, int i, BlockPart part, const Tensor &dy, const Tensor &x)
{
    const LinearModule m = blockModule(m_c, blocks()[size_t(i)], part);
    const std::string name = param(i, part);
    if (m.rows > 0) { // its rows of a fused weight (Phi-3's gate_up_proj), without a bias: dx += dy W, dW += dyᵀ x
        matrixProduct(dx.matrix(), dy.matrix(), false, m.ownRows(), false, true);
        if (m_inputsOnly)
            return;
        Tensor &dweight = grad(name + ".weight");
        matrixProduct(MatrixMap(dweight.data() + m.firstRow * dweight.dim(1), m.rows, dweight.dim(1)), dy.matrix(),
            true, x.matrix(), false, true);
        return;
    }
    linearBackward(dx, name, dy, x, m.weight);
}

// A module y = x Wᵀ (+ b) named `module`: dx += dy W, and its weight's and bias's gradients.
void BackwardPass::linearBackward(
    Tensor &dx, const std::string &module, const Tensor &dy, const Tensor &x, const Tensor &weight)
{
    if (m_inputsOnly)
        return matrixProduct(dx.matrix(), dy.matrix(), false, weight.matrix(), false, true);
    ops::linear_backward(dx, grad(module + ".weight"), biasGrad(module), dy, x, weight);
}

// BERT's masked-LM head: logits = LN_t(GELU(X W_tᵀ + b_t)) W_teᵀ + b_out, the embedding tied. Returns dX (T,D).
Tensor BackwardPass::bertHead(const Tensor &dlogits)
{
    const int64_t D = m_c.dModel;
    Tensor dlnf({T, D}), dact({T, D}), ddense({T, D}), dx({T, D});
    BackwardStep step(m_s, -1, "MLM head");
    ops::logits_backward(dlnf, grad(modelParam(ModelPart::Embedding) + ".weight"), dlogits, act("ln_f"), m_model.wte);
    RowVectorMap(grad(modelParam(ModelPart::MlmOutput) + ".bias").data(), m_c.vocab)
        += dlogits.matrix().colwise().sum();
    layernorm(dact, modelParam(ModelPart::MlmNorm), dlnf, act("head.act"), m_model.lnfWeight);
    ops::activation_backward(ddense, dact, act("head.dense"), m_c.activation);
    linearBackward(dx, modelParam(ModelPart::MlmTransform), ddense, act(names::residualStream(m_s, m_c.layers)),
        m_model.headDenseWeight);
    return dx;
}

Tensor BackwardPass::head(const std::vector<int> &targets)
{
    const Tensor &logits = act("logits");
    if (logits.shape() != Shape {T, m_c.vocab})
        throw Error("backward: the trace's logits are " + logits.shapeString() + ", not [" + std::to_string(T) + ", "
            + std::to_string(m_c.vocab) + "]: the trace is not of this model and input");
    Tensor dlogits;
    {
        BackwardStep step(m_s, -1, "logits");
        dlogits = Tensor(logits.shape()); // (T,V)
        Tensor losses({T});
        m_g.loss += ops::crossentropy_forward(losses, logits, targets);
        ops::crossentropy_softmax_backward(dlogits, act("next_probs"), targets);
        if (m_c.family == Family::Bert)
            return bertHead(dlogits);
    }
    return outputHead(std::move(dlogits));
}

Tensor BackwardPass::outputHead(Tensor dlogitsIn)
{
    const Tensor &logits = act("logits");
    if (m_c.family == Family::Bert || dlogitsIn.shape() != logits.shape())
        throw Error("backward: the output head's gradient is " + dlogitsIn.shapeString() + " for logits "
            + logits.shapeString() + (m_c.family == Family::Bert ? " of a masked-LM head" : ""));
    Tensor dlnf({T, m_c.dModel});
    {
        BackwardStep step(m_s, -1, "logits");
        Tensor dlogits = std::move(dlogitsIn); // freed with this step, before ln_f's
        if (const float cap = m_c.logitSoftcap; cap > 0) { // Z = c · tanh(Z_head / c)
            Tensor dcapped = std::move(dlogits);
            dlogits = Tensor(logits.shape());
            ops::softcap_backward(dlogits, dcapped, logits, cap);
        }
        if (const float scale = m_c.outputScale(); scale != 1.0f) // Z = (s · ln_f) Wᵀ: s scales both gradients
            dlogits.matrix() *= scale;
        const ModelPart output = m_c.tiedHead ? ModelPart::Embedding : ModelPart::OutputHead;
        if (m_inputsOnly) { // the rows a metric reads (one position's), each a product with the unembedding
            ConstMatrixMap unembedding = m_model.outputWeight().matrix();
            for (int64_t t = 0; t < T; ++t)
                if (!dlogits.matrix().row(t).isZero(0))
                    dlnf.matrix().row(t).noalias() += dlogits.matrix().row(t) * unembedding;
        } else {
            ops::logits_backward(
                dlnf, grad(modelParam(output) + ".weight"), dlogits, act("ln_f"), m_model.outputWeight());
        }
    }
    BackwardStep step(m_s, -1, "ln_f");
    Tensor dx({T, m_c.dModel});
    const std::string in = m_c.reversible ? names::streamMean() : names::residualStream(m_s, m_c.layers);
    layernorm(dx, modelParam(ModelPart::FinalNorm), dlnf, act(in), m_model.lnfWeight);
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
        return recipeBackward(i, d);
    }
    return recipeBackward(i, dout);
}

// Block i's recipe (model/blockrecipe.h) walked backwards. Each step takes the gradient of its output and adds those
// of its inputs: an add copies it to its first term (the stream) and hands it on unchanged to the others (the
// sub-layers' outputs); a norm or a sub-layer adds its backward into its input's gradient, made as zeros by the first
// step that adds into it. A gradient is freed after the norm that follows the last step reading it.
Tensor BackwardPass::recipeBackward(int i, const Tensor &dout)
{
    using Kind = BlockStep::Kind;
    const BlockRecipe recipe = blockRecipe(m_c, m_s, i);
    const std::vector<BlockStep> &steps = recipe.steps;
    std::map<std::string, Tensor> owned; // the gradients this walk made, by the recipe's names
    std::map<std::string, std::string> handedOn; // a sub-layer's output -> the add whose gradient is also its own
    std::map<std::string, size_t> firstReader; // the earliest step (forward order) that reads a name's gradient
    for (size_t k = steps.size(); k-- > 0;) {
        firstReader[steps[k].out] = k;
        if (steps[k].kind == Kind::Add)
            for (size_t t = 1; t < steps[k].in.size(); ++t)
                for (size_t j = 0; j < k; ++j)
                    if (steps[j].out == steps[k].in[t])
                        firstReader[steps[k].out] = std::min(firstReader[steps[k].out], j);
    }
    const auto gradientOf = [&](std::string name) -> const Tensor & {
        for (auto it = handedOn.find(name); it != handedOn.end(); it = handedOn.find(name))
            name = it->second;
        const auto it = owned.find(name);
        return it != owned.end() ? it->second : dout; // not made here: the block's output, whose gradient is dout
    };
    const auto into = [&](const std::string &name) -> Tensor & {
        Tensor &g = owned[name];
        if (g.empty())
            g = Tensor({T, m_c.dModel});
        return g;
    };
    const auto at = [&](const std::string &local) -> const Tensor & { return act(blockTensor(m_s, i, local)); };
    for (size_t k = steps.size(); k-- > 0;) {
        const BlockStep &step = steps[k];
        switch (step.kind) {
        case Kind::Add: {
            const Tensor &g = gradientOf(step.out);
            if (const auto it = owned.find(step.in[0]); it != owned.end()) {
                BackwardStep scope(m_s, i, step.out);
                it->second.matrix() += g.matrix();
            } else {
                owned.emplace(step.in[0], copyOf(g, i, step.out));
            }
            for (size_t t = 1; t < step.in.size(); ++t)
                handedOn[step.in[t]] = step.out;
            break;
        }
        case Kind::Norm: {
            Tensor &din = into(step.in[0]);
            BackwardStep scope(m_s, i, step.out);
            blockNorm(din, i, step.norm, gradientOf(step.out), at(step.in[0]));
            break;
        }
        case Kind::Attention:
            if (step.in.size() > 1) { // a funnel's pooling layer: the queries from in[1]
                Tensor &din = into(step.in[0]), &dqueries = into(step.in[1]);
                attention(i, gradientOf(step.out), at(step.in[0]), din, &at(step.in[1]), &dqueries);
            } else {
                attention(i, gradientOf(step.out), at(step.in[0]), into(step.in[0]));
            }
            break;
        case Kind::CrossAttention:
            crossAttention(i, gradientOf(step.out), owned[step.in[0]]);
            break;
        case Kind::FeedForward:
            if (m_taps.feedForwardInput) { // its input's gradient through the feed-forward alone, then added
                Tensor din({T, m_c.dModel});
                mlp(i, gradientOf(step.out), at(step.in[0]), din);
                m_taps.feedForwardInput(i, din);
                into(step.in[0]).matrix() += din.matrix();
            } else {
                mlp(i, gradientOf(step.out), at(step.in[0]), into(step.in[0]));
            }
            break;
        case Kind::FunnelPool: {
            Tensor &dx = into(step.in[0]);
            BackwardStep scope(m_s, i, step.out);
            ops::funnel_pool_backward(dx, gradientOf(step.out), m_c.funnel.stride(i));
            break;
        }
        case Kind::FunnelUpsample:
            owned[step.in[0]] = upsampleBackward(i, gradientOf(step.out));
            break;
        case Kind::TimestepSignal: // X + S(t): a constant added, the gradient passes unchanged
            into(step.in[0]).matrix() += gradientOf(step.out).matrix();
            break;
        case Kind::FourierMixing: { // the map is its own adjoint (ops::fourier_mix_forward)
            BackwardStep scope(m_s, i, step.out);
            Tensor din({T, m_c.dModel});
            ops::fourier_mix_forward(din, gradientOf(step.out), m_c.context);
            into(step.in[0]).matrix() += din.matrix();
            break;
        }
        }
        if (step.kind != Kind::Norm)
            continue;
        for (auto it = owned.begin(); it != owned.end();) // what no earlier step reads
            it = it->first != BlockStep::kInput && firstReader.count(it->first) && firstReader[it->first] >= k
                ? owned.erase(it)
                : std::next(it);
    }
    return std::move(owned.at(BlockStep::kInput));
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

// dF is (T,D), the gradient of cross.out; adds into dln (T,D), the gradient of its input ln_cross (made as zeros
// where empty, when the queries' gradient is due), and into the gradient of the encoder's output Z (S,D), which
// every decoder block reads.
void BackwardPass::crossAttention(int i, const Tensor &dF, Tensor &dln)
{
    const std::string p = layerName(i), c = p + "cross.";
    const int64_t H = m_c.heads, I = m_c.innerDim(), d = m_c.headDim(), S = m_dEncoderOutput.dim(0);
    const Tensor &probs = act(c + "probs");
    Tensor dctx({H, T, d});
    {
        BackwardStep step(m_s, i, "cross.out");
        Tensor dmerged({T, I});
        moduleBackward(dmerged, i, BlockPart::CrossOut, dF, act(c + "merged"));
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
    if (dln.empty())
        dln = Tensor({T, m_c.dModel});
    {
        BackwardStep step(m_s, i, "cross.qkv");
        Tensor dq({H, T, d}), dk({H, S, d}), dquery({T, I});
        ops::attention_scores_backward(dq, dk, dscores, act(c + "q"), act(c + "k"), scoreScale(m_c));
        ops::split_heads_backward(dquery, {&dq});
        const Tensor &z = act(names::encoderOutput());
        moduleBackward(dln, i, BlockPart::CrossQ, dquery, act(p + "ln_cross"));
        if (!m_c.fusesCrossKv()) { // T5's EncDecAttention: k and v of their own
            Tensor dK({S, I}), dV({S, I});
            ops::split_heads_backward(dK, {&dk});
            ops::split_heads_backward(dV, {&dv});
            moduleBackward(m_dEncoderOutput, i, BlockPart::CrossK, dK, z);
            moduleBackward(m_dEncoderOutput, i, BlockPart::CrossV, dV, z);
        } else {
            Tensor dkv({S, 2 * I});
            ops::split_heads_backward(dkv, {&dk, &dv});
            moduleBackward(m_dEncoderOutput, i, BlockPart::CrossKv, dkv, z);
        }
    }
}

Tensor BackwardPass::encoderOutput()
{
    BackwardStep step(m_s, -1, names::encoderOutput());
    Tensor dx({T, m_c.dModel});
    layernorm(dx, modelParam(ModelPart::FinalNorm), m_dEncoderOutput,
        act(names::residualStream(m_s, m_c.encoderLayers)), m_model.encoderLnfWeight);
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
    blockNorm(dx, i, BlockPart::NormAttention, dln1, x);
}

void BackwardPass::mlpSublayer(int i, const Tensor &dG, const Tensor &y, Tensor &dy)
{
    Tensor dln2({T, m_c.dModel});
    mlp(i, dG, act(layerName(i) + "ln_2"), dln2);
    BackwardStep step(m_s, i, "ln_2");
    blockNorm(dy, i, BlockPart::NormFfn, dln2, y);
}

// dout is (T,D), the gradient of attn.out; in is (T,D), the input of attn.qkv; adds d in into din (T,D).
void BackwardPass::attention(
    int i, const Tensor &dout, const Tensor &in, Tensor &din, const Tensor *queryIn, Tensor *dqueryIn)
{
    const std::string p = layerName(i);
    const BlockWeights &b = blocks()[static_cast<size_t>(i)];
    const int64_t H = m_c.heads, d = m_c.headDim();
    const Tensor &probs = act(p + "attn.probs");
    Tensor dctx({H, T, d});
    {
        BackwardStep step(m_s, i, "attn.out");
        Tensor dmerged({T, m_c.innerDim()}); // the heads side by side: H·d, d_model unless head_dim says otherwise
        moduleBackward(dmerged, i, BlockPart::Out, dout, act(p + "attn.merged"));
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
        if (const float cap = m_c.attentionSoftcap; cap > 0) { // S_c = c · tanh(S / c): dS = dS_c (1 − (S_c / c)²)
            Tensor dcapped = std::move(dscores);
            dscores = Tensor({H, T, T});
            ops::softcap_backward(dscores, dcapped, act(p + "attn.capped"), cap);
        }
    }
    BackwardStep step(m_s, i, "attn.qkv");
    Tensor dq({H, T, d}), dk({H, T, d});
    const float scale = scoreScale(m_c);
    // S = R(Q) R(K)ᵀ/√d, or Q Kᵀ/√d in a layer that does not turn them: back through the scores, then the rotation,
    // then QK-norm.
    const bool rotated = m_c.rotates(i), normed = m_c.qkNorm != QkNorm::None;
    const std::string scoredQ = names::queriesOf(m_s, i, rotated, normed),
                      scoredK = names::keysOf(m_s, i, rotated, normed);
    Tensor dqScored({H, T, d}), dkScored({H, T, d});
    ops::attention_scores_backward(dqScored, dkScored, dscores, act(scoredQ), act(scoredK), scale);
    if (rotated) {
        Tensor dqTurned = std::move(dqScored), dkTurned = std::move(dkScored);
        dqScored = Tensor({H, T, d});
        dkScored = Tensor({H, T, d});
        const std::vector<double> theta = m_c.ropeFrequencies(i, T);
        ops::rope_backward(dqScored, dqTurned, ropeStyle(m_c), theta, m_c.ropeAmplitude(i));
        ops::rope_backward(dkScored, dkTurned, ropeStyle(m_c), theta, m_c.ropeAmplitude(i));
    }
    if (normed) {
        qkNormBackward(dq, grad(param(i, BlockPart::QNorm) + ".weight"), dqScored, act(p + "attn.q"),
            b.normWeight(BlockPart::QNorm), m_c);
        qkNormBackward(dk, grad(param(i, BlockPart::KNorm) + ".weight"), dkScored, act(p + "attn.k"),
            b.normWeight(BlockPart::KNorm), m_c);
    } else {
        dq = std::move(dqScored);
        dk = std::move(dkScored);
    }
    // The position term B was added to the scores: dB = dS.
    if (m_c.positions == PositionKind::T5) // a T5 checkpoint's stacks each have a table in their block 0
        ops::t5_bias_backward(
            grad((m_c.family == Family::T5 ? param(0, BlockPart::RelativeBias) : modelParam(ModelPart::RelativeBias))
                + ".weight"),
            dscores, !m_causal, m_c.relativeMaxDistance);
    else if (m_c.positions == PositionKind::Shaw)
        ops::shaw_bias_backward(dq, grad(param(i, BlockPart::RelativeKey) + ".weight"), dscores, act(p + "attn.q"),
            b.weight(BlockPart::RelativeKey), m_c.relativeClip, scale, m_c.relativeKeySign);
    if (m_taps.attentionHeads)
        m_taps.attentionHeads(i, dq, dk, dv);
    if (m_c.sinkhorn.active())
        sortingNetworkBackward(i, din);
    if (queryIn)
        return pooledProjectionsBackward(i, dq, dk, dv, in, din, *queryIn, *dqueryIn);
    // Back through the split (a K/V head's gradient sums its query heads') and the projection's modules.
    const std::vector<BlockPart> parts = qkvParts(m_c);
    const std::vector<Tensor> dparts = qkvGradients(dq, dk, dv, m_c);
    for (size_t k = 0; k < parts.size(); ++k)
        moduleBackward(din, i, parts[k], dparts[k], in);
}

// Softmax's backward, or the sparse normaliser's (ops::entmax_backward); a learned α also gets its gradient, through
// α = 1 + σ(a): dα/da = σ(a)(1 − σ(a)) = (α − 1)(2 − α).
void BackwardPass::normaliserBackward(int i, Tensor &dmasked, const Tensor &dprobs, const Tensor &probs)
{
    if (m_c.sinkhorn.active())
        return sinkhornBackward(i, dmasked, dprobs);
    if (m_c.adaptiveSpan())
        return adaptiveSpanBackward(i, dmasked, dprobs, probs);
    if (m_c.attentionSinks) // gpt-oss: the sink logits get the gradient of the share they took
        return ops::sink_softmax_backward(
            dmasked, grad(param(i, BlockPart::Sinks)), dprobs, probs, act(layerName(i) + "attn.sink"));
    const std::vector<float> alpha = m_model.attentionAlphas(i);
    if (alpha.empty())
        return ops::softmax_backward(dmasked, dprobs, probs);
    if (m_c.normaliser != Normaliser::LearnedEntmax)
        return ops::entmax_backward(dmasked, nullptr, dprobs, probs, alpha);
    std::vector<float> dalpha(alpha.size(), 0.0f);
    ops::entmax_backward(dmasked, &dalpha, dprobs, probs, alpha);
    Tensor &da = grad(param(i, BlockPart::AlphaLogit));
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
    Tensor &dv = grad(param(i, BlockPart::SpanFraction));
    for (size_t h = 0; h < spans.size(); ++h) {
        dv.data()[h] += S * (dspans[h] + m_c.spanPenalty / heads);
        m_g.spanLoss += m_c.spanPenalty * spans[h] / heads;
    }
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
    Tensor dact(a.up.shape()), dup(a.up.shape());
    moduleBackward(dact, i, BlockPart::Down, ddown, a.act);
    if (!m_c.gatedFfn) {
        ops::activation_backward(dup, dact, a.up, m_c.activation);
        moduleBackward(din, i, BlockPart::Up, dup, in);
        return;
    }
    Tensor dgate(a.up.shape()); // gated: M = (act(X W_gateᵀ) ⊙ X W_upᵀ) W_downᵀ
    ops::gated_activation_backward(dgate, dup, dact, a.gate, a.up, m_c.activation, m_c.gluClamp);
    moduleBackward(din, i, BlockPart::Gate, dgate, in);
    moduleBackward(din, i, BlockPart::Up, dup, in);
}

void BackwardPass::embeddings(const Tensor &dinput)
{
    BackwardStep step(m_s, -1, names::stackTensor(m_s, "input"));
    Tensor dembed(dinput.shape()), dpos(dinput.shape());
    if (m_c.family == Family::Bert) { // input = LN_e(E + P + S), S the segment's embedding (A, or B of a pair)
        Tensor dsum(dinput.shape());
        layernorm(dsum, modelParam(ModelPart::EmbeddingNorm), dinput, act("embed.sum"), m_model.embedLnWeight);
        ops::embedding_backward(grad(modelParam(ModelPart::Embedding) + ".weight"), dsum, m_input.tokens);
        if (m_c.positions == PositionKind::Learned) // relative_key adds no absolute positions
            ops::positions_learned_backward(grad(modelParam(ModelPart::Positions) + ".weight"), dsum);
        const std::vector<int> types = m_c.segmentsOf(m_input.tokens);
        MatrixMap dtypes = grad(modelParam(ModelPart::TokenTypes) + ".weight").matrix();
        for (int64_t t = 0; t < T; ++t)
            dtypes.row(types[size_t(t)]) += dsum.matrix().row(t);
        return;
    }
    ops::add_backward(dembed, dpos, dinput);
    if (m_c.embeddingScale != 1.0f) // E = s · W_te[ids]
        dembed.matrix() *= m_c.embeddingScale;
    ops::embedding_backward(
        grad(modelParam(ModelPart::Embedding) + ".weight"), dembed, m_source ? m_input.source : m_input.tokens);
    if (m_c.positions == PositionKind::Learned)
        ops::positions_learned_backward(grad(modelParam(ModelPart::Positions) + ".weight"), dpos);
}

Tensor BackwardPass::copyOf(const Tensor &t, int layer, std::string_view op)
{
    BackwardStep step(m_s, layer, op);
    Tensor copy(t.shape());
    std::copy(t.data(), t.data() + t.numel(), copy.data());
    return copy;
}

} // namespace atlas
