#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include "tensor/tensor.h"

#include <cstdint>
#include <random>

namespace atlas::attention {

// Random numbers that depend only on (seed, stream), whatever the standard library (std::normal_distribution
// and std::uniform_int_distribution are implementation-defined): std::mt19937_64 seeded through std::seed_seq.
// Kernels use one stream per use (an LSH hash round, a Performer block), so changing one round's size does not
// shift another's numbers.
class GaussianStream
{
public:
    GaussianStream(uint64_t seed, uint64_t stream);

    uint64_t below(uint64_t n); // uniform in [0, n), n >= 1
    // (rows,cols) with entries N(0, stddev^2): Box–Muller on 24-bit uniforms, with Eigen's vectorised float
    // log, sqrt, cos and sin (a Linformer projection at 16384 tokens draws 4M numbers per call). The first
    // half of the entries (row by row) are the cosine draws, the rest the sine draws.
    MatrixRM matrix(int64_t rows, int64_t cols, double stddev = 1.0);
    // The same numbers as a tensor, whose buffer (like the draw's scratch) is one the engine keeps for reuse
    // (tensor/buffercache.h): a kernel that draws on every call then does not touch new memory each time.
    Tensor tensor(int64_t rows, int64_t cols, double stddev = 1.0);

private:
    void draw(float *out, int64_t n, double stddev);

    std::mt19937_64 m_engine;
};

} // namespace atlas::attention
