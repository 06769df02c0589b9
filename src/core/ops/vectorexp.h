#pragma once

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <limits>

namespace atlas::ops {

// y = exp(x − m), with exactly 0 where x is −∞ (a masked score), and returns Σ y: one pass, by Eigen's vectorised
// exp. Eigen's exp clamps its argument near −88, so a masked key would otherwise keep about 1e-38 on CPUs without
// AVX-512 (tst_engine_parity); and Eigen 3.4 evaluates a select() one coefficient at a time, by libm's scalar expf
// (that took a sixth of a Qwen2.5-0.5B forward at 512 tokens).
inline float expShiftedMasked(const float *x, float *y, int64_t n, float m)
{
    using namespace Eigen::internal;
    using Packet = packet_traits<float>::type;
    constexpr int64_t kWidth = packet_traits<float>::size;
    const float ninf = -std::numeric_limits<float>::infinity();
    const Packet shift = pset1<Packet>(m), masked = pset1<Packet>(ninf);
    Packet sum = pset1<Packet>(0.0f);
    int64_t i = 0;
    for (; i + kWidth <= n; i += kWidth) {
        const Packet v = ploadu<Packet>(x + i);
        const Packet e = pand(pexp(psub(v, shift)), pcmp_lt(masked, v)); // all bits kept where v > −∞
        pstoreu(y + i, e);
        sum = padd(sum, e);
    }
    float total = predux(sum);
    for (; i < n; ++i) {
        y[i] = x[i] == ninf ? 0.0f : std::exp(x[i] - m);
        total += y[i];
    }
    return total;
}

} // namespace atlas::ops
