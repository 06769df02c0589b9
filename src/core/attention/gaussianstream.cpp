// GCC 12 warns inside Eigen's AVX-512 sin/cos, used below, that an _mm512_undefined value is used (GCC bug
// 105593, a false positive). The warning points into the intrinsics header, so it is silenced for the file.
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "attention/gaussianstream.h"

#include <cmath>

namespace atlas::attention {

namespace {

std::mt19937_64 seeded(uint64_t seed, uint64_t stream)
{
    std::seed_seq seq {uint32_t(seed), uint32_t(seed >> 32), uint32_t(stream), uint32_t(stream >> 32)};
    return std::mt19937_64(seq);
}

} // namespace

GaussianStream::GaussianStream(uint64_t seed, uint64_t stream)
    : m_engine(seeded(seed, stream))
{
}

uint64_t GaussianStream::below(uint64_t n)
{
    // Rejection keeps it exactly uniform; the limit is the largest multiple of n that fits.
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x = m_engine();
    while (x >= limit)
        x = m_engine();
    return x % n;
}

void GaussianStream::draw(float *out, int64_t n, double stddev)
{
    const int64_t pairs = (n + 1) / 2;
    Tensor first = Tensor::uninitialized({pairs}), second = Tensor::uninitialized({pairs});
    Eigen::Map<Eigen::ArrayXf> u1(first.data(), pairs), u2(second.data(), pairs);
    for (int64_t p = 0; p < pairs; ++p) { // one 64-bit draw gives both uniforms of a pair
        const uint64_t x = m_engine();
        u1[p] = (float(uint32_t(x) >> 8) + 0.5f) * 0x1.0p-24f; // in (0, 1), so log(u1) is finite
        u2[p] = float(uint32_t(x >> 32) >> 8) * 0x1.0p-24f; // in [0, 1)
    }
    u1 = (-2.0f * u1.log()).sqrt() * float(stddev); // the radius
    u2 = float(2.0 * M_PI) * u2; // the angle
    Eigen::Map<Eigen::ArrayXf> all(out, n);
    all.head(pairs) = u1 * u2.cos();
    all.tail(n - pairs) = (u1 * u2.sin()).head(n - pairs);
}

MatrixRM GaussianStream::matrix(int64_t rows, int64_t cols, double stddev)
{
    MatrixRM m(rows, cols);
    draw(m.data(), rows * cols, stddev);
    return m;
}

Tensor GaussianStream::tensor(int64_t rows, int64_t cols, double stddev)
{
    Tensor t = Tensor::uninitialized({rows, cols});
    draw(t.data(), rows * cols, stddev);
    return t;
}

} // namespace atlas::attention
