#pragma once

#include "tensor/tensor.h"

#include <cstdint>
#include <random>

namespace atlas::attention {

// Random numbers that depend only on (seed, stream) and are the same with every compiler and standard library
// (std::normal_distribution and std::uniform_int_distribution are implementation-defined): std::mt19937_64
// seeded through std::seed_seq, Box–Muller for normals. Kernels use one stream per use (an LSH hash round, a
// Performer block), so changing one round's size does not shift another's numbers.
class GaussianStream
{
public:
    GaussianStream(uint64_t seed, uint64_t stream);

    double normal(); // N(0,1)
    uint64_t below(uint64_t n); // uniform in [0, n), n >= 1
    // (rows,cols) with entries N(0, stddev^2), filled row by row
    MatrixRM matrix(int64_t rows, int64_t cols, double stddev = 1.0);

private:
    double uniformOpen(); // in (0, 1)

    std::mt19937_64 m_engine;
    double m_spare = 0.0;
    bool m_hasSpare = false;
};

} // namespace atlas::attention
