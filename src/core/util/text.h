#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

// Words and values in messages and captions.
namespace atlas {

// "1 token", "3 tokens", "0 tokens"; `plural` when adding an "s" is wrong ("1 query", "2 queries").
std::string countOf(size_t count, std::string_view singular, std::string_view plural = {});

// `text` with its first letter in upper case ("the layer has no QK-norm" as a sentence's start).
std::string sentenceCased(std::string text);

// `value` in the largest of `units` units, each `base` times the one before, that keeps it at least 1 (or in the
// last): {3.5, 2} for 3.5·base². formatBytes (base 1024) and formatFlops (base 1000) print with it.
struct ScaledValue
{
    double value;
    int unit;
};
ScaledValue scaledToUnit(double value, double base, int units);

// The first `most` numbers joined by `separator`, then the separator and "…" when there are more:
// shownNumbers({1, 2, 3}, ", ", 2) == "1, 2, …".
std::string shownNumbers(const std::vector<int> &numbers, std::string_view separator, size_t most = size_t(-1));

// A user's text inside a message: control characters shown as '?', cut after 60 characters (at a character's
// boundary) with "…".
std::string shownText(std::string_view text);

} // namespace atlas
