#include "norms/normcomparison.h"

#include "model/blockrecipe.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace atlas {

namespace {

// Column statistics of `x`'s first rows, accumulated one row at a time: after add(t), each column's mean over rows
// 0 … t and √(variance + ε). The whole input's statistics are the last row's, so a token's BatchNorm over the tokens
// up to it and over all of them come from one formula.
struct RunningColumns
{
    std::vector<double> sum, squares, mean, scale;
    int rows = 0;

    explicit RunningColumns(int width)
        : sum(size_t(width))
        , squares(size_t(width))
        , mean(size_t(width))
        , scale(size_t(width))
    {
    }

    void add(const NormMatrix &x, int t, float epsilon)
    {
        ++rows;
        for (size_t f = 0; f < sum.size(); ++f) {
            const double v = x(t, int(f));
            sum[f] += v;
            squares[f] += v * v;
            mean[f] = sum[f] / rows;
            scale[f] = std::sqrt(std::max(0.0, squares[f] / rows - mean[f] * mean[f]) + double(epsilon));
        }
    }
};

// The first Norm step of block `layer`'s recipe, or nullopt for a model with two stacks.
std::optional<BlockStep> firstNormStep(const ModelConfig &config, int layer)
{
    if (config.isEncoderDecoder())
        return std::nullopt;
    for (const BlockStep &step : blockRecipe(config, names::kOnlyStack, layer).steps)
        if (step.kind == BlockStep::Kind::Norm)
            return step;
    return std::nullopt;
}

} // namespace

NormComparison compareNorms(const NormMatrix &x, float epsilon, bool rms)
{
    const int T = int(x.rows()), D = int(x.cols());
    if (T < 1 || D < 1)
        throw Error("comparing norms needs at least one token and one feature");
    NormComparison n;
    n.tokens = T;
    n.width = D;
    n.rms = rms;
    n.epsilon = epsilon;
    n.tokenNormed.resize(T, D);
    n.batchNormed.resize(T, D);
    for (int t = 0; t < T; ++t) { // LayerNorm (or RMSNorm) of each row, as ops::layernorm_forward computes it
        double sum = 0, squares = 0;
        for (int f = 0; f < D; ++f)
            sum += x(t, f);
        const double mu = rms ? 0.0 : sum / D;
        for (int f = 0; f < D; ++f)
            squares += (x(t, f) - mu) * (x(t, f) - mu);
        const double scale = std::sqrt(squares / D + double(epsilon));
        n.tokenMean.push_back(float(mu));
        n.tokenScale.push_back(float(scale));
        for (int f = 0; f < D; ++f)
            n.tokenNormed(t, f) = float((x(t, f) - mu) / scale);
    }
    RunningColumns all(D);
    for (int t = 0; t < T; ++t)
        all.add(x, t, epsilon);
    for (int f = 0; f < D; ++f) {
        n.featureMean.push_back(float(all.mean[size_t(f)]));
        n.featureScale.push_back(float(all.scale[size_t(f)]));
        for (int t = 0; t < T; ++t)
            n.batchNormed(t, f) = float((x(t, f) - all.mean[size_t(f)]) / all.scale[size_t(f)]);
    }
    RunningColumns upTo(D); // token t's BatchNorm had the batch held tokens 0 … t only
    for (int t = 0; t < T; ++t) {
        upTo.add(x, t, epsilon);
        double change = 0;
        for (int f = 0; f < D; ++f)
            change += std::fabs((x(t, f) - upTo.mean[size_t(f)]) / upTo.scale[size_t(f)]
                - (x(t, f) - all.mean[size_t(f)]) / all.scale[size_t(f)]);
        n.laterTokensChange.push_back(change / D);
    }
    return n;
}

std::pair<std::string, std::string> firstNormTensors(const ModelConfig &config, int layer)
{
    const std::optional<BlockStep> step = firstNormStep(config, layer);
    if (!step)
        return {};
    return {blockTensor(names::kOnlyStack, layer, step->in.at(0)), blockTensor(names::kOnlyStack, layer, step->out)};
}

NormComparison compareNorms(const Model &model, const Trace &trace, int layer)
{
    const ModelConfig &c = model.config;
    if (layer < 0 || layer >= c.layers)
        throw Error("layer " + std::to_string(layer) + " is outside the model's " + std::to_string(c.layers));
    const std::optional<BlockStep> step = firstNormStep(c, layer);
    if (!step)
        throw Error("the norms are compared on a model with one stack of blocks");
    const std::string inputName = blockTensor(names::kOnlyStack, layer, step->in.at(0)),
                      outputName = blockTensor(names::kOnlyStack, layer, step->out);
    const TraceEntry *input = trace.find(inputName), *output = trace.find(outputName);
    if (!input || !output)
        throw Error("the trace holds no " + (input ? outputName : inputName));
    const Tensor &xt = input->tensor;
    const int64_t T = xt.dim(0), D = xt.dim(1);
    NormMatrix x(T, D);
    std::copy_n(xt.data(), T * D, x.data());
    NormComparison n = compareNorms(x, c.lnEpsilon, c.norm == NormKind::RmsNorm);
    n.layer = layer;
    n.input = inputName;
    n.output = outputName;
    const BlockWeights &b = model.blocks[size_t(layer)];
    const Tensor &gamma = b.normWeight(step->norm), &beta = b.normBias(step->norm);
    const float shift = c.normAddsOne ? 1.0f : 0.0f; // Gemma's norms multiply by 1 + w
    const Tensor &y = output->tensor;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t f = 0; f < D; ++f) {
            const float ours = n.tokenNormed(t, f) * (gamma.data()[f] + shift) + (beta.numel() ? beta.data()[f] : 0.0f);
            n.traceDifference = std::max(n.traceDifference, double(std::fabs(ours - y.data()[t * D + f])));
        }
    return n;
}

} // namespace atlas
