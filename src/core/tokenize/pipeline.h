#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).
//
// The components of a Hugging Face tokenizer.json (normalizer -> pre-tokenizer -> model -> post-processor, and
// the decoder back), each read from its JSON object. They follow the Rust `tokenizers` crate, the library
// that wrote the files; where the JavaScript port (the tests' reference) differs, the comment says so. A
// component or option this file does not implement is refused by name, never approximated.

#include "io/jsonread.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace atlas {
class Regex;
}

namespace atlas::pipeline {

using Json = nlohmann::json;
// Normalizers, pre-tokenizers and decoders rewrite text, and a file may make them grow it without bound (a Replace of
// "a" by 10,000 "b"s, thirty chained "a" -> "aa"): each component's output is bounded by rewrittenLimit() of the text
// the chain was given, checked after each component (a Replace stops as it passes the bound), and past it the
// component is refused by name (refuseGrowth). The largest growth of a real component is 11 times (NFKD of U+FDFA,
// 3 bytes -> 33); byte-level pre-tokenization doubles, Metaspace triples a space.
constexpr size_t kRewriteGrowth = 16;
constexpr size_t kRewriteSlack = 1024; // bytes: Prepend and the prefix spaces of a short text
constexpr size_t kMaxRewrittenBytes = size_t(256) << 20;
// kRewriteGrowth times `bytes` plus kRewriteSlack, at most kMaxRewrittenBytes.
size_t rewrittenLimit(size_t bytes);
// Throws atlas::Error: the component at `where` (of type `type`, a `what`: "normalizer") grew the text past `limit`.
[[noreturn]] void refuseGrowth(const JsonPlace &where, const std::string &type, const char *what, size_t limit);

class Normalizer
{
public:
    virtual ~Normalizer() = default;
    // `limit`: rewrittenLimit() of the text the chain was given; makeNormalizer's components throw past it.
    virtual void normalize(std::string &text, size_t limit) const = 0;
};
// Null JSON gives nullptr (no normalizer). The component (each step of a Sequence too) checks its output's size.
std::unique_ptr<Normalizer> makeNormalizer(const Json &json, const JsonPlace &where);

// One piece of pre-tokenized text; `atOrigin` when it begins at offset 0 of the whole input (Metaspace's
// prepend_scheme "first").
struct Piece
{
    std::string text;
    bool atOrigin = false;
};

class PreTokenizer
{
public:
    virtual ~PreTokenizer() = default;
    // Splits (and may rewrite) each piece; empty pieces are dropped. `limit` bounds the pieces' bytes as in
    // Normalizer.
    virtual void preTokenize(std::vector<Piece> &pieces, size_t limit) const = 0;
};
std::unique_ptr<PreTokenizer> makePreTokenizer(const Json &json, const JsonPlace &where);

// The vocabulary and the algorithm that turns one pre-tokenized piece into ids.
class SubwordModel
{
public:
    virtual ~SubwordModel() = default;
    virtual std::string kind() const = 0; // "BPE", "WordPiece", "Unigram"
    // What marks a piece that continues a word (WordPiece's "##"), or empty when nothing does.
    virtual std::string continuationPrefix() const { return {}; }
    virtual void tokenize(std::string_view piece, std::vector<int> &ids) const = 0;
    virtual int idOf(std::string_view token) const = 0; // -1 when not in the vocabulary
    virtual const std::string *tokenOf(int id) const = 0; // nullptr when not in the vocabulary
    virtual int vocabSize() const = 0;
    virtual int unknownId() const = 0; // -1 when the model has no unknown token
};
// tokenizer.json's model.vocab read beside the tree rather than into it (huggingfacetokenizer.cpp): its members in
// the file's order, each a token and the value given as its id.
using VocabEntries = std::vector<std::pair<std::string, Json>>;
// `vocab`, when given, stands for json["vocab"] (BPE, WordPiece), which then holds only what was not read aside.
std::unique_ptr<SubwordModel> makeSubwordModel(const Json &json, const JsonPlace &where, VocabEntries *vocab = nullptr);

class PostProcessor
{
public:
    virtual ~PostProcessor() = default;
    // The model's special tokens around one sequence ([CLS] … [SEP], <s> …).
    virtual void addSpecialTokens(std::vector<int> &ids) const = 0;
};
// `vocab` resolves the token names that BertProcessing and RobertaProcessing give with their ids.
std::unique_ptr<PostProcessor> makePostProcessor(const Json &json, const JsonPlace &where);

class Decoder
{
public:
    virtual ~Decoder() = default;
    // Rewrites the token strings; the decoded text is their concatenation. `limit` bounds their bytes as in
    // Normalizer.
    virtual void decodeChain(std::vector<std::string> &tokens, size_t limit) const = 0;
};
std::unique_ptr<Decoder> makeDecoder(const Json &json, const JsonPlace &where);

// The literal or regular-expression pattern of Split, Replace and the Replace decoder: {"String": …} or
// {"Regex": …}. Finds the non-overlapping matches as [begin, end) byte offsets.
class Pattern
{
public:
    Pattern(const Json &json, const JsonPlace &where);
    ~Pattern();
    // Throws atlas::Error naming the file, the component and the pattern when PCRE2 gives up on a text (Regex).
    std::vector<std::pair<size_t, size_t>> findAll(std::string_view text) const;
    // Stops as the result passes `limit` bytes (the caller refuses it).
    std::string replaceAll(std::string_view text, std::string_view content, size_t limit) const;

private:
    JsonPlace m_where;
    std::string m_literal;
    std::unique_ptr<Regex> m_regex;
};

// Byte strings in a trie, for the longest or every prefix of a text that is one of them (added tokens, Unigram
// pieces).
class ByteTrie
{
public:
    void insert(std::string_view key, int value);
    // Calls found(length, value) for each key that is a prefix of `text`, shortest first.
    template <typename F> void eachPrefix(std::string_view text, F found) const
    {
        int node = 0;
        for (size_t i = 0; i < text.size(); ++i) {
            node = child(node, static_cast<unsigned char>(text[i]));
            if (node < 0)
                return;
            if (m_values[node] >= 0)
                found(i + 1, m_values[node]);
        }
    }
    bool empty() const { return m_values.size() <= 1; }

