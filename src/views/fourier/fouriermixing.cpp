#include "fourier/fouriermixing.h"

#include "engine/attentiontrace.h"
#include "model/blockrecipe.h"
#include "ops/ops.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace atlas {

FourierMixing fourierMix(const FourierMatrix &x, int length)
{
    FourierMixing m;
    const int T = int(x.rows()), d = int(x.cols());
    m.tokens = T;
    m.width = d;
    m.length = length > 0 ? length : T;
    FourierMatrix sineT, cosineD, sineD;
    ops::dft_parts(m.cosine, sineT, T, m.length);
    ops::dft_parts(cosineD, sineD, d, d);
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
    const double logs = std::log2(std::max(m.length, 2)) + std::log2(std::max(d, 2));
    m.fourierWork = 4.0 * m.length * d * logs;
    m.attentionWork = 4.0 * T * double(d) * d + 2.0 * double(T) * T * d;
    return m;
}

std::string fourierMixingInput(const ModelConfig &config, int layer)
{
    if (config.isEncoderDecoder())
        throw Error("FNet's mixing is drawn for one stack of blocks, and this model has two (an encoder–decoder)");
    return mixingInput(config, names::kOnlyStack, layer);
}

FourierMixing fourierMixing(
    const Model &model, const Trace &trace, int layer, int head, const std::vector<int> &padding)
{
    const std::string name = fourierMixingInput(model.config, layer);
    const Tensor &x = trace.tensor(name);
    if (x.rank() != 2)
        throw Error(name + ": expected [T, d], got " + x.shapeString());
    const bool fnet = model.config.fourier.mixes(layer);
    FourierMixing m = fourierMix(x.matrix(), fnet ? model.config.context : 0);
    m.layer = layer;
    m.input = name;
    m.fnetBlock = fnet;
    if (fnet)
        return m;
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
