#pragma once

#include <cstdint>

namespace atlas {

// dst (d,8), its rows ld floats apart, = the 8 rows src[0..7] of d floats each, transposed, 8 × 8 in registers with
// AVX2: how the attention kernels gather keys into a product's B, and how the packed product packs a transposed B
// (an nn.Linear weight), where one float at a time took a sixth of a sparse kernel's time.
void transposeRows8(const float *const *src, int64_t d, float *dst, int64_t ld);

} // namespace atlas
