#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace atlas {

// A tokenizer.json regular expression, compiled by PCRE2 in UTF and UCP mode (\p{L}, \s and \w by Unicode
// properties, as Oniguruma, which the Hugging Face tokenizers compile them with, reads them). `^` and `$` match
// at line ends as in Oniguruma's Ruby syntax. Matching is thread-safe.
class Regex
{
public:
    // Throws atlas::Error with PCRE2's message and the offset of the problem in the pattern.
    explicit Regex(const std::string &pattern);
    ~Regex();
    Regex(const Regex &) = delete;
    Regex &operator=(const Regex &) = delete;

    // Every non-overlapping match, left to right, as [begin, end) byte offsets; after an empty match the
    // search goes on one character later. `text` must be valid UTF-8. Throws atlas::Error when the pattern
    // backtracks past PCRE2's match limit on this text (5 million steps plus 16 for each byte left to match), or
    // when matching the text takes longer than 0.05 s plus 2 µs a byte (regex.cpp): bounds that a pattern
    // needing work in proportion to the text stays well within.
    std::vector<std::pair<size_t, size_t>> findAll(std::string_view text) const;

    const std::string &pattern() const { return m_pattern; }

private:
    struct Compiled;
    std::string m_pattern;
    std::unique_ptr<Compiled> m_compiled;
};

} // namespace atlas
