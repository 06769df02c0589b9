#include "train/backprop.h"

#include "ops/ops.h"
#include "trace/names.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

// Block i's prefix in the trace ("layer.0.") and among the parameters ("h.0.").
std::string layerName(int i)
{
    return names::layerPrefix(i);
}
std::string paramName(int i)
{
    return names::parameterPrefix(i);
}

// Walks the Program of engine/program.cpp backwards. Each function takes the gradient of an operation's
// output and adds the gradients of its inputs (activations: into a tensor it is given or returns;
// parameters: into m_g.grads). Forward values come from the trace under docs/trace-names.md's names.
class BackwardPass
{
public:
    BackwardPass(const Model &model, const Input &input, const Trace &trace, Gradients &g)
        : m_model(model)
        , m_c(model.config)
        , m_input(input)
        , m_trace(trace)
        , m_g(g)
        , T(static_cast<int64_t>(input.tokens.size()))
    {
        for (const auto &[name, p] : model.parameters()) {
            auto it = m_g.grads.find(name);
            if (it == m_g.grads.end())
                m_g.grads.emplace(name, Tensor(p->shape()));
            else if (it->second.shape() != p->shape())
                throw Error("gradient '" + name + "' has shape " + it->second.shapeString() + ", its parameter "
                    + p->shapeString());
        }
    }

    Tensor head(const std::vector<int> &targets);
    Tensor blockPre(int i, const Tensor &dout);
    Tensor blockPost(int i, const Tensor &dout);
    void embeddings(const Tensor &dinput);

private:
    void attention(int i, const Tensor &dout, const Tensor &in, Tensor &din);
    void mlp(int i, const Tensor &ddown, const Tensor &in, Tensor &din);
    void layernorm(Tensor &din, const std::string &param, const Tensor &dout, const Tensor &in, const Tensor &weight)
    {
        ops::layernorm_backward(din, grad(param + ".weight"), grad(param + ".bias"), dout, in, weight, m_c.lnEpsilon);
    }
    const Tensor &act(const std::string &name) const { return m_trace.tensor(name); }
    Tensor &grad(const std::string &param) { return m_g.grads.at(param); }
    const Tensor &blockInput(int i) const { return act(i == 0 ? "input" : layerName(i - 1) + "out"); }

    const Model &m_model;
    const ModelConfig &m_c;
    const Input &m_input;
    const Trace &m_trace;
    Gradients &m_g;
    const int64_t T;
};

// loss = mean CE(logits, targets); logits = ln_f wteᵀ; ln_f = LN_f(last block's out). Returns d(last out).
Tensor BackwardPass::head(const std::vector<int> &targets)
{
    const Tensor &logits = act("logits");
    if (logits.shape() != Shape {T, m_c.vocab})
        throw Error("backward: the trace's logits are " + logits.shapeString() + ", not [" + std::to_string(T) + ", "
            + std::to_string(m_c.vocab) + "]: the trace is not of this model and input");
    Tensor losses({T});
    m_g.loss += ops::crossentropy_forward(losses, logits, targets);
    Tensor dlogits(logits.shape()); // (T,V)
    ops::crossentropy_softmax_backward(dlogits, act("next_probs"), targets);
    Tensor dlnf({T, m_c.dModel});
    ops::logits_backward(dlnf, grad("wte.weight"), dlogits, act("ln_f"), m_model.wte);
    Tensor dx({T, m_c.dModel});
    layernorm(dx, "ln_f", dlnf, blockInput(m_c.layers), m_model.lnfWeight);
    return dx;
}

// Pre-LN: mid = x + Attn(LN₁(x)), out = mid + MLP(LN₂(mid)). dout is (T,D); returns d x (T,D).
Tensor BackwardPass::blockPre(int i, const Tensor &dout)
{
    const std::string p = layerName(i), h = paramName(i);
    const BlockWeights &b = m_model.blocks[static_cast<size_t>(i)];
    Tensor dmid({T, m_c.dModel}), ddown({T, m_c.dModel}), dln2({T, m_c.dModel});
    ops::add_backward(dmid, ddown, dout);
    mlp(i, ddown, act(p + "ln_2"), dln2);
    layernorm(dmid, h + "ln_2", dln2, act(p + "mid"), b.ln2Weight);

    Tensor dx({T, m_c.dModel}), dattn({T, m_c.dModel}), dln1({T, m_c.dModel});
    ops::add_backward(dx, dattn, dmid);
    attention(i, dattn, act(p + "ln_1"), dln1);
    layernorm(dx, h + "ln_1", dln1, blockInput(i), b.ln1Weight);
    return dx;
}

// Post-LN: mid = x + Attn(x), ln_1 = LN₁(mid), resid = ln_1 + MLP(ln_1), out = LN₂(resid).
Tensor BackwardPass::blockPost(int i, const Tensor &dout)
{
    const std::string p = layerName(i), h = paramName(i);
    const BlockWeights &b = m_model.blocks[static_cast<size_t>(i)];
    Tensor dresid({T, m_c.dModel});
    layernorm(dresid, h + "ln_2", dout, act(p + "resid"), b.ln2Weight);
    Tensor dln1({T, m_c.dModel}), ddown({T, m_c.dModel});
    ops::add_backward(dln1, ddown, dresid);
    mlp(i, ddown, act(p + "ln_1"), dln1); // ln_1 feeds both the MLP and the residual: both add into dln1

    Tensor dmid({T, m_c.dModel});
    layernorm(dmid, h + "ln_1", dln1, act(p + "mid"), b.ln1Weight);
    Tensor dx({T, m_c.dModel}), dattn({T, m_c.dModel});
    ops::add_backward(dx, dattn, dmid);
    attention(i, dattn, blockInput(i), dx);
    return dx;
}

