#pragma once

#include "tokenize/tokenizer.h"

#include <memory>
#include <string>
#include <vector>

namespace atlas {

class GgufFile;
struct HuggingFaceTokenizerParts;

// A Hugging Face tokenizer.json, id for id as the `tokenizers` library encodes: added tokens split off first
// (those marked normalized after the normalizer), then normalizer -> pre-tokenizer -> model (BPE, WordPiece or
// Unigram), and the post-processor's special tokens on request. GPT-2's vocab.json + merges.txt and BERT's vocab.txt
// read as the tokenizer.json Hugging Face writes for them. Encoding is thread-safe. The same files (path, size and
// time) are parsed once while any tokenizer holds them.
class HuggingFaceTokenizer : public Tokenizer
{
public:
    // `tokenizer_config.json` beside the file, when there, gives clean_up_tokenization_spaces. Throws
    // atlas::Error naming the file, the key and the problem; an unsupported component is refused by name.
    static std::unique_ptr<HuggingFaceTokenizer> fromFile(const std::string &tokenizerJson);
    // GPT-2's vocab.json and merges.txt, as Hugging Face's GPT2TokenizerFast reads them (gpt2vocabulary.h).
    static std::unique_ptr<HuggingFaceTokenizer> fromGpt2Files(
        const std::string &vocabJson, const std::string &mergesTxt);
    // BERT's WordPiece vocabulary, one token per line (line n is id n - 1), with its BertNormalizer
    // (`lowercase` as do_lower_case), BertPreTokenizer, [CLS] … [SEP] and WordPiece decoder.
    static std::unique_ptr<HuggingFaceTokenizer> fromWordPieceVocab(const std::string &vocabTxt, bool lowercase);
    // A GGUF file's own tokenizer (tokenizer.ggml.*), encoding as llama.cpp does (tokenize/ggufvocabulary.h).
    static std::unique_ptr<HuggingFaceTokenizer> fromGguf(const std::string &ggufPath);
    // The same from a file already open (save's check of the file it is about to write), not shared.
    static std::unique_ptr<HuggingFaceTokenizer> fromGguf(const GgufFile &file);
    ~HuggingFaceTokenizer() override;

    std::string kind() const override; // "BPE", "WordPiece" or "Unigram"
    std::string continuationPrefix() const override;
    std::vector<int> encode(const std::string &text) const override;
    std::vector<int> encodeWithSpecialTokens(const std::string &text) const override;
    // Throws atlas::Error for an id that is neither in the model's vocabulary nor an added token.
    std::string decode(const std::vector<int> &ids) const override;
    // The token as stored ("Ġthe", "▁the", "##ing", "<0x0A>", "[CLS]"); throws for an unknown id.
    std::string tokenString(int id) const;
    // The token readably: byte-level and byte-fallback tokens as their bytes, ▁ as a space, then as
    // unicode::readableText ("␣the", "↵"); "##ing" and added tokens as they are. "#id" for an unknown id.
    std::string piece(int id) const override;
    TokenRole role(int id) const override;
    int vocabSize() const;
    int idOf(const std::string &tokenString) const; // an added token or the model's; -1 when neither
    bool isSpecial(int id) const;

private:
    explicit HuggingFaceTokenizer(std::shared_ptr<const HuggingFaceTokenizerParts> parts);
    std::shared_ptr<const HuggingFaceTokenizerParts> m_parts;
};

} // namespace atlas
