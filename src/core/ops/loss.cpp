#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>

namespace atlas::ops {

namespace {

// Checks targets against logits (T,V) and returns how many are counted (not -1).
int64_t countedTargets(const std::vector<int> &targets, int64_t T, int64_t V)
{
    if (static_cast<int64_t>(targets.size()) != T)
        throw Error("targets: " + std::to_string(targets.size()) + " ids for " + std::to_string(T)
            + " positions (give one per input token, -1 to skip a position)");
    int64_t n = 0;
    for (size_t t = 0; t < targets.size(); ++t) {
        if (targets[t] < -1 || targets[t] >= V)
            throw Error("targets: id " + std::to_string(targets[t]) + " at position " + std::to_string(t)
                + " is outside the vocabulary [0, " + std::to_string(V) + ") (and is not -1)");
        n += targets[t] != -1;
    }
    return n;
}

} // namespace

float crossentropy_forward(Tensor &losses, const Tensor &logits, const std::vector<int> &targets)
{
    const int64_t T = logits.dim(0), V = logits.dim(1);
    const int64_t counted = countedTargets(targets, T, V);
    requireShape(losses, {T}, "cross-entropy losses");
    // log-sum-exp of the logits (not the log of the float probabilities, which underflow to 0)
    parallelFor(T, 65536 / std::max<int64_t>(V, 1), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const int target = targets[static_cast<size_t>(t)];
            if (target == -1) {
                losses.data()[t] = 0.0f;
                continue;
            }
            Eigen::Map<const Eigen::ArrayXf> z(logits.data() + t * V, V);
            const float m = z.maxCoeff();
            const double lse = double(m) + std::log((z - m).exp().cast<double>().sum()); // exp in float: vectorised
            losses.data()[t] = static_cast<float>(lse - double(z[target]));
        }
    });
    double sum = 0.0;
    for (int64_t t = 0; t < T; ++t)
        sum += losses.data()[t];
    return counted ? static_cast<float>(sum / double(counted)) : 0.0f;
}

void crossentropy_softmax_backward(Tensor &dlogits, const Tensor &probs, const std::vector<int> &targets)
{
    const int64_t T = probs.dim(0), V = probs.dim(1);
    const int64_t counted = countedTargets(targets, T, V);
    requireShape(dlogits, probs.shape(), "cross-entropy backward dlogits");
    if (counted == 0)
        return;
    const float inv = 1.0f / static_cast<float>(counted);
    parallelFor(T, 65536 / std::max<int64_t>(V, 1), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const int target = targets[static_cast<size_t>(t)];
            if (target == -1)
                continue;
            Eigen::Map<Eigen::ArrayXf> g(dlogits.data() + t * V, V);
            g += inv * Eigen::Map<const Eigen::ArrayXf>(probs.data() + t * V, V);
            g[target] -= inv;
        }
    });
}

} // namespace atlas::ops
