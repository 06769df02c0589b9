#include "analysis/mostprobable.h"

#include <algorithm>
#include <numeric>

namespace atlas {

std::vector<std::pair<int, float>> mostProbable(const float *row, int size, int k)
{
    std::vector<int> ids(static_cast<size_t>(std::max(size, 0)));
    std::iota(ids.begin(), ids.end(), 0);
    k = std::clamp(k, 0, int(ids.size()));
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
        [row](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    std::vector<std::pair<int, float>> out;
    for (int i = 0; i < k; ++i)
        out.emplace_back(ids[size_t(i)], row[ids[size_t(i)]]);
    return out;
}

} // namespace atlas
