#include "features/steering.h"

#include "features/saetraining.h"
#include "features/siterun.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace atlas {

Tensor featureDirection(const SparseAutoencoder &sae, int feature)
{
    if (feature < 0 || feature >= sae.width())
        throw Error("steering: feature " + std::to_string(feature) + " of a dictionary of features 0 … "
            + std::to_string(sae.width() - 1));
    Tensor v = Tensor::uninitialized({sae.inputSize()});
    std::copy_n(sae.wDec.data() + int64_t(feature) * sae.inputSize(), sae.inputSize(), v.data());
    return v;
}

Steering addedFeature(const SaeDirectory &d, int feature, double strength)
{
    Steering s;
    s.site = d.output();
    s.direction = featureDirection(d.sae, feature);
    s.strength = strength;
    return s;
}

Steering clampedFeature(const SaeDirectory &d, int feature, double value)
{
    if (d.writes)
        throw Error("steering: a transcoder's feature is read at " + d.site.hookName() + " and written at "
            + d.writes->hookName() + ", so it is not clamped; add its row instead");
    (void)featureDirection(d.sae, feature); // the feature's range checked
    Steering s;
    s.site = d.site;
    s.dictionary = std::make_shared<const SparseAutoencoder>(d.sae);
    s.clampFeature = feature;
    s.clampValue = value;
    return s;
}

std::vector<std::string> splitPrompts(const std::string &text)
{
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t bar = text.find('|');; bar = text.find('|', start)) {
        out.push_back(text.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
        if (bar == std::string::npos)
            break;
        start = bar + 1;
    }
    return out;
}

Tensor differenceOfMeans(std::shared_ptr<const Model> model, const SaeSite &site, const std::vector<std::string> &a,
    const std::vector<std::string> &b)
{
    if (a.empty() || b.empty())
        throw Error("steering: a difference of means needs texts on both sides");
    const auto tokenizer = tokenizerForModel(*model);
    const auto mean = [&](const std::vector<std::string> &texts) {
        Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(model->config.dModel);
        int64_t rows = 0;
        for (const std::string &text : texts) {
            Input input;
            input.tokens = tokenizer->encode(text);
            if (input.tokens.empty())
                throw Error("steering: the text \"" + text + "\" has no tokens");
            const Tensor x = siteRows(model, site, input);
            sum += x.matrix().cast<double>().colwise().sum();
            rows += x.dim(0);
        }
        return Eigen::RowVectorXd(sum / double(rows));
    };
    Tensor v = Tensor::uninitialized({int64_t(model->config.dModel)});
    RowVectorMap(v.data(), v.numel()) = (mean(a) - mean(b)).cast<float>();
    return v;
}

void applySteering(Tensor &rows, const Steering &s)
{
    const int64_t D = rows.dim(1);
    if (s.dictionary && s.clampFeature >= 0) {
        if (s.dictionary->inputSize() != D)
            throw Error("steering: a dictionary over " + std::to_string(s.dictionary->inputSize()) + " dimensions for "
                + std::to_string(D));
        const Tensor f = s.dictionary->encode(rows);
        const Tensor v = featureDirection(*s.dictionary, s.clampFeature);
        const ConstRowVectorMap direction(v.data(), D);
        for (int64_t t = 0; t < rows.dim(0); ++t)
            rows.matrix().row(t) += float(s.clampValue - f.data()[t * f.dim(1) + s.clampFeature]) * direction;
        return;
    }
    if (s.direction.numel() != D)
        throw Error("steering: a direction of " + std::to_string(s.direction.numel()) + " numbers for a stream of "
            + std::to_string(D));
    rows.matrix().rowwise() += ConstRowVectorMap(s.direction.data(), D) * float(s.strength);
}

namespace {

// The run of `input` with the site's rows steered, to its end.
std::unique_ptr<Engine> steeredRun(std::shared_ptr<const Model> model, const Input &input, const Steering &steering)
{
    const std::string site = saeSiteTensor(*model, steering.site);
    std::unique_ptr<Engine> run = runThroughSite(std::move(model), site, input);
    changeSiteAndFinish(*run, site, [&](Tensor &rows) { applySteering(rows, steering); });
    return run;
}

} // namespace

Tensor steeredLogits(std::shared_ptr<const Model> model, const Input &input, const Steering &steering)
{
    return steeredRun(model, input, steering)->trace().tensor("logits");
}

std::vector<NextTokenShift> nextTokenShift(
    std::shared_ptr<const Model> model, const Input &input, const Steering &steering, int count)
{
    Steering none = steering;
    none.strength = 0;
    none.dictionary = nullptr;
    none.clampFeature = -1;
    if (none.direction.empty())
        none.direction = Tensor({int64_t(model->config.dModel)});
    const Tensor with = steeredLogits(model, input, steering), without = steeredLogits(model, input, none);
    const int64_t V = with.dim(1), last = with.dim(0) - 1;
    const auto softmax = [&](const Tensor &logits) {
        std::vector<double> p(static_cast<size_t>(V));
        const float *z = logits.data() + last * V;
        const double top = *std::max_element(z, z + V);
        double sum = 0;
        for (int64_t v = 0; v < V; ++v)
            sum += p[size_t(v)] = std::exp(double(z[v]) - top);
        for (double &x : p)
            x /= sum;
        return p;
    };
    const std::vector<double> p0 = softmax(without), p1 = softmax(with);
    std::vector<int> order(static_cast<size_t>(V));
    std::iota(order.begin(), order.end(), 0);
    const size_t n = std::min<size_t>(size_t(std::max(0, count)), order.size());
    std::partial_sort(order.begin(), order.begin() + ptrdiff_t(n), order.end(), [&](int a, int b) {
        const double da = std::abs(p1[size_t(a)] - p0[size_t(a)]), db = std::abs(p1[size_t(b)] - p0[size_t(b)]);
        return da > db || (da == db && a < b);
    });
    std::vector<NextTokenShift> out;
    for (size_t i = 0; i < n; ++i)
        out.push_back({order[i], float(p0[size_t(order[i])]), float(p1[size_t(order[i])])});
    return out;
}

Generator steeredGenerator(std::shared_ptr<const Model> model, const std::vector<int> &prompt, const Steering &steering,
    SamplingOptions options)
{
    if (prompt.empty())
        throw Error("steering: an empty prompt");
    std::string site = saeSiteTensor(*model, steering.site);
    return Generator(std::move(model), prompt, options,
        StreamEdit {std::move(site), [steering](Tensor &row) { applySteering(row, steering); }});
}

std::vector<int> steeredContinuation(std::shared_ptr<const Model> model, const std::vector<int> &prompt,
    const Steering &steering, int count, SamplingOptions options)
{
    return steeredGenerator(std::move(model), prompt, steering, options).continuation(count);
}

} // namespace atlas
