#include "analysis/lostinthemiddle.h"

#include "engine/engine.h"
#include "trace/names.h"
#include "train/task.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>

namespace atlas {

namespace {

struct OneExample
{
    bool exact = true;
    int digitsRight = 0, digits = 0;
    std::vector<std::vector<float>> attention; // [layer][pair]
};

OneExample measure(std::shared_ptr<const Model> model, const Example &example)
{
    Engine engine(model, inputOf(example));
    engine.runToEnd();
    const Trace &trace = engine.trace();
    const Tensor &probs = trace.tensor("next_probs");
    const int64_t V = probs.dim(1);
    OneExample r;
    int answer = -1; // the asked key, whose prediction is the value's first digit
    for (size_t t = 0; t < example.targets.size(); ++t) {
        if (example.targets[t] < 0)
            continue;
        if (answer < 0)
            answer = int(t);
        const float *row = probs.data() + int64_t(t) * V;
        const bool right = std::max_element(row, row + V) - row == example.targets[t];
        r.exact = r.exact && right;
        r.digitsRight += right;
        ++r.digits;
    }
    for (int l = 0; l < model->config.layers; ++l) {
        const Tensor &a = trace.tensor(names::attentionTensor({}, l, "probs"));
        const int64_t H = a.dim(0);
        std::vector<float> mass(kRetrievalPairs, 0.0f);
        for (int64_t h = 0; h < H; ++h)
            for (int key = 0; key < kRetrievalPairs * kRetrievalPairWidth - 1; ++key)
                mass[size_t(key / kRetrievalPairWidth)] += a.slice(h)(answer, key) / float(H);
        r.attention.push_back(std::move(mass));
    }
    return r;
}

} // namespace

float RetrievalByPosition::middle() const
{
    const int n = int(exact.size());
    float sum = 0;
    int count = 0;
    for (int p = 0; p < n; ++p)
        if (4 * p >= n - 1 && 4 * p <= 3 * (n - 1)) {
            sum += exact[size_t(p)];
            ++count;
        }
    return count ? sum / float(count) : 0.0f;
}

std::string retrievalProblem(const Model &model)
{
    if (model.config.task != "retrieval" && model.config.task != "retrieval-ends")
        return model.name
            + " was not trained on key–value retrieval: open the built-in retrieval or retrieval-ends, or train one "
              "(train --task retrieval)";
    if (model.config.isEncoderDecoder() || model.config.reversible)
        return model.name + " has two stacks or reversible blocks";
    return {};
}

RetrievalByPosition retrievalByPosition(
    std::shared_ptr<const Model> model, int examples, const std::atomic<bool> *cancel)
{
    if (const std::string why = retrievalProblem(*model); !why.empty())
        throw Error("lost in the middle: " + why);
    const int L = model->config.layers;
    RetrievalByPosition out;
    out.model = model->name;
    out.examples = examples;
    out.attention.assign(size_t(L), std::vector<std::vector<float>>(kRetrievalPairs));
    for (int p = 0; p < kRetrievalPairs; ++p) {
        if (cancel && cancel->load())
            return {};
        std::mt19937_64 rng(12345 + uint64_t(p));
        std::vector<Example> set;
        for (int i = 0; i < examples; ++i)
            set.push_back(retrievalExample(rng, true, p));
        std::vector<OneExample> results(set.size());
        parallelFor(int64_t(set.size()), 1, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i)
                results[size_t(i)] = measure(model, set[size_t(i)]);
        });
        int exact = 0, right = 0, digits = 0;
        std::vector<std::vector<float>> mass(size_t(L), std::vector<float>(kRetrievalPairs, 0.0f));
        for (const OneExample &r : results) {
            exact += r.exact;
            right += r.digitsRight;
            digits += r.digits;
            for (int l = 0; l < L; ++l)
                for (int q = 0; q < kRetrievalPairs; ++q)
                    mass[size_t(l)][size_t(q)] += r.attention[size_t(l)][size_t(q)] / float(std::max(examples, 1));
        }
        out.exact.push_back(float(exact) / float(std::max(examples, 1)));
        out.digits.push_back(float(right) / float(std::max(digits, 1)));
        for (int l = 0; l < L; ++l)
            out.attention[size_t(l)][size_t(p)] = mass[size_t(l)];
    }
    return out;
}

} // namespace atlas
