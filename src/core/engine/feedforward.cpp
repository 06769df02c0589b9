#include "engine/feedforward.h"

#include "engine/blockcomponents.h"

#include "ops/ops.h"
#include "util/error.h"

namespace atlas {

void expertsForward(
    Tensor &out, const Tensor &x, const Tensor &choice, const Tensor &gate, const ModelConfig &c, const BlockWeights &b)
{
    if (c.stacksExperts())
        return ops::moe_stacked_forward(out, x, choice, gate,
            {b.weight(BlockPart::ExpertsGateUp), b.bias(BlockPart::ExpertsGateUp), b.weight(BlockPart::ExpertsDown),
                b.bias(BlockPart::ExpertsDown), c.activation, c.gluClamp});
    if (c.gatedFfn) {
        std::vector<ops::GatedExpertWeights> experts;
        for (const ExpertWeights &e : b.experts)
            experts.push_back(
                {e.weight(BlockPart::Gate), e.weight(BlockPart::Up), e.weight(BlockPart::Down), c.activation});
        return ops::moe_gated_forward(out, x, choice, gate, experts);
    }
    std::vector<ops::FfnWeights> experts;
    for (const ExpertWeights &e : b.experts)
        experts.push_back({e.weight(BlockPart::Up), e.bias(BlockPart::Up), e.weight(BlockPart::Down),
            e.bias(BlockPart::Down), c.activation});
    ops::moe_forward(out, x, choice, gate, experts);
}

std::string activationFormula(Activation act)
{
    return act == Activation::Relu     ? "ReLU(u) = max(0, u)"
        : act == Activation::GeluTanh  ? "GELU(u) = ½u(1 + tanh(√(2/π)(u + 0.044715u³)))"
        : act == Activation::Silu      ? "SiLU(u) = u / (1 + e^(−u))"
        : act == Activation::QuickGelu ? "QuickGELU(u) = u / (1 + e^(−1.702u))"
                                       : "GELU(u) = ½u(1 + erf(u/√2))";
}

const char *activationLabel(Activation act)
{
    return act == Activation::Relu     ? "ReLU"
        : act == Activation::Silu      ? "SiLU"
        : act == Activation::QuickGelu ? "QuickGELU"
                                       : "GELU";
}

Tensor copyRows(const Tensor &t, int64_t begin, int64_t end)
{
    Tensor rows = Tensor::uninitialized({end - begin, t.dim(1)});
    rows.matrix() = t.matrix().middleRows(begin, end - begin);
    return rows;
}

FeedForwardActivations feedForwardActivations(const ModelConfig &c, const BlockWeights &b, const Tensor &x)
{
    const int64_t rows = x.dim(0), F = c.dFF;
    FeedForwardActivations a;
    a.up = Tensor::uninitialized({rows, F});
    a.act = Tensor::uninitialized({rows, F});
    moduleForward(a.up, x, blockModule(c, b, BlockPart::Up));
    if (!c.gatedFfn) {
        ops::activation_forward(a.act, a.up, c.activation);
        return a;
    }
    a.gate = Tensor::uninitialized({rows, F});
    moduleForward(a.gate, x, blockModule(c, b, BlockPart::Gate));
    ops::gated_activation_forward(a.act, a.gate, a.up, c.activation, c.gluClamp);
    return a;
}

void feedForwardDown(Tensor &out, const ModelConfig &c, const BlockWeights &b, const Tensor &act)
{
    moduleForward(out, act, blockModule(c, b, BlockPart::Down));
}

void feedForwardInChunks(Tensor &out, const Tensor &x, const ModelConfig &c, const BlockWeights &b, int chunks)
{
    const int64_t T = x.dim(0), D = c.dModel;
    if (out.shape() != Shape {T, D})
        throw Error("chunked FFN output: expected shape " + Tensor::shapeString({T, D}) + ", got " + out.shapeString());
    for (int chunk = 0; chunk < chunks; ++chunk) {
        const auto [begin, end] = ops::chunk_rows(T, chunks, chunk);
        if (begin == end)
            continue;
        const FeedForwardActivations a = feedForwardActivations(c, b, copyRows(x, begin, end));
        Tensor down = Tensor::uninitialized({end - begin, D});
        feedForwardDown(down, c, b, a.act);
        out.matrix().middleRows(begin, end - begin) = down.matrix();
    }
}

std::string chunkedFeedForwardFormula(const ModelConfig &c, int chunks, int64_t tokens)
{
    const std::string each = " for each of " + std::to_string(chunks) + " chunks X_c of "
        + std::to_string((tokens + chunks - 1) / chunks) + " rows (" + activationFormula(c.activation) + ")";
    const std::string act = activationLabel(c.activation);
    if (c.gatedFfn)
        return "M_c = (" + act + "(X_c W_gateᵀ" + (c.mlpBias ? " + b_gate" : "") + ") ⊙ "
            + (c.mlpBias ? "(X_c W_upᵀ + b_up)" : "X_c W_upᵀ") + ") W_downᵀ" + (c.mlpBias ? " + b_down" : "") + each;
    if (!c.storesConv1d())
        return "M_c = " + act + "(X_c W_upᵀ" + (c.mlpBias ? " + b_up" : "") + ") W_downᵀ"
            + (c.mlpBias ? " + b_down" : "") + each;
    return "M_c = " + act + "(X_c W_fc + b_fc) W_proj + b_proj" + each;
}

} // namespace atlas
