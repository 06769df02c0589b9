#include "io/weightvalues.h"

#include <cmath>

namespace atlas {

bool allFinite(const float *values, int64_t n)
{
    uint32_t nonFinite = 0;
    for (int64_t i = 0; i < n; ++i)
        nonFinite |= uint32_t((std::bit_cast<uint32_t>(values[i]) & 0x7F800000u) == 0x7F800000u);
    return nonFinite == 0;
}

std::string nonFiniteReason(const float *values, int64_t n)
{
    int64_t count = 0, first = -1;
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(values[i]) && count++ == 0)
            first = i;
    const float v = values[first];
    return "holds " + std::to_string(count) + (count == 1 ? " value" : " values") + " that "
        + (count == 1 ? "is" : "are") + " not a finite number, the first element " + std::to_string(first) + " of "
        + std::to_string(n) + " ("
        + (std::isnan(v) ? "NaN"
                : v > 0  ? "infinity"
                         : "-infinity")
        + "): a model's weights must be finite numbers (a training run that diverged writes NaN)";
}

} // namespace atlas
