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

double GaussianStream::uniformOpen()
{
    return (double(m_engine() >> 11) + 0.5) * 0x1.0p-53;
}

double GaussianStream::normal()
{
    if (m_hasSpare) {
        m_hasSpare = false;
        return m_spare;
    }
    const double r = std::sqrt(-2.0 * std::log(uniformOpen())), phi = 2.0 * M_PI * uniformOpen();
    m_spare = r * std::sin(phi);
    m_hasSpare = true;
    return r * std::cos(phi);
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

MatrixRM GaussianStream::matrix(int64_t rows, int64_t cols, double stddev)
{
    MatrixRM m(rows, cols);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            m(r, c) = static_cast<float>(stddev * normal());
    return m;
}

} // namespace atlas::attention
