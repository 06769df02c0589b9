#pragma once

#include "features/sparseautoencoder.h"

namespace atlas::testing {

// A dictionary whose every feature is known from the stream x ∈ ℝ^d: feature i < d reads max(x_i, 0), feature d + i
// reads max(−x_i, 0), and the decoder puts them back, x exactly (no bias, b_dec not subtracted).
inline SparseAutoencoder splitDictionary(int64_t d)
{
    SparseAutoencoder s;
    s.applyDecoderBiasToInput = false;
    s.wEnc = Tensor({d, 2 * d});
    s.wDec = Tensor({2 * d, d});
    for (int64_t i = 0; i < d; ++i) {
        s.wEnc.data()[i * 2 * d + i] = 1;
        s.wEnc.data()[i * 2 * d + d + i] = -1;
        s.wDec.data()[i * d + i] = 1;
        s.wDec.data()[(d + i) * d + i] = -1;
    }
    s.bEnc = Tensor({2 * d});
    s.bDec = Tensor({d});
    return s;
}

} // namespace atlas::testing
