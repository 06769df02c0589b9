#pragma once

#include <memory>
#include <string>
#include <vector>

namespace atlas {

// What a token is, for showing how a tokenizer split a text: a piece of the text, one of the model's special tokens
// ([CLS], <s>, <|endoftext|>), the unknown token, or a single byte (byte fallback, or a byte-level piece that is
// only part of a character).
enum class TokenRole { Text, Special, Unknown, Byte };

// Turns text into token ids and ids into readable pieces for the token chips.
class Tokenizer
{
public:
    virtual ~Tokenizer() = default;
    virtual std::string kind() const = 0;
    // What marks a piece that continues a word (WordPiece's "##"), or empty when pieces mark the words' starts or
    // nothing does.
    virtual std::string continuationPrefix() const { return {}; }
    virtual bool canEncode() const { return true; }
    // Why text cannot be encoded ("this model's directory has no tokenizer.json, …"), when canEncode() is false.
    virtual std::string noTextReason() const { return {}; }
    // Throws atlas::Error when the text cannot be encoded (the message says why and what to do instead).
    virtual std::vector<int> encode(const std::string &text) const = 0;
    // The same with the model's own special tokens around it, as its post-processor adds them for training
    // (BERT's [CLS] … [SEP], Llama's <s>); tokenizers without such tokens give encode(text).
    virtual std::vector<int> encodeWithSpecialTokens(const std::string &text) const { return encode(text); }
    virtual std::string decode(const std::vector<int> &ids) const = 0;
    // A short, visible rendering of one token: spaces as '␣', newlines as '↵', unprintable bytes as <0x..>.
    virtual std::string piece(int id) const = 0;
    virtual TokenRole role(int id) const
    {
        (void)id;
        return TokenRole::Text;
    }
};

// A directory's own tokenizer, the first of: tokenizer.json, SentencePiece's spiece.model or tokenizer.model, GPT-2's
// vocab.json + merges.txt, BERT's vocab.txt. A tokenizer.json this program cannot read (T5's Precompiled normaliser)
// gives way to a SentencePiece model beside it. nullptr when the directory has none. (A model's tokenizer, which its
// config may choose instead: tokenizerForModel, model/modeltokenizer.h.)
std::unique_ptr<Tokenizer> directoryTokenizer(const std::string &directory);
// Ids only, shown as "#id": for a model without a tokenizer this program reads; `reason` says why.
std::unique_ptr<Tokenizer> idTokenizer(const std::string &reason);

// One token per byte: id = byte value (0..255). Used by the built-in models.
class ByteTokenizer : public Tokenizer
{
public:
    std::string kind() const override { return "bytes"; }
    std::vector<int> encode(const std::string &text) const override;
    std::string decode(const std::vector<int> &ids) const override;
    std::string piece(int id) const override;
    TokenRole role(int id) const override { return id >= 0x80 ? TokenRole::Byte : TokenRole::Text; }
};

// Parses "464,3290,318" (commas or spaces) into ids; throws atlas::Error naming the bad item.
std::vector<int> parseTokenList(const std::string &text);
// One token named by the user: "#id", or a text `tokenizer` reads as exactly one token (" the" with its space for
// GPT-2). Throws atlas::Error naming `name` (a spec key, a command-line option) for anything else.
int singleToken(const Tokenizer &tokenizer, const std::string &text, int vocab, const std::string &name);

} // namespace atlas
