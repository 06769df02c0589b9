#include "tokenize/unicodetext.h"

#include "util/error.h"

#include <utf8proc.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace atlas::unicode {

namespace {

int category(uint32_t cp)
{
    return cp > 0x10FFFF ? UTF8PROC_CATEGORY_CN : utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

CharClass classOfCategory(uint32_t cp)
{
    if (isWhiteSpace(cp))
        return CharClass::Space;
    switch (category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
        return CharClass::Letter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
        return CharClass::Number;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
        return CharClass::Mark;
    case UTF8PROC_CATEGORY_CF:
        return CharClass::Format;
    default:
        return CharClass::Other;
    }
}

const std::array<CharClass, 128> &asciiClasses()
{
    static const std::array<CharClass, 128> table = [] {
        std::array<CharClass, 128> t {};
        for (uint32_t c = 0; c < 128; ++c)
            t[c] = classOfCategory(c);
        return t;
    }();
    return table;
}

} // namespace

DecodedChar decodeUtf8(std::string_view text, size_t pos)
{
    const auto *s = reinterpret_cast<const unsigned char *>(text.data()) + pos;
    const size_t left = text.size() - pos;
    const unsigned char b0 = s[0];
    if (b0 < 0x80)
        return {b0, 1};
    int length = 0;
    uint32_t cp = 0, min = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF)
        length = 2, cp = b0 & 0x1F, min = 0x80;
    else if (b0 >= 0xE0 && b0 <= 0xEF)
        length = 3, cp = b0 & 0x0F, min = 0x800;
    else if (b0 >= 0xF0 && b0 <= 0xF4)
        length = 4, cp = b0 & 0x07, min = 0x10000;
    if (length == 0 || left < size_t(length))
        return {kInvalidCodePoint, 1};
    for (int i = 1; i < length; ++i) {
        if ((s[i] & 0xC0) != 0x80)
            return {kInvalidCodePoint, 1};
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return {kInvalidCodePoint, 1};
    return {cp, length};
}

void appendUtf8(std::string &out, uint32_t cp)
{
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

size_t firstInvalidUtf8(std::string_view text)
{
    for (size_t pos = 0; pos < text.size();) {
        if (static_cast<unsigned char>(text[pos]) < 0x80) {
            ++pos;
            continue;
        }
        const DecodedChar c = decodeUtf8(text, pos);
        if (c.codePoint == kInvalidCodePoint)
            return pos;
        pos += c.length;
    }
    return std::string_view::npos;
}

CharClass charClass(uint32_t cp)
{
    return cp < 128 ? asciiClasses()[cp] : classOfCategory(cp);
}

bool isWhiteSpace(uint32_t cp)
{
    if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85)
        return true;
    if (cp < 0xA0)
        return false;
    const int c = category(cp);
    return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

bool isPunctuation(uint32_t cp)
{
    const int c = category(cp);
    return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

bool isNumeric(uint32_t cp)
{
    const int c = category(cp);
    return c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO;
}

bool isControl(uint32_t cp)
{
    return category(cp) == UTF8PROC_CATEGORY_CC;
}

bool isOther(uint32_t cp)
{
    const int c = category(cp);
    return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CS
        || c == UTF8PROC_CATEGORY_CO;
}

bool isNonspacingMark(uint32_t cp)
{
    return category(cp) == UTF8PROC_CATEGORY_MN;
}

bool isMark(uint32_t cp)
{
    const int c = category(cp);
    return c >= UTF8PROC_CATEGORY_MN && c <= UTF8PROC_CATEGORY_ME;
}

bool isAlphanumeric(uint32_t cp)
{
    const int c = category(cp);
    return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO)
        || (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}

bool isWordChar(uint32_t cp)
{
    const int c = category(cp);
    return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_ND) || c == UTF8PROC_CATEGORY_NL
        || c == UTF8PROC_CATEGORY_PC || cp == 0x200C || cp == 0x200D;
}

std::string normalized(std::string_view text, NormalForm form)
{
    int options = UTF8PROC_STABLE;
    switch (form) {
    case NormalForm::NFC:
        options |= UTF8PROC_COMPOSE;
        break;
    case NormalForm::NFD:
        options |= UTF8PROC_DECOMPOSE;
        break;
    case NormalForm::NFKC:
        options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
        break;
    case NormalForm::NFKD:
        options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
        break;
    }
    if (text.empty())
        return {};
    utf8proc_uint8_t *out = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(text.data()),
        static_cast<utf8proc_ssize_t>(text.size()), &out, static_cast<utf8proc_option_t>(options));
    std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
    if (n < 0)
        throw Error(std::string("Unicode normalisation: ") + utf8proc_errmsg(n));
    return std::string(reinterpret_cast<const char *>(out), static_cast<size_t>(n));
}

std::string lowercased(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const DecodedChar c = decodeUtf8(text, pos);
        if (c.codePoint == kInvalidCodePoint)
            out += text[pos];
        else if (c.codePoint == 0x130)
            out += "i\xCC\x87";
        else
            appendUtf8(out, static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c.codePoint))));
        pos += c.length;
    }
    return out;
}

