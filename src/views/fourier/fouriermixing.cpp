#include "fourier/fouriermixing.h"

#include "engine/attentiontrace.h"
#include "model/blockrecipe.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace atlas {

namespace {

// C_N and S_N: cos and sin of 2π·jk/N, with jk taken mod N first so that the angle stays small (cos of 2π·jk/N for
// jk in the millions loses digits in float).
void dftParts(int n, FourierMatrix &cosine, FourierMatrix &sine)
{
    cosine.resize(n, n);
    sine.resize(n, n);
    for (int j = 0; j < n; ++j)
        for (int k = 0; k < n; ++k) {
            const double angle = 2.0 * std::numbers::pi * double((int64_t(j) * k) % n) / n;
            cosine(j, k) = float(std::cos(angle));
            sine(j, k) = float(std::sin(angle));
        }
}

} // namespace

FourierMixing fourierMix(const FourierMatrix &x)
{
    FourierMixing m;
    const int T = int(x.rows()), d = int(x.cols());
    m.tokens = T;
    m.width = d;
    FourierMatrix sineT, cosineD, sineD;
    dftParts(T, m.cosine, sineT);
    dftParts(d, cosineD, sineD);
    const FourierMatrix a = x * cosineD, b = x * sineD; // [T, d]: each token's own transform is a_j − i b_j
    m.output = m.cosine * a - sineT * b;

    // ‖c_ij‖² = C²‖a_j‖² + S²‖b_j‖² − 2CS a_j·b_j, from three numbers per token.
    const Eigen::VectorXf aa = a.rowwise().squaredNorm(), bb = b.rowwise().squaredNorm(),
                          ab = (a.array() * b.array()).rowwise().sum();
    m.share.resize(T, T);
    for (int i = 0; i < T; ++i) {
        double total = 0;
        for (int j = 0; j < T; ++j) {
            const double c = m.cosine(i, j), s = sineT(i, j);
            const double squared = c * c * aa[j] + s * s * bb[j] - 2.0 * c * s * ab[j];
            m.share(i, j) = float(std::sqrt(std::max(0.0, squared)));
            total += m.share(i, j);
        }
        if (total > 0)
            m.share.row(i) /= float(total);
        m.largestShare += m.share.row(i).maxCoeff() / T;
        m.laterShare += m.share.row(i).tail(T - 1 - i).sum() / T;
    }
    const double logs = std::log2(std::max(T, 2)) + std::log2(std::max(d, 2));
    m.fourierWork = 4.0 * T * d * logs;
    m.attentionWork = 4.0 * T * double(d) * d + 2.0 * double(T) * T * d;
    return m;
}

std::string fourierMixingInput(const ModelConfig &config, int layer)
{
    if (config.isEncoderDecoder())
        throw Error("FNet's mixing is drawn for one stack of blocks, and this model has two (an encoder–decoder)");
    return attentionInput(config, names::kOnlyStack, layer);
}

FourierMixing fourierMixing(
    const Model &model, const Trace &trace, int layer, int head, const std::vector<int> &padding)
{
    const std::string name = fourierMixingInput(model.config, layer);
    const Tensor &x = trace.tensor(name);
    if (x.rank() != 2)
        throw Error(name + ": expected [T, d], got " + x.shapeString());
    FourierMixing m = fourierMix(x.matrix());
    m.layer = layer;
    m.input = name;
    const std::optional<LayerAttention> attention = LayerAttention::find(&model, padding, trace, {}, layer);
    if (!attention)
        throw Error(names::attentionTensor({}, layer, "probs") + " is not in this run");
    m.head = std::clamp(head, 0, int(attention->heads()) - 1);
    std::vector<float> buffer;
    const float *rows = attention->rows(ops::ScoreStage::Probs, m.head, 0, m.tokens, buffer);
    m.attention = Eigen::Map<const FourierMatrix>(rows, m.tokens, int(attention->keys()));
    m.largestWeight = m.attention.rowwise().maxCoeff().mean();
    return m;
}

} // namespace atlas
