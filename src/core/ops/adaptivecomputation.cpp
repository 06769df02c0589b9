#include "ops/ops.h"
#include "ops/shapecheck.h"

#include <cmath>

namespace atlas::ops {

namespace {

void checkStates(const std::vector<const Tensor *> &states, const Tensor &w, const char *op)
{
    if (states.empty())
        throw Error(std::string(op) + ": no block's stream to halt after");
    for (const Tensor *x : states)
        if (x->shape() != states.front()->shape() || x->shape().size() != 2)
            throw Error(std::string(op) + ": the blocks' streams differ in shape or are not (T,D)");
    if (w.numel() != states.front()->dim(1))
        throw Error(std::string(op) + ": the halting unit reads " + std::to_string(w.numel())
            + " values, the stream is " + std::to_string(states.front()->dim(1)) + " wide");
}

} // namespace

void act_forward(Tensor &halting, Tensor &weights, Tensor &steps, Tensor &ponder, Tensor &out,
    const std::vector<const Tensor *> &states, const Tensor &w, const Tensor &b, float epsilon)
{
    checkStates(states, w, "act_forward");
    const int64_t L = int64_t(states.size()), T = states.front()->dim(0), D = states.front()->dim(1);
    const auto wv = w.matrix().row(0);
    const float bias = b.data()[0];
    requireShape(halting, {T, L}, "act_forward halting");
    requireShape(weights, {T, L}, "act_forward weights");
    requireShape(steps, {T}, "act_forward steps");
    requireShape(ponder, {T}, "act_forward ponder");
    requireShape(out, {T, D}, "act_forward out");
    out.matrix().setZero();
    weights.matrix().setZero();
    for (int64_t t = 0; t < T; ++t) {
        for (int64_t n = 0; n < L; ++n) {
            const float z = states[size_t(n)]->matrix().row(t).dot(wv) + bias;
            halting.matrix()(t, n) = 1.0f / (1.0f + std::exp(-z));
        }
        double sum = 0; // Σ h over the blocks before the halting one
        int64_t n = 0;
        for (; n < L - 1 && sum + halting.matrix()(t, n) < 1.0 - epsilon; ++n)
            sum += halting.matrix()(t, n);
        for (int64_t m = 0; m < n; ++m)
            weights.matrix()(t, m) = halting.matrix()(t, m);
        const float remainder = float(1.0 - sum);
        weights.matrix()(t, n) = remainder;
        steps.data()[t] = float(n + 1);
        ponder.data()[t] = float(n + 1) + remainder;
        for (int64_t m = 0; m <= n; ++m)
            out.matrix().row(t) += weights.matrix()(t, m) * states[size_t(m)]->matrix().row(t);
    }
}

void act_backward(const std::vector<Tensor *> &dstates, Tensor &dw, Tensor &db, const Tensor &dout, float dponder,
    const std::vector<const Tensor *> &states, const Tensor &w, const Tensor &halting, const Tensor &weights,
    const Tensor &steps)
{
    checkStates(states, w, "act_backward");
    const int64_t T = states.front()->dim(0);
    const auto wv = w.matrix().row(0);
    auto dwv = dw.matrix().row(0);
    for (int64_t t = 0; t < T; ++t) {
        const int64_t N = int64_t(steps.data()[t]); // the halting block, 1-based
        const auto dy = dout.matrix().row(t);
        const float gN = dy.dot(states[size_t(N - 1)]->matrix().row(t));
        for (int64_t n = 0; n < N; ++n) {
            dstates[size_t(n)]->matrix().row(t) += weights.matrix()(t, n) * dy;
            if (n == N - 1)
                break;
            const float h = halting.matrix()(t, n);
            const float dz = (dy.dot(states[size_t(n)]->matrix().row(t)) - gN - dponder) * h * (1.0f - h);
            dstates[size_t(n)]->matrix().row(t) += dz * wv;
            dwv += dz * states[size_t(n)]->matrix().row(t);
            db.data()[0] += dz;
        }
    }
}

} // namespace atlas::ops
