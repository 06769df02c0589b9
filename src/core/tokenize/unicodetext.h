#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).
//
// Unicode for the tokenizers, from utf8proc (Debian's libutf8proc): general categories, normalisation forms and
// case. Nothing here is a hand-written table.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace atlas::unicode {

// What a byte that is not part of valid UTF-8 decodes to: it counts as one "other" character of one byte.
inline constexpr uint32_t kInvalidCodePoint = 0xFFFFFFFF;

struct DecodedChar
{
    uint32_t codePoint; // kInvalidCodePoint for a malformed byte
    int length; // bytes consumed, 1..4
};

// Decodes the UTF-8 character at text[pos] (pos < text.size()); strict: overlong forms, surrogates and values
// above U+10FFFF are malformed.
DecodedChar decodeUtf8(std::string_view text, size_t pos);
void appendUtf8(std::string &out, uint32_t codePoint);
// The byte offset of the first malformed byte, or npos when `text` is valid UTF-8.
size_t firstInvalidUtf8(std::string_view text);

// The classes GPT-2's pre-tokenisation regex tells apart (\p{L}, \p{N}, \s), plus marks and format characters
// for showing tokens readably. Other: punctuation, symbols, emoji, controls, unassigned code points.
enum class CharClass : uint8_t { Other, Letter, Number, Space, Mark, Format };
CharClass charClass(uint32_t codePoint);

bool isWhiteSpace(uint32_t codePoint); // the White_Space property (as Rust's char::is_whitespace)
bool isPunctuation(uint32_t codePoint); // general category P*
bool isNumeric(uint32_t codePoint); // general category N* (as Rust's char::is_numeric)
bool isControl(uint32_t codePoint); // Cc
bool isOther(uint32_t codePoint); // Cc, Cf, Cs, Co (BERT's "control" characters, besides \t \n \r)
bool isNonspacingMark(uint32_t codePoint); // Mn
bool isMark(uint32_t codePoint); // Mn, Mc, Me
bool isAlphanumeric(uint32_t codePoint); // L* or N*
// A word character as the regex crate's \w: letters, marks, decimal digits, connector punctuation and the two
// joiners (Unicode's Alphabetic property is read as L* and Nl here: utf8proc has no Other_Alphabetic).
bool isWordChar(uint32_t codePoint);

enum class NormalForm { NFC, NFD, NFKC, NFKD };
// Throws atlas::Error when `text` is not valid UTF-8.
std::string normalized(std::string_view text, NormalForm form);
// Each character's lower-case mapping, character by character (Rust's char::to_lowercase, which the Hugging
// Face tokenizers use): no final-sigma rule; U+0130 becomes "i̇" as in SpecialCasing.txt.
std::string lowercased(std::string_view text);

// Bytes as UTF-8 text, each maximal invalid stretch replaced by one U+FFFD (Rust's String::from_utf8_lossy and
// the WHATWG decoder agree on this).
std::string lossyUtf8(std::string_view bytes);

// A token's bytes as text a person can read on a chip: UTF-8 where valid, ' ' as '␣', '\n' as '↵', '\t' as '⇥',
// other unprintable bytes as <0xNN>, invisible characters as <U+NNNN>, a leading combining mark on '◌'.
std::string readableText(std::string_view bytes);

} // namespace atlas::unicode
