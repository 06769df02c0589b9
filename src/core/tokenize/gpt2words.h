#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include "tokenize/unicodetext.h"

#include <cstddef>
#include <string_view>
#include <vector>

namespace atlas {

// GPT-2's pre-tokenisation, written out by hand instead of with a regex engine:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// Returns the length in bytes of the word that starts at text[pos] (pos < text.size()).
size_t gpt2WordLength(std::string_view text, size_t pos);

// The whole text cut into GPT-2's words; the pieces concatenate back to the text.
std::vector<std::string_view> splitGpt2Words(std::string_view text);

} // namespace atlas
