#include "ops/ops.h"
#include "ops/shapecheck.h"

#include <cmath>
#include <numbers>

namespace atlas::ops {

void dft_parts(MatrixRM &cosine, MatrixRM &sine, int64_t size, int64_t length)
{
    if (size < 0 || length < 1 || size > length)
        throw Error("dft_parts: " + std::to_string(size) + " rows of a transform over " + std::to_string(length)
            + " positions");
    cosine.resize(size, size);
    sine.resize(size, size);
    for (int64_t j = 0; j < size; ++j)
        for (int64_t k = 0; k < size; ++k) {
            // jk mod N first: the angle of 2π·jk/N for jk in the millions would lose digits in float
            const double angle = 2.0 * std::numbers::pi * double((j * k) % length) / double(length);
            cosine(j, k) = float(std::cos(angle));
            sine(j, k) = float(std::sin(angle));
        }
}

void fourier_mix_forward(Tensor &out, const Tensor &x, int64_t length)
{
    if (x.rank() != 2 || out.shape() != x.shape())
        throw Error("fourier_mix_forward: x must be (T,D) and out its shape, got " + x.shapeString() + " and "
            + out.shapeString());
    const int64_t T = x.dim(0), D = x.dim(1);
    if (T > length)
        throw Error("fourier_mix_forward: " + std::to_string(T) + " tokens, more than the transform's "
            + std::to_string(length) + " positions");
    MatrixRM cosT, sinT, cosD, sinD;
    dft_parts(cosT, sinT, T, length);
    dft_parts(cosD, sinD, D, D);
    const auto X = x.matrix();
    out.matrix().noalias() = cosT * (X * cosD);
    out.matrix().noalias() -= sinT * (X * sinD);
}

} // namespace atlas::ops
