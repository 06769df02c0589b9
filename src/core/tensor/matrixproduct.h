#pragma once

#include "tensor/tensor.h"

#include <cstdint>

namespace atlas {

// C (m,n) = op(A) op(B), or C += op(A) op(B) when accumulating; op(X) is X or Xᵀ. Every matrix row-major and
// contiguous; C is not read when not accumulating (a NaN there does not survive), and must not overlap A or B.
// The layers' products (ops/linear.cpp) go through here: by the packed kernel below when packedProductsChosen()
// and the product is neither tiny nor A too large to pack whole (64 MiB), by Eigen otherwise (and so by the BLAS
// this build links).
void matrixProduct(MatrixMap c, ConstMatrixMap a, bool transposeA, ConstMatrixMap b, bool transposeB, bool accumulate);
// The same into C's columns of a wider matrix: C's rows are ldc floats apart (a tile of a layer's output).
void matrixProduct(
    float *c, int64_t ldc, ConstMatrixMap a, bool transposeA, ConstMatrixMap b, bool transposeB, bool accumulate);

// The project's own product: B packed into panels (A too when transposed, else its rows read where they are), a
// register tile of 8 × 32 of C accumulated over up to 256 of k at a time, the columns shared out over the cores
// (parallelFor). Each element of C is summed in the same order whatever the number of threads. Leading dimensions are
// the distance between stored rows.
void packedMatrixProduct(float *c, int64_t ldc, const float *a, int64_t lda, bool transposeA, const float *b,
    int64_t ldb, bool transposeB, int64_t m, int64_t k, int64_t n, bool accumulate);

// Whether matrixProduct takes the packed kernel. OpenBLAS runs the kernels of the CPU it recognises, or those
// OPENBLAS_CORETYPE names: the benchmark machine's environment sets Haswell (AVX2) on an AMD EPYC with AVX-512, as
// older OpenBLAS builds compute wrong results or crash on some processors. Compiled for the build machine's CPU
// (-march=native), the packed kernel uses AVX-512 there: GPT-2-small's forward took 151–168 ms with it and 260–272
// ms with OpenBLAS's Haswell kernels (docs/benchmarks.md). So: true when the CPU has AVX-512 (this file compiled for
// it, or the tile compiled apart for it, packedtiles512.h, in a build for AVX2 such as the Debian package's) and
// OpenBLAS runs an AVX2 kernel (Haswell, Zen); false in the Eigen build, and under AddressSanitizer: at -O1 the
// tile's accumulators live on the instrumented stack (every update a shadow check), and with the kernel chosen the
// sanitizer suite's waits on training and analyses timed out; tst_blasthreads calls the kernel there directly.
// ATLAS_MATRIX_PRODUCTS=blas or =packed decides instead (for benchmarks and tests).
bool packedProductsChosen();

// What does the layers' products, for the benchmarks' headers: "packed AVX-512 kernel", "packed AVX-512 kernel (chosen
// at run time)", "packed kernel in plain loops (no AVX-512)" or "BLAS".
const char *layerProductsDescription();

} // namespace atlas
