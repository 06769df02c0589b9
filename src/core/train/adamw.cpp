#include "train/adamw.h"

#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace atlas {

float LearningRateSchedule::at(int step) const
{
    if (step < warmupSteps)
        return peak * static_cast<float>(step + 1) / static_cast<float>(warmupSteps);
    if (step >= totalSteps || totalSteps <= warmupSteps)
        return floor;
    const double progress = double(step - warmupSteps) / double(totalSteps - warmupSteps);
    return static_cast<float>(floor + 0.5 * (1.0 + std::cos(M_PI * progress)) * (peak - floor));
}

float gradientNorm(const std::map<std::string, Tensor> &grads)
{
    // Over every core, in pieces whose sums are added in order: the same norm for any number of threads.
    constexpr int64_t kPiece = 1 << 16;
    double sumSquares = 0.0;
    for (const auto &entry : grads) { // not a structured binding: clang 14 cannot capture one in the lambda
        const Tensor &g = entry.second;
        const int64_t n = g.numel(), pieces = (n + kPiece - 1) / kPiece;
        std::vector<double> sums(static_cast<size_t>(pieces));
        parallelFor(pieces, 4, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                const int64_t first = i * kPiece;
                sums[size_t(i)] = Eigen::Map<const Eigen::ArrayXf>(g.data() + first, std::min(kPiece, n - first))
                                      .cast<double>()
                                      .square()
                                      .sum();
            }
        });
        for (const double s : sums)
            sumSquares += s;
    }
    return static_cast<float>(std::sqrt(sumSquares));
}

float clipScale(float norm, float maxNorm)
{
    return maxNorm > 0.0f && norm > maxNorm ? maxNorm / (norm + 1e-6f) : 1.0f;
}

float clipGradientNorm(std::map<std::string, Tensor> &grads, float maxNorm)
{
    const float norm = gradientNorm(grads), scale = clipScale(norm, maxNorm);
    if (scale != 1.0f)
        for (auto &[name, g] : grads)
            Eigen::Map<Eigen::ArrayXf>(g.data(), g.numel()) *= scale;
    return norm;
}

float AdamW::step(const std::map<std::string, Tensor *> &params, const std::map<std::string, Tensor> &grads, float lr)
{
    for (const auto &[name, g] : grads) {
        auto it = params.find(name);
        if (it == params.end())
            throw Error("AdamW: gradient '" + name + "' has no parameter of that name");
        if (it->second->shape() != g.shape())
            throw Error("AdamW: gradient '" + name + "' has shape " + g.shapeString() + ", its parameter "
                + it->second->shapeString());
    }
    const float norm = gradientNorm(grads), clip = clipScale(norm, m_options.maxGradNorm);
    ++m_step;
    const AdamWOptions &o = m_options;
    // Bias corrections in double, as torch computes them in Python floats.
    const float stepSize = static_cast<float>(lr / (1.0 - std::pow(double(o.beta1), m_step)));
    const float sqrtCorrection2 = static_cast<float>(std::sqrt(1.0 - std::pow(double(o.beta2), m_step)));
    for (const auto &[name, g] : grads) {
        Tensor &p = *params.at(name);
        Moments &mo = m_moments[name];
        if (mo.m.shape() != p.shape())
            mo = {Tensor(p.shape()), Tensor(p.shape())};
        const float keep = decays(p) ? 1.0f - lr * o.weightDecay : 1.0f;
        float *pd = p.data(), *md = mo.m.data(), *vd = mo.v.data();
        const float *gd = g.data();
        // One pass over memory in cache-sized blocks (torch makes one pass per arithmetic operation); the
        // arithmetic is torch's _single_tensor_adamw, operation by operation.
        parallelFor(p.numel(), 1 << 16, [&](int64_t begin, int64_t end) {
            for (int64_t b = begin; b < end; b += 4096) {
                const int64_t n = std::min<int64_t>(4096, end - b);
                using Array = Eigen::Map<Eigen::ArrayXf>;
                Array pa(pd + b, n), m(md + b, n), v(vd + b, n);
                const auto gc = Eigen::Map<const Eigen::ArrayXf>(gd + b, n) * clip;
                m = o.beta1 * m + (1.0f - o.beta1) * gc;
                v = o.beta2 * v + (1.0f - o.beta2) * gc.square();
                pa = pa * keep - stepSize * (m / (v.sqrt() / sqrtCorrection2 + o.eps));
            }
        });
    }
    return norm;
}

std::map<std::string, Tensor> AdamW::state() const
{
    std::map<std::string, Tensor> out;
    for (const auto &[name, moments] : m_moments) {
        out["m." + name] = moments.m;
        out["v." + name] = moments.v;
    }
    return out;
}

void AdamW::restoreState(const std::map<std::string, Tensor> &state, int stepCount)
{
    m_moments.clear();
    for (const auto &[key, t] : state) {
        if (key.size() < 3 || (key[0] != 'm' && key[0] != 'v') || key[1] != '.')
            throw Error("optimizer state: unexpected tensor '" + key + "' (expected m.<name> or v.<name>)");
        Moments &moments = m_moments[key.substr(2)];
        (key[0] == 'm' ? moments.m : moments.v) = t;
    }
    m_step = stepCount;
}

} // namespace atlas
