#include "tokenize/ggufvocabulary.h"

#include "io/gguf.h"
#include "tokenize/bertvocabulary.h"
#include "tokenize/subwordtables.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"
#include "util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <limits>
#include <unordered_map>
#include <vector>

namespace atlas {

namespace {

using Json = nlohmann::json;

// llama.cpp's token types (llama_token_type).
constexpr int64_t kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kByte = 6; // 5: unused

// The patterns of llama.cpp's BPE pre-tokenizers (llm_tokenizer_bpe), applied one after the other: each splits the
// pieces the last one left, keeping what it matched and what lies between as pieces of their own.
const char *const kGpt2[] = {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"};
const char *const kLlama3[]
    = {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
       "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
const char *const kQwen2[] = {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
                              "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
const char *const kDeepseekCoder[] = {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}"};
const char *const kFalcon[] = {"[\\p{P}\\$\\+<=>\\^~\\|`]+",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)", "[0-9][0-9][0-9]"};
const char *const kStarcoder[]
    = {"\\p{N}", "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"};
const char *const kDefault[] = {"[\\p{P}\\$\\+<=>\\^~\\|]+",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)", "\\p{N}+", "[0-9][0-9][0-9]"};

struct PreTokenizer
{
    std::vector<const char *> names; // tokenizer.ggml.pre values
    std::vector<const char *> patterns;
    bool ignoreMerges = false; // a piece that is itself a token is that token
};

template <size_t N> std::vector<const char *> list(const char *const (&patterns)[N])
{
    return {patterns, patterns + N};
}

// llama-vocab.cpp's table of tokenizer.ggml.pre, for the pre-tokenizers above.
const std::vector<PreTokenizer> &preTokenizers()
{
    static const std::vector<PreTokenizer> table = {
        {{"default"}, list(kDefault)},
        {{"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"}, list(kLlama3), true},
        {{"dbrx", "smaug-bpe"}, list(kLlama3)},
        {{"qwen2", "deepseek-r1-qwen", "stablelm2"}, list(kQwen2)},
        {{"deepseek-coder"}, list(kDeepseekCoder)},
        {{"falcon"}, list(kFalcon)},
        {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"}, list(kStarcoder)},
        {{"gpt-2", "phi-2", "mpt", "olmo", "jina-es", "jina-de", "jina-v2-es", "jina-v2-de", "gigachat", "mellum"},
            list(kGpt2)},
    };
    return table;
}

const PreTokenizer &preTokenizerOf(const GgufFile &f)
{
    const std::string name = f.has("tokenizer.ggml.pre") ? f.string("tokenizer.ggml.pre") : "default";
    for (const PreTokenizer &p : preTokenizers())
        for (const char *n : p.names)
            if (name == n)
                return p;
    throw Error(f.path() + ": metadata key 'tokenizer.ggml.pre': '" + shownText(name)
        + "' is a pre-tokenizer this program does not know (it knows " + ggufPreTokenizerNames() + ")");
}

// Byte-level BPE (llm_tokenizer_bpe): the file's merges, and llama.cpp's patterns for its pre-tokenizer.
Json byteLevelJson(const GgufFile &f, const Json &added)
{
    const PreTokenizer &pre = preTokenizerOf(f);
    Json merges = Json::array();
    if (f.has("tokenizer.ggml.merges"))
        for (const std::string &m : f.strings("tokenizer.ggml.merges"))
            merges.push_back(m);
    Json steps = Json::array();
    for (const char *pattern : pre.patterns)
        steps.push_back(
            {{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}});
    steps.push_back(
        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}});
    return {
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", steps}}},
        {"model",
            {{"type", "BPE"}, {"merges", merges}, {"ignore_merges", pre.ignoreMerges}, {"byte_fallback", false},
                {"fuse_unk", false}}},
        {"decoder",
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}},
    };
}

// SentencePiece's BPE as llama.cpp runs it (llm_tokenizer_spm): any two neighbouring symbols whose text is a token
// merge, the token of the highest score first. As a BPE merge list: every way of cutting each token into two tokens,
// ranked by the whole token's score.
Json mergesFromScores(const GgufFile &f, const std::vector<std::string> &tokens, const std::vector<int64_t> &types)
{
    const std::vector<double> scores = f.numbers("tokenizer.ggml.scores");
    if (scores.size() != tokens.size())
        throw Error(f.path() + ": metadata key 'tokenizer.ggml.scores': " + std::to_string(scores.size())
            + " scores for " + std::to_string(tokens.size()) + " tokens");
    std::unordered_map<std::string_view, size_t> ids;
    ids.reserve(tokens.size());
    for (size_t id = 0; id < tokens.size(); ++id)
        if (types[id] == kNormal || types[id] == kUserDefined)
            ids.emplace(tokens[id], id);
    struct Merge
    {
        double score;
        size_t token, cut;
    };
    std::vector<Merge> merges;
    for (size_t id = 0; id < tokens.size(); ++id) {
        if (types[id] != kNormal)
            continue;
        const std::string_view t = tokens[id];
        for (size_t cut = 1; cut < t.size(); ++cut) {
            if ((static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) // inside a character
                continue;
            if (ids.count(t.substr(0, cut)) && ids.count(t.substr(cut)))
                merges.push_back({scores[id], id, cut});
        }
    }
    std::stable_sort(merges.begin(), merges.end(), [](const Merge &a, const Merge &b) { return a.score > b.score; });
    Json list = Json::array();
    for (const Merge &m : merges) {
        const std::string &t = tokens[m.token];
        list.push_back(Json::array({t.substr(0, m.cut), t.substr(m.cut)}));
    }
    return list;
}

// llm_tokenizer_spm: a space in front of the text (add_space_prefix, on unless the file says otherwise), every space
// as ▁, then the merges; a character that is no token is its bytes' <0xXX> tokens.
Json sentencePieceJson(
    const GgufFile &f, const std::vector<std::string> &tokens, const std::vector<int64_t> &types, const Json &added)
{
    const bool prefix = !f.has("tokenizer.ggml.add_space_prefix") || f.boolean("tokenizer.ggml.add_space_prefix");
    Json normalizers = Json::array();
    if (prefix)
        normalizers.push_back({{"type", "Prepend"}, {"prepend", "\u2581"}});
    normalizers.push_back({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}});
    Json decoders = Json::array({{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
        {{"type", "ByteFallback"}}, {{"type", "Fuse"}}});
    if (prefix)
        decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
    Json bpe = {
        {"type", "BPE"}, {"merges", mergesFromScores(f, tokens, types)}, {"byte_fallback", true}, {"fuse_unk", true}};
    for (size_t id = 0; id < tokens.size(); ++id)
        if (types[id] == kUnknown) {
            bpe["unk_token"] = tokens[id];
            break;
        }
    return {{"added_tokens", added}, {"normalizer", {{"type", "Sequence"}, {"normalizers", normalizers}}},
        {"pre_tokenizer", nullptr}, {"model", bpe}, {"decoder", {{"type", "Sequence"}, {"decoders", decoders}}}};
}

// A token id the file names under `key`, or `fallback` (llama.cpp's default for the vocabulary's kind) without it.
uint64_t tokenIdOf(const GgufFile &f, const char *key, uint64_t fallback, size_t tokens)
{
    const uint64_t id = f.has(key) ? f.unsignedValue(key) : fallback;
    if (id >= tokens)
        throw Error(f.path() + ": metadata key '" + key + "': " + std::to_string(id) + " is outside the vocabulary of "
            + std::to_string(tokens));
    return id;
}

// llama.cpp's WPM tokenizer (llm_tokenizer_wpm) on a BERT vocabulary as its converter writes it: a word's first piece
// stored as "▁piece", every later piece bare. Hugging Face's WordPiece reads the same vocabulary as "piece" and
// "##piece" (`vocab` is rewritten so): BertNormalizer (lowercase, and accents stripped, unless the file's
// tokenizer.ggml.normalizer keys say otherwise), BertPreTokenizer, then the longest piece at each place, a word that
// cannot be cut whole being the unknown token; llama.cpp puts no limit on a word's length. [CLS] … [SEP] around the
// text, as llama.cpp adds them.
Json wordPieceJson(const GgufFile &f, const std::vector<std::string> &tokens, const std::vector<int64_t> &types,
    const Json &added, pipeline::VocabEntries &vocab)
{
    static const std::string kWordStart = "\u2581";
    for (size_t id = 0; id < tokens.size(); ++id) {
        if (types[id] != kNormal)
            continue;
        const std::string &t = tokens[id];
        vocab[id].first = t.starts_with(kWordStart) ? t.substr(kWordStart.size()) : "##" + t;
    }
    const bool lowercase
        = !f.has("tokenizer.ggml.normalizer.lowercase") || f.boolean("tokenizer.ggml.normalizer.lowercase");
    const bool stripAccents = f.has("tokenizer.ggml.normalizer.strip_accents")
        ? f.boolean("tokenizer.ggml.normalizer.strip_accents")
        : lowercase;
    BertTokenizerOptions options;
    options.addedTokens = added;
    options.unknown = tokens[tokenIdOf(f, "tokenizer.ggml.unknown_token_id", 100, tokens.size())];
    options.lowercase = lowercase;
    options.stripAccents = stripAccents;
    options.maxInputCharsPerWord = std::numeric_limits<int32_t>::max();
    if (!f.has("tokenizer.ggml.add_bos_token") || f.boolean("tokenizer.ggml.add_bos_token")) {
        const uint64_t cls = f.has("tokenizer.ggml.bos_token_id")
            ? tokenIdOf(f, "tokenizer.ggml.bos_token_id", 101, tokens.size())
            : tokenIdOf(f, "tokenizer.ggml.cls_token_id", 101, tokens.size());
        const uint64_t sep = tokenIdOf(f, "tokenizer.ggml.seperator_token_id", 102, tokens.size());
        options.cls = {tokens[cls], int64_t(cls)};
        options.sep = {tokens[sep], int64_t(sep)};
    }
    return bertTokenizerJson(options);
}

} // namespace

std::string ggufPreTokenizerNames()
{
    std::string names;
    for (const PreTokenizer &p : preTokenizers())
        for (const char *n : p.names)
            names += (names.empty() ? "" : ", ") + std::string(n);
    return names;
}

Json ggufTokenizerJson(const GgufFile &f, pipeline::VocabEntries &vocab)
{
    const std::string &model = f.string("tokenizer.ggml.model");
    const bool spm = model == "llama", wpm = model == "bert";
    if (model != "gpt2" && !spm && !wpm)
        throw Error(f.path() + ": metadata key 'tokenizer.ggml.model': '" + shownText(model)
            + "' tokenizers are not read by this version (it reads 'gpt2', byte-level BPE, 'llama', "
              "SentencePiece's BPE, and 'bert', WordPiece)");
    const std::vector<std::string> &tokens = f.strings("tokenizer.ggml.tokens");
    pipeline::checkVocabularySize(tokens.size(), f.path() + ": metadata key 'tokenizer.ggml.tokens'");
    std::vector<int64_t> types(tokens.size(), kNormal);
    if (f.has("tokenizer.ggml.token_type")) {
        types = f.integers("tokenizer.ggml.token_type");
        if (types.size() != tokens.size())
            throw Error(f.path() + ": metadata key 'tokenizer.ggml.token_type': " + std::to_string(types.size())
                + " types for " + std::to_string(tokens.size()) + " tokens");
    }
    Json added = Json::array();
    vocab.clear();
    vocab.reserve(tokens.size());
    for (size_t id = 0; id < tokens.size(); ++id) {
        const std::string &token = tokens[id];
        if (unicode::firstInvalidUtf8(token) != std::string::npos)
            throw Error(f.path() + ": metadata key 'tokenizer.ggml.tokens': token " + std::to_string(id)
                + " is not valid UTF-8");
        vocab.emplace_back(token, Json(id));
        const int64_t type = types[id];
        if (type < kNormal || type > kByte)
            throw Error(f.path() + ": metadata key 'tokenizer.ggml.token_type': token " + std::to_string(id)
                + " has type " + std::to_string(type) + " (llama.cpp's are 1 to 6)");
        if ((type == kControl || type == kUserDefined) && !token.empty())
            added.push_back({{"id", id}, {"content", token}, {"single_word", false}, {"lstrip", false},
                {"rstrip", false}, {"normalized", false}, {"special", type == kControl}});
    }
    if (wpm)
        return wordPieceJson(f, tokens, types, added, vocab);
    Json root = spm ? sentencePieceJson(f, tokens, types, added) : byteLevelJson(f, added);
    // llama.cpp adds BOS where the file says so, and for SentencePiece vocabularies unless it says not to
    const bool addBos = f.has("tokenizer.ggml.add_bos_token") ? f.boolean("tokenizer.ggml.add_bos_token") : spm;
    if (addBos) {
        const uint64_t bos = f.unsignedValue("tokenizer.ggml.bos_token_id");
        if (bos >= tokens.size())
            throw Error(f.path() + ": metadata key 'tokenizer.ggml.bos_token_id': " + std::to_string(bos)
                + " is outside the vocabulary of " + std::to_string(tokens.size()));
        const std::string &name = tokens[bos];
        root["post_processor"] = {{"type", "TemplateProcessing"},
            {"single",
                {{{"SpecialToken", {{"id", name}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
            {"pair", {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
            {"special_tokens", {{name, {{"id", name}, {"ids", {bos}}, {"tokens", {name}}}}}}};
    }
    return root;
}

} // namespace atlas
