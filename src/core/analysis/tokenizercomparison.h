#pragma once

#include "tokenize/tokenizer.h"

#include <string>
#include <vector>

namespace atlas {

// One tokenizer's split of a text, as the Tokenizer view draws it.
struct TextSplit
{
    std::string name; // as the user named it: a model, a built-in tokenizer; a file or directory by its last part
    std::string kind; // Tokenizer::kind()
    std::vector<int> ids;
    std::vector<std::string> pieces; // Tokenizer::piece, one per id
    std::vector<TokenRole> roles;
    int count(TokenRole role) const;
    std::string problem; // why it cannot split any text (it reads ids only); then ids is empty
};

// How two tokenizers split one text: the model's own and another, with the text's size to compare against.
struct TokenizerComparison
{
    std::string text;
    size_t bytes = 0; // UTF-8
    size_t characters = 0; // code points
    TextSplit own, other;
};

// `tokenizer`'s split of `text` without special tokens; a tokenizer that cannot encode leaves its reason. Throws
// atlas::Error when the tokenizer fails on this text (Tokenizer::encode).
TextSplit splitText(const Tokenizer &tokenizer, const std::string &name, const std::string &text);

// The model's split beside the tokenizer of `otherName` (resolveTokenizer: a built-in tokenizer or model, or a
// directory). Throws atlas::Error when `otherName` names nothing.
TokenizerComparison compareTokenizers(
    const Tokenizer &own, const std::string &ownName, const std::string &otherName, const std::string &text);

} // namespace atlas
