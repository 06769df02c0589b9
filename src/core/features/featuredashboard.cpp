#include "features/featuredashboard.h"

#include "engine/blockcomponents.h"
#include "features/siterun.h"
#include "tensor/packedrows.h"
#include "util/error.h"
#include "util/text.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace atlas {

int FeatureCorpusStats::binOf(float activation)
{
    const double b = std::floor((std::log10(double(activation)) - kLowestDecade) * kBinsPerDecade);
    return int(std::clamp(b, 0.0, double(kBins - 1)));
}

double FeatureCorpusStats::binLow(int bin)
{
    return std::pow(10.0, kLowestDecade + double(bin) / kBinsPerDecade);
}

namespace {

// Keeps example (value, token) among feature f's strongest, largest first; an equal value stays behind the earlier
// token, which was offered first. Returns the slot it took, or −1.
int offer(FeatureCorpusStats &s, int64_t f, float value, int64_t token)
{
    float *values = s.topActivation.data() + f * s.top;
    int64_t *tokens = s.topToken.data() + f * s.top;
    if (tokens[s.top - 1] >= 0 && !(value > values[s.top - 1]))
        return -1;
    int slot = s.top - 1;
    while (slot > 0 && (tokens[slot - 1] < 0 || value > values[slot - 1])) {
        values[slot] = values[slot - 1];
        tokens[slot] = tokens[slot - 1];
        std::copy_n(s.context.data() + (f * s.top + slot - 1) * s.contextSize(), s.contextSize(),
            s.context.data() + (f * s.top + slot) * s.contextSize());
        --slot;
    }
    values[slot] = value;
    tokens[slot] = token;
    return slot;
}

} // namespace

FeatureCorpusStats featureCorpusPass(std::shared_ptr<const Model> model, const SparseAutoencoder &sae,
    const SaeSite &site, const std::vector<int> &tokens, const FeatureCorpusOptions &o,
    const std::function<bool(int64_t, int64_t)> &progress, const std::atomic<bool> *cancel, const WorkBudget &budget)
{
    const auto start = std::chrono::steady_clock::now();
    const std::string tensor = saeSiteTensor(*model, site);
    if (sae.inputSize() != model->config.dModel)
        throw Error("the dictionary's W_enc is " + sae.wEnc.shapeString() + ", but " + site.hookName() + " of "
            + model->name + " has " + std::to_string(model->config.dModel) + " dimensions");
    if (o.maxTokens < 1 || o.maxTokens > 10'000'000)
        throw Error("feature dashboard: read 1 … 10000000 tokens of the corpus, not " + std::to_string(o.maxTokens));
    if (o.top < 1 || o.top > 1000 || o.before < 0 || o.after < 0 || o.before + o.after > 1000)
        throw Error("feature dashboard: keep 1 … 1000 examples of at most 1000 tokens each");
    if (tokens.empty())
        throw Error("feature dashboard: the corpus has no tokens");
    const int64_t N = std::min<int64_t>(o.maxTokens, int64_t(tokens.size())), F = sae.width();
    const int64_t window = std::max(1, model->config.context);
    FeatureCorpusStats s;
    s.features = F;
    s.top = o.top;
    s.before = o.before;
    s.after = o.after;
    s.window = int(window);
    const int64_t C = s.contextSize();
    const double kept
        = double(F) * (double(o.top) * double(C + 2) + FeatureCorpusStats::kBins + 1) * 4 + double(N) * sizeof(int);
    const double perWindow = double(std::min(window, N)) * double(2 * F + model->config.dModel) * 4;
    const std::string what = "the feature dashboard's pass over " + countOf(size_t(N), "token") + " ("
        + countOf(size_t(F), "feature") + ")";
    if (const std::string why = overBudget(what, 0, kept + perWindow, budget); !why.empty())
        throw Error(why);
    s.tokens.assign(tokens.begin(), tokens.begin() + N);
    s.topActivation.assign(size_t(F * o.top), 0.0f);
    s.topToken.assign(size_t(F * o.top), -1);
    s.context.assign(size_t(F * o.top * C), std::numeric_limits<float>::quiet_NaN());
    s.activeCount.assign(size_t(F), 0);
    s.histogram.assign(size_t(F) * FeatureCorpusStats::kBins, 0.0f);

    for (int64_t begin = 0; begin < N; begin += window) {
        if ((cancel && cancel->load()) || (progress && !progress(begin, N)))
            throw Error("feature dashboard: cancelled");
        const int64_t end = std::min(N, begin + window), T = end - begin;
        Input input;
        input.tokens.assign(s.tokens.begin() + begin, s.tokens.begin() + end);
        const Tensor f = sae.encode(runThroughSite(model, tensor, input)->trace().tensor(tensor));
        for (int64_t t = 0; t < T; ++t) {
            const float *row = f.data() + t * F;
            for (int64_t i = 0; i < F; ++i) {
                const float a = row[i];
                if (!(a > 0))
                    continue;
                ++s.activeCount[size_t(i)];
                s.histogram[size_t(i * FeatureCorpusStats::kBins + FeatureCorpusStats::binOf(a))] += 1;
                const int slot = offer(s, i, a, begin + t);
                if (slot < 0)
                    continue;
                float *context = s.context.data() + (i * s.top + slot) * C;
                for (int64_t c = 0; c < C; ++c) {
                    const int64_t u = t - s.before + c;
                    context[c] = u >= 0 && u < T ? f.data()[u * F + i] : std::numeric_limits<float>::quiet_NaN();
                }
            }
        }
    }
    if (progress)
        progress(N, N);
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return s;
}

