#pragma once

#include "util/error.h"

#include <charconv>
#include <string>
#include <vector>

namespace atlas {

// "0.1, 1.3" -> {"0.1", "1.3"}: the comma-separated items of an option, spaces and tabs around each trimmed. An
// empty text has no items; an empty item between commas is kept (as ""), for the caller to name.
inline std::vector<std::string> splitCommaList(const std::string &text)
{
    std::vector<std::string> items;
    size_t i = 0;
    while (i < text.size()) {
        const size_t j = std::min(text.find(',', i), text.size());
        std::string item = text.substr(i, j - i);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        items.push_back(std::move(item));
        i = j + 1;
    }
    return items;
}

// "0, 2, 5" -> {0, 2, 5}: whole numbers separated by commas; an item that is not one throws atlas::Error
// "<source>: '<item>' is not <what>".
inline std::vector<int> parseIntList(const std::string &text, const std::string &source, const std::string &what)
{
    std::vector<int> values;
    for (const std::string &item : splitCommaList(text)) {
        int value = 0;
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
        if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
            throw Error(source + ": '" + item + "' is not " + what);
        values.push_back(value);
    }
    return values;
}

// "0, 2 5" -> {"0", "2", "5"}: a list typed in a field, its items separated by commas, white space or both; no
// empty items.
inline std::vector<std::string> splitTypedList(const std::string &text)
{
    std::vector<std::string> items;
    std::string item;
    for (const char c : text + ",") {
        if (c == ',' || c == ' ' || c == '\t' || c == '\n') {
            if (!item.empty())
                items.push_back(std::move(item));
            item.clear();
        } else {
            item += c;
        }
    }
    return items;
}

// {"a", "b"} -> "a, b": the inverse, for messages that list names.
inline std::string joinedCommaList(const std::vector<std::string> &items)
{
    std::string text;
    for (const std::string &item : items)
        text += (text.empty() ? "" : ", ") + item;
    return text;
}

} // namespace atlas