    // Every key ending at each position of a text, in time linear in the text plus the keys found (Aho–Corasick):
    // where eachPrefix from every position costs the text's length times the longest key's when a long key nearly
    // matches (a Unigram piece of 100,000 "a"s over a text of "a"s). link() once after the last insert; then
    // node = step(node, byte) for each byte from node 0, and eachEnding(node, found) calls found(length, value) for
    // each key that ends at that byte, longest first.
    void link();
    int step(int node, unsigned char byte) const
    {
        int next;
        while ((next = child(node, byte)) < 0 && node != 0)
            node = m_fail[size_t(node)];
        return next < 0 ? 0 : next;
    }
    template <typename F> void eachEnding(int node, F found) const
    {
        for (int n = m_values[size_t(node)] >= 0 ? node : m_output[size_t(node)]; n > 0; n = m_output[size_t(n)])
            found(size_t(m_depth[size_t(n)]), m_values[size_t(n)]);
    }

private:
    int child(int node, unsigned char byte) const;
    std::vector<int> m_values {-1}; // node -> value, -1 for none; node 0 is the root
    std::unordered_map<uint64_t, int> m_children; // node << 8 | byte -> child
    // After link(): node -> its longest proper suffix that is a node, the longest such suffix that ends a key (-1 for
    // none), and its depth (the length of the key it spells).
    std::vector<int> m_fail, m_output, m_depth;
};

// A Sequence's steps: json[key] must be an array of components of one kind; null entries are skipped.
template <typename Component>
std::vector<std::unique_ptr<Component>> readSteps(const Json &json, const char *key, const JsonPlace &where,
    std::unique_ptr<Component> (*make)(const Json &, const JsonPlace &));

// A pattern's matches replaced by a content string: the Replace normalizer and the Replace decoder.
class Replacement
{
public:
    // {"pattern": {"String" | "Regex": …}, "content": …}
    Replacement(const Json &json, const JsonPlace &where);
    std::string operator()(std::string_view text, size_t limit) const
    {
        return m_pattern.replaceAll(text, m_content, limit);
    }

private:
    Pattern m_pattern;
    std::string m_content;
};

// A JSON integer in [0, maximum] (parsed files give unsigned numbers, JSON built in code signed ones).
bool isIntegerUpTo(const Json &value, int64_t maximum);
// The component's "type", checked to be a string.
std::string typeOf(const Json &json, const JsonPlace &where);
[[noreturn]] void refuseType(
    const std::string &type, const char *what, const std::string &supported, const JsonPlace &where);

// One kind of component: its "type" and how one is made from its JSON.
template <class Component> struct ComponentType
{
    const char *type;
    std::unique_ptr<Component> (*make)(const Json &json, const JsonPlace &where);
};
// A component type made from its JSON (`Kind(json, where)`), or with nothing to read (`Kind()`).
template <class Component, class Kind> std::unique_ptr<Component> madeFromJson(const Json &json, const JsonPlace &where)
{
    return std::make_unique<Kind>(json, where);
}
template <class Component, class Kind> std::unique_ptr<Component> madeBare(const Json &, const JsonPlace &)
{
    return std::make_unique<Kind>();
}
// The component of the row named `type`, or `type` refused by name with the rows' names (`what`: "normalizer" …).
template <class Component, size_t N>
std::unique_ptr<Component> makeComponent(const std::string &type, const ComponentType<Component> (&types)[N],
    const char *what, const Json &json, const JsonPlace &where)
{
    for (const ComponentType<Component> &t : types)
        if (type == t.type)
            return t.make(json, where);
    std::string names;
    for (const ComponentType<Component> &t : types)
        names += std::string(names.empty() ? "" : ", ") + t.type;
    refuseType(type, what, names, where);
}

// GPT-2's bytes_to_unicode(): the printable character each byte is spelled with in byte-level vocabularies.
uint32_t byteLevelChar(unsigned char byte);
// The same character as UTF-8.
std::string_view byteLevelUtf8(unsigned char byte);
// The byte a byte-level character stands for, or -1.
int byteOfByteLevelChar(uint32_t codePoint);
// "<0x41>" -> 0x41 for byte-fallback tokens; -1 for any other string.
int byteFallbackValue(std::string_view token);

} // namespace atlas::pipeline
