#pragma once

#include "tokenize/tokenizer.h"

#include <memory>
#include <utility>

namespace atlas {

// A model's tokenizer with its special tokens (atlas_special_tokens) on top: "[MASK]" typed in the text becomes the
// [MASK] id, and a special id reads as its name in chips and decoded text. Everything else goes to the tokenizer
// underneath, so "a[MASK]c" encodes as encode("a"), [MASK], encode("c").
class SpecialTokensTokenizer : public Tokenizer
{
public:
    SpecialTokensTokenizer(std::unique_ptr<Tokenizer> inner, std::vector<std::pair<std::string, int>> specials);

    std::string kind() const override { return m_inner->kind(); }
    std::string continuationPrefix() const override { return m_inner->continuationPrefix(); }
    bool canEncode() const override { return m_inner->canEncode(); }
    std::vector<int> encode(const std::string &text) const override;
    std::string decode(const std::vector<int> &ids) const override;
    std::string piece(int id) const override;
    TokenRole role(int id) const override { return nameOf(id) ? TokenRole::Special : m_inner->role(id); }

private:
    const std::string *nameOf(int id) const;

    std::unique_ptr<Tokenizer> m_inner;
    std::vector<std::pair<std::string, int>> m_specials;
};

} // namespace atlas
