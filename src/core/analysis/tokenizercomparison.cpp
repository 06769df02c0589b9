#include "analysis/tokenizercomparison.h"

#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "util/error.h"

#include <algorithm>
#include <filesystem>

namespace atlas {

int TextSplit::count(TokenRole role) const
{
    return int(std::count(roles.begin(), roles.end(), role));
}

namespace {

// A file or directory named by its path is shown by its last part ("austen-q4_0.gguf"): the whole path pushes the
// pieces off the header.
std::string shownName(const std::string &name)
{
    const std::filesystem::path path(name);
    if (!path.has_parent_path())
        return name;
    const std::string last = (path.has_filename() ? path : path.parent_path()).filename().string();
    return last.empty() ? name : last;
}

} // namespace

TextSplit splitText(const Tokenizer &tokenizer, const std::string &name, const std::string &text)
{
    TextSplit split {shownName(name), tokenizer.kind(), {}, {}, {}, {}};
    if (!tokenizer.canEncode()) {
        split.problem = "this tokenizer reads token ids only";
        return split;
    }
    // A text the tokenizer fails on is an error of the whole view, never its picture: render, lesson render and
    // lesson check fail with the message (which names the tokenizer's file).
    split.ids = tokenizer.encode(text);
    for (int id : split.ids) {
        split.pieces.push_back(tokenizer.piece(id));
        split.roles.push_back(tokenizer.role(id));
    }
    return split;
}

TokenizerComparison compareTokenizers(
    const Tokenizer &own, const std::string &ownName, const std::string &otherName, const std::string &text)
{
    TokenizerComparison c;
    c.text = text;
    c.bytes = text.size();
    c.characters = size_t(std::count_if(
        text.begin(), text.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
    c.own = splitText(own, ownName, text);
    const std::unique_ptr<Tokenizer> other = tokenizerForDirectory(resolveTokenizer(otherName));
    c.other = splitText(*other, otherName, text);
    return c;
}

} // namespace atlas
