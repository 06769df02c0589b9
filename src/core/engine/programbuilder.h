#pragma once

// Internal to the engine: the builder behind Program::build (engine/program.h), its methods split between
// programbuilder.cpp (embeddings, blocks, feed-forward, head) and programattention.cpp (the attention sub-layers).

#include "engine/program.h"
#include "model/blockrecipe.h"
#include "ops/ops.h"
#include "trace/names.h"

#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace atlas {

using Outputs = std::vector<Tensor>;

// A number in a formula: "%g" (0.125, 1e+06, 50).
inline std::string formulaNumber(double x)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
}

// Exact softmax attention: the kernel of every op outside an efficient layer.
inline const attention::AttentionKernelSpec kFullAttention {"full", {}};

// The encoder stack of an encoder–decoder (`source` true) reads the source and its own blocks; every other stack
// reads Input::tokens and Model::blocks.
inline const std::vector<BlockWeights> &blocksOf(const Model &m, bool source)
{
    return source ? m.encoderBlocks : m.blocks;
}
inline const std::vector<int> &tokensOf(const Input &in, bool source)
{
    return source ? in.source : in.tokens;
}
inline const std::vector<int> &paddingOf(const Input &in, bool source)
{
    return source ? in.sourcePadding : in.padding;
}

// RoPE's cos and sin for T positions (ops::rope_table), computed when a rotate op first runs: a program built only for
// its shapes (the memory estimate's, predictedActivationBytes) allocates no table.
class RopeTableOnDemand
{
public:
    RopeTableOnDemand(int64_t positions, std::vector<double> theta, double amplitude)
        : m_positions(positions)
        , m_theta(std::move(theta))
        , m_amplitude(amplitude)
    {
    }
    int64_t positions() const { return m_positions; }
    const ops::RopeTable &table() const
    {
        std::call_once(m_once, [this] { m_table = ops::rope_table(0, m_positions, m_theta, m_amplitude); });
        return m_table;
    }

private:
    int64_t m_positions;
    std::vector<double> m_theta;
    double m_amplitude;
    mutable std::once_flag m_once;
    mutable ops::RopeTable m_table;
};

// Throws atlas::Error for what an FNet model (model/fourierlayers.h) cannot run: an efficient kernel on a block that
// has no attention, a token schedule or padding, which its transform would mix in.
void checkFourierInput(const ModelConfig &config, const Input &input);

// Builds a Program op by op; `t(name)` is shorthand for reading an input from the trace.
class ProgramBuilder
{
public:
    ProgramBuilder(const ModelConfig &c, const Input &input, bool traced, int ffnChunks, bool onDemand)
        : m_c(c)
        , T(static_cast<int64_t>(input.tokens.size()))
        , m_causal(c.causal)
        , m_input(input)
        , m_traced(traced)
        , m_ffnChunks(ffnChunks)
        , m_onDemand(onDemand)
    {
    }

    void add(std::string name, std::string label, int layer, std::vector<std::string> inputs,
        std::vector<OpOutput> outputs, decltype(Op::run) run)
    {
        const attention::AttentionKernelSpec *kernel = layer >= 0 ? m_input.kernelFor(layer) : nullptr;
        m_program.ops.push_back({std::move(name), std::move(label), layer, kernel ? *kernel : kFullAttention,
            std::move(inputs), std::move(outputs), std::move(run), m_s});
    }

    // One unary op producing a tensor of `shape` from `in`, computed by `fn(out, inputTensor, model)`. `out` starts
    // as zeros, or uninitialised for an fn that sets every element (Written::Whole): for the vocabulary-wide
    // tensors a pass of zeros over hundreds of megabytes.
    enum class Written { InPart, Whole };
    template <typename Fn>
    void unary(const std::string &out, const std::string &label, int layer, const std::string &in, Shape shape,
        const std::string &formula, Fn fn, Written written = Written::InPart)
    {
        add(out, label, layer, {in}, {{out, shape, formula}},
            [in, shape, fn, written](const Model &m, const Input &, const Trace &tr) {
                Tensor o = written == Written::Whole ? Tensor::uninitialized(shape) : Tensor(shape);
                fn(o, tr.tensor(in), m);
                return Outputs {std::move(o)};
            });
    }

