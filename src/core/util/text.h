#pragma once

#include <cstddef>
#include <string>
#include <string_view>

// Words and values in messages and captions.
namespace atlas {

// "1 token", "3 tokens", "0 tokens"; `plural` when adding an "s" is wrong ("1 query", "2 queries").
std::string countOf(size_t count, std::string_view singular, std::string_view plural = {});

// A user's text inside a message: control characters shown as '?', cut after 60 characters (at a character's
// boundary) with "…".
std::string shownText(std::string_view text);

} // namespace atlas
