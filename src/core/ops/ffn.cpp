#include "ops/ops.h"

#include <algorithm>

namespace atlas::ops {

std::pair<int64_t, int64_t> chunk_rows(int64_t T, int chunks, int chunk)
{
    const int64_t size = (T + chunks - 1) / std::max(chunks, 1);
    const int64_t begin = std::min(T, size * chunk);
    return {begin, std::min(T, begin + size)};
}

} // namespace atlas::ops
