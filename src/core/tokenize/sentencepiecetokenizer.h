#pragma once

#include "tokenize/tokenizer.h"

#include <memory>
#include <string>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace atlas {

// A SentencePiece model (T5's spiece.model, Llama 1/2's tokenizer.model) through the reference library,
// libsentencepiece: its own normaliser, its BPE or Unigram, its byte fallback. SentencePiece adds no special
// tokens itself; encodeWithSpecialTokens adds those the Hugging Face tokenizer class would, from
// tokenizer_config.json beside the model: add_bos_token / add_eos_token, or by tokenizer_class (LlamaTokenizer:
// <s> first; T5Tokenizer: </s> last). Encoding is thread-safe.
class SentencePieceTokenizer : public Tokenizer
{
public:
    // Throws atlas::Error naming the file when it cannot be read or is not a SentencePiece model.
    explicit SentencePieceTokenizer(const std::string &modelPath);
    ~SentencePieceTokenizer() override;

    std::string kind() const override; // "SentencePiece" (the library; BPE or Unigram is inside its model)
    std::vector<int> encode(const std::string &text) const override;
    std::vector<int> encodeWithSpecialTokens(const std::string &text) const override;
    // Throws atlas::Error for an id outside the model.
    std::string decode(const std::vector<int> &ids) const override;
    // "▁the" as "␣the", a byte piece <0x0A> as "↵" (unicode::readableText), control pieces as they are.
    std::string piece(int id) const override;
    TokenRole role(int id) const override;
    std::string pieceString(int id) const; // as stored; throws for an id outside the model
    int vocabSize() const;
    // A piece as the model stores it, for writing the vocabulary elsewhere (a GGUF file's 'llama' tokenizer).
    struct StoredPiece
    {
        std::string text;
        float score = 0;
        bool unknown = false, control = false, unused = false, byte = false;
    };
    StoredPiece storedPiece(int id) const; // throws for an id outside the model
    int bosId() const; // -1 when the model has none
    int eosId() const;
    bool addsBos() const { return m_addBos; }
    bool addsEos() const { return m_addEos; }

private:
    std::string m_path;
    std::unique_ptr<sentencepiece::SentencePieceProcessor> m_processor;
    bool m_addBos = false, m_addEos = false;
};

} // namespace atlas
