#pragma once

#include "tokenize/tokenizer.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace atlas {

struct BpeVocabulary;

// GPT-2's byte-level BPE: text -> GPT-2's words (pretokenizer.h) -> bytes -> merges by rank -> ids.
// Read from a Hugging Face directory's vocab.json (token string -> id, the token's bytes spelled with GPT-2's
// bytes_to_unicode alphabet) and merges.txt (one "left right" pair per line, best first; the first line may be
// a "#version" comment). Encoding is thread-safe; words already seen are answered from a cache.
class BpeTokenizer : public Tokenizer
{
public:
    // Throws atlas::Error naming the file and the problem.
    BpeTokenizer(const std::string &vocabPath, const std::string &mergesPath);
    // vocab.json and merges.txt in `directory`; the parsed files are shared while any tokenizer holds them.
    static std::unique_ptr<BpeTokenizer> fromDirectory(const std::string &directory);
    static bool directoryHasFiles(const std::string &directory);

    std::string kind() const override { return "gpt2"; }
    std::vector<int> encode(const std::string &text) const override;
    // Throws atlas::Error for an id that is not in vocab.json.
    std::string decode(const std::vector<int> &ids) const override;
    // The token's bytes as readable text: UTF-8 where valid, ' ' as '␣', '\n' as '↵', '\t' as '⇥', other
    // unprintable bytes as <0xNN>, invisible characters as <U+NNNN>, a leading combining mark on '◌'.
    // "#id" for an id that is not in vocab.json.
    std::string piece(int id) const override;

    int vocabSize() const; // number of entries in vocab.json
    int idOf(const std::string &tokenBytes) const; // -1 when no token has exactly these bytes
    std::string tokenBytes(int id) const; // throws atlas::Error for an unknown id
    size_t cachedWords() const;
    void clearCache() const;

private:
    explicit BpeTokenizer(std::shared_ptr<BpeVocabulary> vocabulary);
    void encodeWord(std::string_view word, std::vector<int> &ids) const;

    std::shared_ptr<BpeVocabulary> m_vocab;
};

// GPT-2's bytes_to_unicode(): the printable character each byte is spelled with in vocab.json and merges.txt.
char32_t gpt2ByteToUnicode(unsigned char byte);

} // namespace atlas
