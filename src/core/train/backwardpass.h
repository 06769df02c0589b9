#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include "engine/input.h"
#include "model/model.h"
#include "model/parameternames.h"
#include "trace/allocationrecorder.h"
#include "trace/names.h"
#include "trace/trace.h"
#include "train/backprop.h"

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace atlas {

struct FeedForwardActivations;

// The backward of one operation: what it allocates is transient workspace (gradients of activations).
struct BackwardStep : MemoryScope
{
    // Op `op` of block `layer` of stack `s` ("dec.layer.2.cross.qkv"), or the whole name `op` when layer < 0.
    BackwardStep(const names::Stack &s, int layer, std::string_view op)
        : MemoryScope(MemoryPhase::Backward, layer,
            WholeName {layer >= 0 ? names::layerTensor(s, layer, op) : std::string(op)}, MemoryCategory::Workspace)
    {
    }
};

// Walks the Program of engine/program.cpp backwards, one block at a time. Each function takes the gradient of
// an operation's output and adds the gradients of its inputs (activations: into a tensor it is given or returns;
// parameters: into the Gradients). Forward values are read under docs/trace-names.md's names from the trace set
// by setActivations: a whole traced run (backward()), or the tensors a memory strategy kept or recomputed
// (train/strategyrunner.h), which may change between blocks. Every part runs in a MemoryScope of its own, so a
// memory recording sees the backward pass operation by operation; what it allocates is transient workspace.
class BackwardPass
{
public:
    // What a pass computes: every parameter's gradient (training), or the activations' alone (circuit analysis reads
    // the gradients of what each head and feed-forward reads): the linear maps' and the unembedding's weights then get
    // none, and the few other parameters' gradients are made as they are first reached.
    enum class Computes { Parameters, InputsOnly };
    // Creates every missing gradient as zeros (Parameters); `ffnChunks` > 1: the FFNs were run in chunks (program.h).
    BackwardPass(const Model &model, const Input &input, Gradients &g, int ffnChunks = 1,
        Computes computes = Computes::Parameters);

    void setActivations(const Trace *trace) { m_trace = trace; }
    // An encoder–decoder goes back through its decoder (the stack it starts in), then its encoder: block,
    // embeddings and the rest act on the current stack.
    void startStack(const names::Stack &stack);
    // The encoder's ln_f, whose output Z every decoder block's cross-attention read: returns dX (S,D) for the
    // encoder's last block from the gradient the decoder's cross-attention gathered into Z. Call in the encoder.
    Tensor encoderOutput();

    // loss = mean CE(logits, targets), logits = ln_f W_teᵀ, ln_f = LN_f(x): adds the loss, returns dx (T,D), x being
    // the last block's output (a reversible model: the streams' mean).
    Tensor head(const std::vector<int> &targets);
    // The same from dlogits (T,V), the gradient of any function of the logits (circuit analysis's metric): through
    // the soft-cap, the output scale, the unembedding and ln_f; returns dx. Not for BERT's masked-LM head.
    Tensor outputHead(Tensor dlogits);
    // Called as the walk passes block i (circuit analysis reads the gradients of what each head and feed-forward
    // reads; analysis/circuits.cpp). attentionHeads: the gradients of the split heads attn.q, attn.k and attn.v as
    // traced ([H, T, d], K and V repeated per query head), before the projection's backward; feedForwardInput: the
    // gradient of the feed-forward's input (its norm's output) through the feed-forward alone.
    struct Taps
    {
        std::function<void(int, const Tensor &, const Tensor &, const Tensor &)> attentionHeads;
        std::function<void(int, const Tensor &)> feedForwardInput;
    };
    void setTaps(Taps taps) { m_taps = std::move(taps); }
    // A reversible model's ln_f input is (Y₁ + Y₂)/2: adds dmean/2 into dy1 and dy2 (all (T,D)).
    void streamMean(const Tensor &dmean, Tensor &dy1, Tensor &dy2);
    // Block i as its recipe arranges it (model/blockrecipe.h: pre-norm, post-norm, parallel, a decoder's
    // cross-attention, a funnel's pooling or upsampling), walked in reverse: dout is the gradient of its output
    // (T,D); returns that of its input. Not for reversible blocks (blockReversible).
    Tensor block(int i, const Tensor &dout);
    // Reversible: Y₁ = X₁ + F(X₂), Y₂ = X₂ + G(Y₁). dy1, dy2 are dY₁, dY₂ (T,D) on entry and dX₁, dX₂ on return.
    // Reads Y₁ (ln_2's input), X₂ (ln_1's input) and F's and G's insides from the trace.
    void blockReversible(int i, Tensor &dy1, Tensor &dy2);
    // Both streams of block 0 are the embedding X₀ (X₁ = X₂ = X₀): returns dX₀ = dX₁ + dX₂ (all (T,D)).
    Tensor streamsStart(const Tensor &dx1, const Tensor &dx2);
    // F(x) = Attn(LN₁(x)) of block i: dF, x, dx are (T,D); adds dF·∂F/∂x into dx.
    void attentionSublayer(int i, const Tensor &dF, const Tensor &x, Tensor &dx);
    // G(y) = FFN(LN₂(y)) of block i: dG, y, dy are (T,D); adds dG·∂G/∂y into dy.
    void mlpSublayer(int i, const Tensor &dG, const Tensor &y, Tensor &dy);
    // Adaptive computation time (ModelConfig::act): from dx, the gradient of ln_f's input Σ_n p_n X_n, adds the
    // ponder cost τ · mean ρ to the loss and returns the gradients of the blocks' outputs X_1 … X_L (T,D each).
    std::vector<Tensor> adaptiveComputation(const Tensor &dx);
    // input = embed + positions; dinput is (T,D).
    void embeddings(const Tensor &dinput);

private:
    Tensor recipeBackward(int i, const Tensor &dout); // block(), after a funnel's skip connection
    void crossAttention(int i, const Tensor &dF, Tensor &dln);
    std::string layerName(int i) const { return names::layerPrefix(m_s, i); } // "dec.layer.0."
    const std::vector<BlockWeights> &blocks() const { return m_source ? m_model.encoderBlocks : m_model.blocks; }
    // `queryIn` set (a funnel's pooling layer): the queries read it, the keys and values `in`; its gradient goes
    // into *dqueryIn.
    void attention(int i, const Tensor &dout, const Tensor &in, Tensor &din, const Tensor *queryIn = nullptr,
        Tensor *dqueryIn = nullptr);
    // Funnel-Transformer (train/backwardfunnel.cpp): a pooling layer's queries read the pooled stream.
    void pooledProjectionsBackward(int i, const Tensor &dq, const Tensor &dk, const Tensor &dv, const Tensor &in,
        Tensor &din, const Tensor &queryIn, Tensor &dqueryIn);
    // The decoder's first block reads U = up(X) + X_skip: returns dX and keeps dX_skip for the skip layer's output.
    Tensor upsampleBackward(int i, const Tensor &dupsampled);
    void mlp(int i, const Tensor &ddown, const Tensor &in, Tensor &din);
    void denseMlp(int i, const Tensor &ddown, const Tensor &in, Tensor &din, const FeedForwardActivations &a);
    void mixtureOfExperts(int i, const Tensor &ddown, const Tensor &in, Tensor &din);
    void gatedExperts(int i, const Tensor &ddown, const Tensor &in, Tensor &din);
    void normaliserBackward(int i, Tensor &dmasked, const Tensor &dprobs, const Tensor &probs);
    void adaptiveSpanBackward(int i, Tensor &dmasked, const Tensor &dprobs, const Tensor &probs);
    // Sparse Sinkhorn attention (train/backwardsinkhorn.cpp): the scores' gradient, keeping the sort matrix's in
    // m_dSort; then, from m_dSort, the sorting network's parameters and its input's gradient, added into din (T,D).
    void sinkhornBackward(int i, Tensor &dmasked, const Tensor &dprobs);
    void sortingNetworkBackward(int i, Tensor &din);
    // Block i's parameter `part` of this stack (with shared blocks block 0's, into which every layer's gradient adds),
    // and the model's `part`, under the family's names (model/parameternames.h), without ".weight": "encoder.h.0.ln_1"
    // …
    std::string param(int i, BlockPart part) const { return blockParameter(m_c, m_s, m_c.shared.heldBy(i), part); }
    std::string modelParam(ModelPart part) const { return modelParameter(m_c, part, m_s); }
    Tensor *biasGrad(const std::string &module); // null when the module has no bias
    void linearBackward(Tensor &dx, const std::string &module, const Tensor &dy, const Tensor &x, const Tensor &weight);
    // Block i's linear module `part` in its layout (model/blockmodules.h): adds dy·∂y/∂x into dx, and its gradients.
    void moduleBackward(Tensor &dx, int i, BlockPart part, const Tensor &dy, const Tensor &x);
    Tensor bertHead(const Tensor &dlogits);
    void layernorm(Tensor &din, const std::string &param, const Tensor &dout, const Tensor &in, const Tensor &weight);
    // The backward of block i's norm `part` (ln_1, ln_2, ln_cross): adds into din.
    void blockNorm(Tensor &din, int i, BlockPart part, const Tensor &dout, const Tensor &in);
    Tensor copyOf(const Tensor &t, int layer, std::string_view op); // a new buffer, in a backward step of op
    const Tensor &act(const std::string &name) const { return m_trace->tensor(name); }
    Tensor &grad(const std::string &param);

    const Model &m_model;
    const ModelConfig &m_c;
    const Input &m_input;
    const Trace *m_trace = nullptr;
    Gradients &m_g;
    const int m_ffnChunks;
    const bool m_inputsOnly;
    std::map<std::string, const Tensor *> m_parameters; // InputsOnly: the shapes of the gradients made as reached
    names::Stack m_s = names::kOnlyStack;
    bool m_source = false; // in the encoder of an encoder–decoder
    bool m_causal = m_c.causal;
    int64_t T; // the current stack's length
    Tensor m_dEncoderOutput; // (S,D) d loss / d Z, gathered in the decoder, used in the encoder
    Tensor m_dFunnelSkip; // (T,D) d loss / d X_skip, gathered on upsampling, added at the skip layer's output
    Tensor m_dSort; // (N,N) d loss / d S of the layer being gone back through (Sinkhorn attention)
    Taps m_taps;
};

} // namespace atlas
