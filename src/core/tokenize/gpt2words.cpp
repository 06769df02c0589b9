#include "tokenize/gpt2words.h"

namespace atlas {

namespace {

using unicode::CharClass;
using unicode::charClass;
using unicode::DecodedChar;
using unicode::decodeUtf8;

struct Char
{
    CharClass cls;
    int length;
};

Char charAt(std::string_view text, size_t pos)
{
    const auto byte = static_cast<unsigned char>(text[pos]);
    if (byte < 0x80)
        return {charClass(byte), 1};
    const DecodedChar d = decodeUtf8(text, pos);
    return {charClass(d.codePoint), d.length};
}

bool isLetterOrNumber(CharClass c)
{
    return c == CharClass::Letter || c == CharClass::Number;
}

// Length of the apostrophe contraction at text[pos] ('s 't 're 've 'm 'll 'd, lower case only), or 0.
size_t contractionLength(std::string_view text, size_t pos)
{
    if (text[pos] != '\'' || pos + 1 >= text.size())
        return 0;
    const char a = text[pos + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 2;
    const char b = pos + 2 < text.size() ? text[pos + 2] : '\0';
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        return 3;
    return 0;
}

// End of the run of characters starting at pos whose class matches `same`.
template <typename Pred> size_t runEnd(std::string_view text, size_t pos, Pred same)
{
    while (pos < text.size()) {
        const Char c = charAt(text, pos);
        if (!same(c.cls))
            break;
        pos += c.length;
    }
    return pos;
}

// \s+(?!\S)|\s+ at pos, where text[pos] is whitespace: the whole run when it ends the text or is a single
// character; otherwise all but its last character, which then leads the next word (" word", "\n" …).
size_t whitespaceLength(std::string_view text, size_t pos)
{
    size_t end = pos, lastStart = pos;
    while (end < text.size()) {
        const Char c = charAt(text, end);
        if (c.cls != CharClass::Space)
            break;
        lastStart = end;
        end += c.length;
    }
    if (end == text.size() || lastStart == pos)
        return end - pos;
    return lastStart - pos;
}

} // namespace

size_t gpt2WordLength(std::string_view text, size_t pos)
{
    if (const size_t n = contractionLength(text, pos))
        return n;
    // " ?\p{L}+", " ?\p{N}+" and " ?[^\s\p{L}\p{N}]+": one optional space, then a run of one kind.
    size_t start = pos;
    if (text[pos] == ' ' && pos + 1 < text.size())
        start = pos + 1;
    const CharClass first = charAt(text, start).cls;
    switch (first) {
    case CharClass::Letter:
    case CharClass::Number:
        return runEnd(text, start, [first](CharClass c) { return c == first; }) - pos;
    case CharClass::Space:
        break;
    default: // marks, format characters and the rest are all [^\s\p{L}\p{N}]
        return runEnd(text, start, [](CharClass c) { return c != CharClass::Space && !isLetterOrNumber(c); }) - pos;
    }
    return whitespaceLength(text, pos);
}

std::vector<std::string_view> splitGpt2Words(std::string_view text)
{
    std::vector<std::string_view> words;
    for (size_t pos = 0; pos < text.size();) {
        const size_t n = gpt2WordLength(text, pos);
        words.push_back(text.substr(pos, n));
        pos += n;
    }
    return words;
}

} // namespace atlas
