#include "analysis/attentionsparsity.h"

#include "trace/names.h"
#include "util/error.h"

#include <algorithm>
#include <limits>

namespace atlas {

double HeadSparsity::meanSupport() const
{
    double sum = 0;
    for (int n : support)
        sum += n;
    return support.empty() ? 0.0 : sum / double(support.size());
}

std::string attentionSparsityProblem(const Model &model, const Trace &trace)
{
    if (model.config.isEncoderDecoder())
        return "the Sparsity view counts one stack's heads, and " + model.name + " is an encoder–decoder";
    for (int layer = 0; layer < model.config.layers; ++layer)
        for (const char *part : {"attn.probs", "attn.masked"}) {
            const std::string name = names::layerTensor(layer, part);
            if (trace.find(name) == nullptr)
                return name + " is not traced yet";
        }
    return {};
}

AttentionSparsity attentionSparsity(const Model &model, const Trace &trace)
{
    if (const std::string why = attentionSparsityProblem(model, trace); !why.empty())
        throw Error(why);
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    AttentionSparsity out;
    out.normaliser = model.config.normaliser;
    for (int layer = 0; layer < model.config.layers; ++layer) {
        const Tensor &probs = trace.find(names::layerTensor(layer, "attn.probs"))->tensor;
        const Tensor &masked = trace.find(names::layerTensor(layer, "attn.masked"))->tensor;
        if (probs.rank() != 3 || masked.shape() != probs.shape())
            throw Error(names::layerTensor(layer, "attn.probs") + " is " + probs.shapeString() + " and its mask "
                + masked.shapeString() + ": expected two [H, T, T] tensors");
        const std::vector<float> alphas = model.attentionAlphas(layer);
        const int64_t H = probs.dim(0), T = probs.dim(1), keys = probs.dim(2);
        out.tokens = int(T);
        std::vector<HeadSparsity> &row = out.heads.emplace_back(size_t(H));
        for (int64_t h = 0; h < H; ++h) {
            HeadSparsity &s = row[size_t(h)];
            s.alpha = alphas.empty() ? 1.0 : double(alphas[alphas.size() == 1 ? 0 : size_t(h)]);
            const float *p = probs.data() + h * T * keys, *m = masked.data() + h * T * keys;
            s.allowed.assign(size_t(T), 0);
            s.support.assign(size_t(T), 0);
            for (int64_t i = 0; i < T; ++i)
                for (int64_t j = 0; j < keys; ++j) {
                    const int64_t at = i * keys + j;
                    if (m[at] == kNegInf)
                        continue;
                    ++s.allowed[size_t(i)];
                    s.support[size_t(i)] += p[at] != 0.0f;
                }
            for (int64_t i = 0; i < T; ++i) {
                s.allowedPairs += s.allowed[size_t(i)];
                s.zeros += s.allowed[size_t(i)] - s.support[size_t(i)];
            }
            out.allowed += s.allowedPairs;
            out.zeros += s.zeros;
        }
    }
    return out;
}

RowPeaks rowPeaks(const float *probs, int queries, int keys, float visible)
{
    RowPeaks peaks;
    int64_t given = 0, shown = 0;
    int rows = 0;
    for (int q = 0; q < queries; ++q) {
        const float *row = probs + int64_t(q) * keys;
        float largest = 0;
        int positive = 0;
        for (int k = 0; k < keys; ++k) {
            largest = std::max(largest, row[k]);
            positive += row[k] > 0;
            shown += row[k] >= visible;
        }
        if (positive == 0)
            continue; // a padding row, all masked
        given += positive;
        peaks.meanLargest += largest;
        peaks.meanEven += 1.0 / positive;
        ++rows;
    }
    if (rows > 0) {
        peaks.meanLargest /= rows;
        peaks.meanEven /= rows;
        peaks.visibleShare = double(shown) / double(given);
    }
    return peaks;
}

} // namespace atlas