    // Which stack the next ops belong to: the one stack, or an encoder–decoder's encoder, then its decoder.
    void startStack(const names::Stack &stack)
    {
        m_s = stack;
        m_source = stack == names::kEncoderStack;
        m_causal = !m_source && m_c.causal;
        T = static_cast<int64_t>((m_source ? m_input.source : m_input.tokens).size());
    }
    void embeddings();
    void block(int i);
    void droppedBlock(int i);
    std::string adaptiveComputation(); // ModelConfig::act: the blocks' streams mixed by their halting; returns its name
    void crossAttention(int i, const std::string &in); // from the normalised stream `in` and the encoder's output
    void encoderOutput();
    // `queryIn` non-empty: the queries read it and the keys and values read `in` (a funnel's pooling layer).
    void attention(int i, const std::string &in, const std::string &queryIn = {});
    void qkvProjections(int i, const std::string &in);
    void qkNorm(int i);
    void mergeHeads(int i);
    void exactAttention(int i);
    void tiledAttention(int i); // exact attention a tile at a time, its probabilities on demand (attentiontrace.h)
    std::string scoreFormula(int i) const; // "S = R(Q_h) R(K_h)ᵀ / √d", as layer i computes its scores
    std::string keyRule(int i) const; // "key j ≤ query i and j not padding": the keys layer i's mask keeps
    void normaliser(int i);
    void sinkSoftmax(int i);
    void adaptiveSpan(int i);
    // Sparse Sinkhorn attention (model/sinkhorn.h; engine/programsinkhorn.cpp): the sorting network reads `in`
    void sortingNetwork(int i, const std::string &in);
    void sinkhornAttention(int i);
    void extractTokens(int i); // engine/tokenretention.cpp
    void rotary(int i);
    // What layer i's scores read: the rotated queries and keys, or (a NoPE layer, a model without RoPE) them as
    // projected, or as QK-norm left them.
    std::string scoredQueries(int i) const;
    std::string scoredKeys(int i) const;
    // Funnel-Transformer (model/funnel.h; engine/programfunnel.cpp)
    void funnelPool(int i, const std::string &in);
    void fourierMixing(int i, const std::string &in); // FNet's block: model/fourierlayers.h
    void timestepSignal(int i, const std::string &in); // before a shared block's step: model/sharedblocks.h
    void funnelUpsample(int i);
    void pooledQueryProjections(int i, const std::string &in, const std::string &queryIn);
    void positionBias(int i);
    void efficientAttention(int i, const attention::AttentionKernelSpec &spec);
    void mlp(int i, const std::string &in);
    void bertEmbeddingSum(const std::string &embed, const std::string &positions);
    void bertHeads(const std::string &last);
    void bertLogits();
    std::shared_ptr<const RopeTableOnDemand> ropeTable(int layer);
    void chunkedMlp(int i, const std::string &in);
    void mixtureOfExperts(int i, const std::string &in);
    void head();
    Program take() { return std::move(m_program); }

private:
    // out = the model's norm of `in` (RMSNorm: γ only; LayerNorm: γ and β), with the γ and β `weights` picks from the
    // model; `sub` subscripts them in the formula (γ₁, γ_f).
    using NormWeights = std::function<std::pair<const Tensor *, const Tensor *>(const Model &)>;
    void norm(const std::string &out, const std::string &label, int layer, const std::string &in,
        const std::string &sub, NormWeights weights);
    void blockNorm(const std::string &out, const std::string &label, int layer, const std::string &in, BlockPart part);
    void finalNorm(const std::string &out, const std::string &label, const std::string &in); // the stack's ln_f
    // out = terms[0] + terms[1] (+ terms[2] …), summed left to right.
    void residual(const std::string &out, int layer, const std::vector<std::string> &terms, const std::string &formula);

    const ModelConfig &m_c;
    int64_t T; // the current stack's length
    names::Stack m_s = names::kOnlyStack;
    bool m_source = false; // building the encoder of an encoder–decoder
    bool m_causal;
    const Input &m_input;
    const bool m_traced;
    const int m_ffnChunks;
    const bool m_onDemand; // attention tiled, the output head stopped at ln_f (engine/attentiontrace.h)
    // ropeTable(): the global layers', and Gemma 3's windowed layers' with their own base
    std::shared_ptr<const RopeTableOnDemand> m_ropeTable, m_localRopeTable;
    Program m_program;
};

} // namespace atlas