std::string lossyUtf8(std::string_view bytes)
{
    std::string out;
    out.reserve(bytes.size());
    const auto *s = reinterpret_cast<const unsigned char *>(bytes.data());
    for (size_t pos = 0; pos < bytes.size();) {
        const DecodedChar c = decodeUtf8(bytes, pos);
        if (c.codePoint != kInvalidCodePoint) {
            out.append(bytes.substr(pos, c.length));
            pos += c.length;
            continue;
        }
        // The longest prefix of a well-formed sequence counts as one error (Unicode's "maximal subpart").
        const unsigned char b0 = s[pos];
        int length = b0 >= 0xC2 && b0 <= 0xDF ? 2 : b0 >= 0xE0 && b0 <= 0xEF ? 3 : b0 >= 0xF0 && b0 <= 0xF4 ? 4 : 1;
        size_t end = pos + 1;
        for (int i = 1; i < length && end < bytes.size(); ++i, ++end) {
            const unsigned char b = s[end];
            unsigned char lo = 0x80, hi = 0xBF;
            if (i == 1 && b0 == 0xE0)
                lo = 0xA0;
            else if (i == 1 && b0 == 0xED)
                hi = 0x9F;
            else if (i == 1 && b0 == 0xF0)
                lo = 0x90;
            else if (i == 1 && b0 == 0xF4)
                hi = 0x8F;
            if (b < lo || b > hi)
                break;
        }
        out += "\xEF\xBF\xBD";
        pos = end;
    }
    return out;
}

std::string readableText(std::string_view bytes)
{
    std::string out;
    char buf[16];
    for (size_t pos = 0; pos < bytes.size();) {
        const DecodedChar c = decodeUtf8(bytes, pos);
        const std::string_view raw = bytes.substr(pos, c.length);
        pos += c.length;
        const CharClass cls = charClass(c.codePoint);
        if (c.codePoint == ' ') {
            out += "␣";
        } else if (c.codePoint == '\n') {
            out += "↵";
        } else if (c.codePoint == '\t') {
            out += "⇥";
        } else if (c.codePoint == kInvalidCodePoint || c.codePoint < 0x20
            || (c.codePoint >= 0x7F && c.codePoint < 0xA0)) {
            for (char b : raw) {
                std::snprintf(buf, sizeof buf, "<0x%02X>", static_cast<unsigned char>(b));
                out += buf;
            }
        } else if (cls == CharClass::Space || cls == CharClass::Format) {
            std::snprintf(buf, sizeof buf, "<U+%04X>", c.codePoint);
            out += buf;
        } else {
            if (cls == CharClass::Mark && out.empty())
                out += "◌"; // carries a combining mark that has nothing to combine with
            out += raw;
        }
    }
    return out;
}

} // namespace atlas::unicode
