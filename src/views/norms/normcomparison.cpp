#include "norms/normcomparison.h"

#include "model/blockrecipe.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

// Each column of `x` over rows [0, rows): its mean and √(variance + ε), in double.
void columnStatistics(
    const NormMatrix &x, int rows, float epsilon, std::vector<double> &mean, std::vector<double> &scale)
{
    const int D = int(x.cols());
    mean.assign(size_t(D), 0.0);
    scale.assign(size_t(D), 0.0);
    for (int f = 0; f < D; ++f) {
        double sum = 0, squares = 0;
        for (int t = 0; t < rows; ++t)
            sum += x(t, f);
        const double mu = sum / rows;
        for (int t = 0; t < rows; ++t)
            squares += (x(t, f) - mu) * (x(t, f) - mu);
        mean[size_t(f)] = mu;
        scale[size_t(f)] = std::sqrt(squares / rows + double(epsilon));
    }
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
    std::vector<double> mean, scale;
    columnStatistics(x, T, epsilon, mean, scale);
    for (int f = 0; f < D; ++f) {
        n.featureMean.push_back(float(mean[size_t(f)]));
        n.featureScale.push_back(float(scale[size_t(f)]));
        for (int t = 0; t < T; ++t)
            n.batchNormed(t, f) = float((x(t, f) - mean[size_t(f)]) / scale[size_t(f)]);
    }
    for (int t = 0; t < T; ++t) { // token t's BatchNorm had the batch held tokens 0 … t only
        std::vector<double> causalMean, causalScale;
        columnStatistics(x, t + 1, epsilon, causalMean, causalScale);
        double change = 0;
        for (int f = 0; f < D; ++f)
            change += std::fabs((x(t, f) - causalMean[size_t(f)]) / causalScale[size_t(f)]
                - (x(t, f) - mean[size_t(f)]) / scale[size_t(f)]);
        n.laterTokensChange.push_back(change / D);
    }
    return n;
}

std::pair<std::string, std::string> firstNormTensors(const ModelConfig &config, int layer)
{
    if (config.isEncoderDecoder())
        return {};
    const BlockRecipe recipe = blockRecipe(config, names::kOnlyStack, layer);
    for (const BlockStep &step : recipe.steps)
        if (step.kind == BlockStep::Kind::Norm)
            return {
                blockTensor(names::kOnlyStack, layer, step.in.at(0)), blockTensor(names::kOnlyStack, layer, step.out)};
    return {};
}

NormComparison compareNorms(const Model &model, const Trace &trace, int layer)
{
    const ModelConfig &c = model.config;
    if (layer < 0 || layer >= c.layers)
        throw Error("layer " + std::to_string(layer) + " is outside the model's " + std::to_string(c.layers));
    const auto [inputName, outputName] = firstNormTensors(c, layer);
    if (inputName.empty())
        throw Error("the norms are compared on a model with one stack of blocks");
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
    BlockPart part = BlockPart::NormAttention;
    for (const BlockStep &step : blockRecipe(c, names::kOnlyStack, layer).steps)
        if (step.kind == BlockStep::Kind::Norm) {
            part = step.norm;
            break;
        }
    const BlockWeights &b = model.blocks[size_t(layer)];
    const Tensor &gamma = b.normWeight(part), &beta = b.normBias(part);
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