// dout is (T,D), the gradient of attn.out; in is (T,D), the input of attn.qkv; adds d in into din (T,D).
void BackwardPass::attention(int i, const Tensor &dout, const Tensor &in, Tensor &din)
{
    const std::string p = layerName(i), h = paramName(i);
    const BlockWeights &b = m_model.blocks[static_cast<size_t>(i)];
    const int64_t H = m_c.heads, D = m_c.dModel, d = m_c.headDim();
    const Tensor &probs = act(p + "attn.probs");
    Tensor dmerged({T, D});
    ops::linear_backward(dmerged, grad(h + "attn.c_proj.weight"), grad(h + "attn.c_proj.bias"), dout,
        act(p + "attn.merged"), b.attnProjWeight);
    Tensor dctx({H, T, d});
    ops::merge_heads_backward(dctx, dmerged);
    Tensor dprobs({H, T, T}), dv({H, T, d});
    ops::attention_context_backward(dprobs, dv, dctx, probs, act(p + "attn.v"));
    Tensor dmasked({H, T, T});
    ops::softmax_backward(dmasked, dprobs, probs);
    Tensor dscores({H, T, T});
    ops::attention_mask_backward(dscores, dmasked, m_c.causal, m_input.padding);
    Tensor dq({H, T, d}), dk({H, T, d});
    const float scale = 1.0f / std::sqrt(static_cast<float>(d)); // as the forward (program.cpp)
    ops::attention_scores_backward(dq, dk, dscores, act(p + "attn.q"), act(p + "attn.k"), scale);
    Tensor dqkv({T, 3 * D});
    ops::split_heads_backward(dqkv, dq, dk, dv);
    ops::linear_backward(din, grad(h + "attn.c_attn.weight"), grad(h + "attn.c_attn.bias"), dqkv, in, b.attnWeight);
}

// ddown is (T,D), the gradient of mlp.down; in is (T,D), the input of mlp.up; adds d in into din (T,D).
void BackwardPass::mlp(int i, const Tensor &ddown, const Tensor &in, Tensor &din)
{
    const std::string p = layerName(i), h = paramName(i);
    const BlockWeights &b = m_model.blocks[static_cast<size_t>(i)];
    const Tensor &up = act(p + "mlp.up");
    Tensor dact(up.shape()), dup(up.shape()); // (T,F)
    ops::linear_backward(
        dact, grad(h + "mlp.c_proj.weight"), grad(h + "mlp.c_proj.bias"), ddown, act(p + "mlp.act"), b.fcProjWeight);
    switch (m_c.activation) {
    case Activation::Relu:
        ops::relu_backward(dup, dact, up);
        break;
    case Activation::GeluTanh:
        ops::gelu_tanh_backward(dup, dact, up);
        break;
    case Activation::GeluErf:
        ops::gelu_erf_backward(dup, dact, up);
        break;
    }
    ops::linear_backward(din, grad(h + "mlp.c_fc.weight"), grad(h + "mlp.c_fc.bias"), dup, in, b.fcWeight);
}

// input = embed + positions; dinput is (T,D). Sinusoidal positions have no parameters.
void BackwardPass::embeddings(const Tensor &dinput)
{
    Tensor dembed(dinput.shape()), dpos(dinput.shape());
    ops::add_backward(dembed, dpos, dinput);
    ops::embedding_backward(grad("wte.weight"), dembed, m_input.tokens);
    if (m_c.positions == PositionKind::Learned)
        ops::positions_learned_backward(grad("wpe.weight"), dpos);
}

} // namespace

void Gradients::zero()
{
    loss = 0.0f;
    for (auto &[name, g] : grads) {
        float *data = g.data();
        parallelFor(
            g.numel(), 1 << 20, [data](int64_t begin, int64_t end) { std::fill(data + begin, data + end, 0.0f); });
    }
}

Gradients backward(const Model &model, const Input &input, const Trace &trace, const std::vector<int> &targets)
{
    Gradients g;
    accumulateGradients(g, model, input, trace, targets);
    return g;
}

void accumulateGradients(
    Gradients &into, const Model &model, const Input &input, const Trace &trace, const std::vector<int> &targets)
{
    if (targets.size() != input.tokens.size())
        throw Error("targets: " + std::to_string(targets.size()) + " ids for " + std::to_string(input.tokens.size())
            + " input tokens (give one per input token, -1 to skip a position)");
    if (std::all_of(targets.begin(), targets.end(), [](int t) { return t == -1; }))
        throw Error("targets: every target is -1, so there is no loss to differentiate");
    BackwardPass pass(model, input, trace, into);
    Tensor dx = pass.head(targets);
    for (int i = model.config.layers - 1; i >= 0; --i)
        dx = model.config.layerNorm == LayerNormPlacement::Pre ? pass.blockPre(i, dx) : pass.blockPost(i, dx);
    pass.embeddings(dx);
}

} // namespace atlas