LogitEffects featureLogitEffects(const Model &model, const SparseAutoencoder &sae, int feature, int count)
{
    const ModelConfig &c = model.config;
    if (feature < 0 || feature >= sae.width())
        throw Error("feature " + std::to_string(feature) + ": the dictionary has features 0 \u2026 "
            + std::to_string(sae.width() - 1));
    if (sae.inputSize() != c.dModel)
        throw Error("the dictionary's W_dec is " + sae.wDec.shapeString() + ", but the model's stream has "
            + std::to_string(c.dModel) + " dimensions");
    RowVector d = ConstRowVectorMap(sae.wDec.data() + int64_t(feature) * c.dModel, c.dModel);
    if (c.norm == NormKind::LayerNorm)
        d.array() -= d.mean();
    if (!model.lnfWeight.empty())
        d = d.cwiseProduct(ConstRowVectorMap(normScale(model.lnfWeight, c).data(), c.dModel));
    const Tensor &head = model.outputWeight();
    const int64_t V = head.dim(0);
    RowVector e(V);
    if (const PackedRows *rows = head.packing())
        packedWeightProduct(MatrixMap(e.data(), 1, V), ConstMatrixMap(d.data(), 1, c.dModel), *rows);
    else
        e.noalias() = d * head.matrix().transpose();
    std::vector<std::pair<int, float>> all;
    all.reserve(size_t(V));
    for (int64_t v = 0; v < V; ++v)
        all.emplace_back(int(v), e[v]);
    LogitEffects out;
    const size_t n = std::min<size_t>(size_t(std::max(0, count)), all.size());
    const auto larger = [](const auto &a, const auto &b) {
        return a.second > b.second || (a.second == b.second && a.first < b.first);
    };
    const auto smaller = [](const auto &a, const auto &b) {
        return a.second < b.second || (a.second == b.second && a.first < b.first);
    };
    std::partial_sort(all.begin(), all.begin() + ptrdiff_t(n), all.end(), larger);
    out.raised.assign(all.begin(), all.begin() + ptrdiff_t(n));
    std::partial_sort(all.begin(), all.begin() + ptrdiff_t(n), all.end(), smaller);
    out.lowered.assign(all.begin(), all.begin() + ptrdiff_t(n));
    return out;
}

std::vector<std::pair<int, float>> nearestFeatures(const SparseAutoencoder &sae, int feature, int count)
{
    const int64_t F = sae.width();
    if (feature < 0 || feature >= F)
        throw Error(
            "feature " + std::to_string(feature) + ": the dictionary has features 0 \u2026 " + std::to_string(F - 1));
    const ConstMatrixMap w = sae.wDec.matrix();
    const RowVector own = w.row(feature);
    const double ownNorm = own.norm();
    Eigen::VectorXf dots = w * own.transpose();
    std::vector<std::pair<int, float>> all;
    for (int64_t i = 0; i < F; ++i) {
        if (i == feature)
            continue;
        const double norms = ownNorm * double(w.row(i).norm());
        all.emplace_back(int(i), norms > 0 ? float(double(dots[i]) / norms) : 0.0f);
    }
    const size_t n = std::min<size_t>(size_t(std::max(0, count)), all.size());
    std::partial_sort(all.begin(), all.begin() + ptrdiff_t(n), all.end(), [](const auto &a, const auto &b) {
        return a.second > b.second || (a.second == b.second && a.first < b.first);
    });
    all.resize(n);
    return all;
}

} // namespace atlas
