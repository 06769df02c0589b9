#include "tokenize/ggufvocabulary.h"

#include "io/gguf.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "io/modelfile.h"
#include "tokenize/bertvocabulary.h"
#include "tokenize/gpt2vocabulary.h"
#include "tokenize/llamacppunigram.h"
#include "tokenize/sentencepiecespec.h"
#include "tokenize/sentencepiecetokenizer.h"
#include "tokenize/subwordtables.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"
#include "util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <limits>
#include <unordered_map>
#include <vector>

namespace atlas {

namespace {

using Json = nlohmann::json;

using namespace gguftoken;

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

// tokenizer.ggml.scores, one for each of `count` tokens.
std::vector<double> tokenScores(const GgufFile &f, size_t count)
{
    std::vector<double> scores = f.numbers("tokenizer.ggml.scores");
    if (scores.size() != count)
        throw Error(f.path() + ": metadata key 'tokenizer.ggml.scores': " + std::to_string(scores.size())
            + " scores for " + std::to_string(count) + " tokens");
    return scores;
}

// SentencePiece's BPE as llama.cpp runs it (llm_tokenizer_spm): any two neighbouring symbols whose text is a token
// merge, the token of the highest score first. As a BPE merge list: every way of cutting each token into two tokens,
// ranked by the whole token's score.
Json mergesFromScores(const GgufFile &f, const std::vector<std::string> &tokens, const std::vector<int64_t> &types)
{
    const std::vector<double> scores = tokenScores(f, tokens.size());
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

// llama.cpp's 't5' vocabulary: its model is built apart (llamacppunigram.h), so the pipeline has no normalizer or
// pre-tokenizer of its own; decoding turns "▁" back into spaces, and drops the one space add_space_prefix put in
// front of the text.
Json unigramJson(const GgufFile &f, const Json &added)
{
    Json decoders = Json::array(
        {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}}, {{"type", "Fuse"}}});
    if (f.has("tokenizer.ggml.add_space_prefix") && f.boolean("tokenizer.ggml.add_space_prefix"))
        decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
    return {{"added_tokens", added}, {"normalizer", nullptr}, {"pre_tokenizer", nullptr}, {"model", nullptr},
        {"decoder", {{"type", "Sequence"}, {"decoders", decoders}}}};
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

Json ggufTokenizerJson(const GgufFile &f, pipeline::VocabEntries &vocab, std::unique_ptr<pipeline::SubwordModel> &model)
{
    const std::string &kind = f.string("tokenizer.ggml.model");
    const bool spm = kind == "llama", wpm = kind == "bert", ugm = kind == "t5";
    if (kind != "gpt2" && !spm && !wpm && !ugm)
        throw Error(f.path() + ": metadata key 'tokenizer.ggml.model': '" + shownText(kind)
            + "' tokenizers are not read by this version (it reads 'gpt2', byte-level BPE, 'llama', "
              "SentencePiece's BPE, 'bert', WordPiece, and 't5', SentencePiece's Unigram)");
    const std::vector<std::string> &tokens = f.strings("tokenizer.ggml.tokens");
    pipeline::checkVocabularySize(tokens.size(), f.path() + ": metadata key 'tokenizer.ggml.tokens'");
    std::vector<int64_t> types(tokens.size(), kNormal);
    if (f.has("tokenizer.ggml.token_type")) {
        types = f.integers("tokenizer.ggml.token_type");
        if (types.size() != tokens.size())
            throw Error(f.path() + ": metadata key 'tokenizer.ggml.token_type': " + std::to_string(types.size())
                + " types for " + std::to_string(tokens.size()) + " tokens");
    }
    // llama.cpp splits control, user-defined and unknown tokens off the text first (tokenizer_st_partition)
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
        if ((type == kControl || type == kUserDefined || type == kUnknown) && !token.empty())
            added.push_back({{"id", id}, {"content", token}, {"single_word", false}, {"lstrip", false},
                {"rstrip", false}, {"normalized", false}, {"special", type != kUserDefined}});
    }
    if (wpm)
        return wordPieceJson(f, tokens, types, added, vocab);
    Json root;
    if (ugm) {
        root = unigramJson(f, added);
        model = makeLlamaCppUnigram({f.path(), tokens, tokenScores(f, tokens.size()), types,
            f.has("tokenizer.ggml.precompiled_charsmap") ? f.byteArray("tokenizer.ggml.precompiled_charsmap") : "",
            f.has("tokenizer.ggml.add_space_prefix") && f.boolean("tokenizer.ggml.add_space_prefix"),
            f.has("tokenizer.ggml.remove_extra_whitespaces") && f.boolean("tokenizer.ggml.remove_extra_whitespaces"),
            int(tokenIdOf(f, "tokenizer.ggml.unknown_token_id", 2, tokens.size()))});
    } else {
        root = spm ? sentencePieceJson(f, tokens, types, added) : byteLevelJson(f, added);
    }
    // llama.cpp adds BOS where the file says so, and for SentencePiece's BPE unless it says not to; EOS where the file
    // says so, and for 't5' unless it says not to
    const bool addBos = f.has("tokenizer.ggml.add_bos_token") ? f.boolean("tokenizer.ggml.add_bos_token") : spm;
    const bool addEos = f.has("tokenizer.ggml.add_eos_token") ? f.boolean("tokenizer.ggml.add_eos_token") : ugm;
    Json single = Json::array({{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}});
    Json special = Json::object();
    // a 't5' file's ids default to llama.cpp's (</s> 1); the others must name theirs
    const auto specialToken = [&](const char *key, uint64_t fallback, bool first) {
        const uint64_t id = tokenIdOf(f, key, ugm ? fallback : f.unsignedValue(key), tokens.size());
        const std::string &name = tokens[id];
        const Json step = {{"SpecialToken", {{"id", name}, {"type_id", 0}}}};
        single.insert(first ? single.begin() : single.end(), step);
        special[name] = {{"id", name}, {"ids", {id}}, {"tokens", {name}}};
    };
    if (addBos)
        specialToken("tokenizer.ggml.bos_token_id", 1, true);
    if (addEos)
        specialToken("tokenizer.ggml.eos_token_id", 1, false);
    if (addBos || addEos)
        root["post_processor"] = {{"type", "TemplateProcessing"}, {"single", single},
            {"pair", {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
            {"special_tokens", special}};
    return root;
}

namespace {

// Hugging Face's spelling of llama.cpp's patterns (tokenizer.json's Split before a ByteLevel step): the same
// expressions, case folded with (?i:…) where llama.cpp spells out each letter's two cases.
struct HuggingFacePattern
{
    const char *regex;
    const char *pre;
};
const HuggingFacePattern kHuggingFacePatterns[] = {
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
     "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        "llama-bpe"},
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
     "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        "qwen2"},
    {kGpt2[0], "gpt-2"},
};

// The pre-tokenizer name of a tokenizer.json's byte-level pre-tokenizer, or empty.
std::string byteLevelPreName(const Json &pre)
{
    if (!pre.is_object())
        return "";
    const std::string type = pre.value("type", "");
    if (type == "ByteLevel") // its own regex, GPT-2's
        return pre.value("use_regex", true) && !pre.value("add_prefix_space", false) ? "gpt-2" : "";
    if (type != "Sequence" || !pre.contains("pretokenizers") || pre["pretokenizers"].size() != 2)
        return "";
    const Json &split = pre["pretokenizers"][0], &bytes = pre["pretokenizers"][1];
    if (split.value("type", "") != "Split" || bytes.value("type", "") != "ByteLevel" || bytes.value("use_regex", true)
        || !split.contains("pattern") || !split["pattern"].is_object() || !split["pattern"].contains("Regex"))
        return "";
    const Json &regex = split["pattern"]["Regex"];
    for (const HuggingFacePattern &p : kHuggingFacePatterns)
        if (regex.is_string() && regex.get<std::string>() == p.regex)
            return p.pre;
    return "";
}

// A special token as tokenizer_config.json names it: "<s>" or {"content": "<s>", …}.
std::string tokenContent(const Json &value)
{
    if (value.is_string())
        return value.get<std::string>();
    if (value.is_object() && value.contains("content") && value["content"].is_string())
        return value["content"].get<std::string>();
    return "";
}

// Whether a tokenizer.json's model is a BPE without byte fallback, the kind llama.cpp's 'gpt2' tokenizer runs.
bool isByteLevelBpe(const Json &root)
{
    const Json &model = root.contains("model") ? root["model"] : Json();
    return model.is_object() && model.value("type", "") == "BPE" && !model.value("byte_fallback", false);
}

// llama.cpp's converter's _create_vocab_sentencepiece: the pieces by id with their scores and types, the model's
// rows past them as unused "[PAD{id}]" scored -10000, and tokenizer_config.json's added_tokens_decoder over them
// (special ones as control tokens, others as user-defined ones whose "▁" is a space), scored -1000.
GgufVocabulary sentencePieceGgufVocabulary(const std::string &path, const std::string &directory, int64_t vocabSize)
{
    const SentencePieceTokenizer sp(path);
    if (sp.vocabSize() > vocabSize)
        throw Error(path + ": " + std::to_string(sp.vocabSize()) + " pieces, more than the model's "
            + std::to_string(vocabSize) + " embedding rows");
    GgufVocabulary v;
    // A Unigram model is llama.cpp's 't5' tokenizer (its T5 converter), with the normaliser's charsmap and flags;
    // a BPE one its 'llama'.
    const SentencePieceSpec spec = readSentencePieceSpec(path);
    v.model = spec.unigram ? "t5" : "llama";
    v.pre = "default";
    if (spec.unigram) {
        v.charsmap = spec.charsmap;
        v.addSpacePrefix = spec.addDummyPrefix;
        v.removeExtraWhitespaces = spec.removeExtraWhitespaces;
    }
    v.tokens.resize(size_t(vocabSize));
    v.types.assign(size_t(vocabSize), int32_t(kUnused));
    v.scores.assign(size_t(vocabSize), -10000.0f);
    for (int64_t id = 0; id < vocabSize; ++id) {
        if (id >= sp.vocabSize()) {
            v.tokens[size_t(id)] = "[PAD" + std::to_string(id) + "]";
            continue;
        }
        const SentencePieceTokenizer::StoredPiece p = sp.storedPiece(int(id));
        v.tokens[size_t(id)] = p.text;
        v.scores[size_t(id)] = p.score;
        v.types[size_t(id)] = int32_t(p.unknown ? kUnknown
                : p.control                     ? kControl
                : p.unused                      ? kUnused
                : p.byte                        ? kByte
                                                : kNormal);
        if (p.unknown && v.unknown < 0)
            v.unknown = id;
    }
    const std::string configPath = (std::filesystem::path(directory) / "tokenizer_config.json").string();
    std::error_code ec;
    if (std::filesystem::is_regular_file(configPath, ec)) {
        const Json config = parseJson(readModelFile(configPath, limits::kTokenizerBytes), configPath);
        const Json decoder = config.is_object() ? config.value("added_tokens_decoder", Json()) : Json();
        if (decoder.is_object())
            for (const auto &[key, token] : decoder.items()) {
                int64_t id = -1;
                if (std::from_chars(key.data(), key.data() + key.size(), id).ec != std::errc() || id < 0
                    || id >= vocabSize || !token.is_object() || !token.contains("content")
                    || !token["content"].is_string())
                    throw Error(configPath + ": key 'added_tokens_decoder." + shownText(key)
                        + "': expected a token id below " + std::to_string(vocabSize) + " and its \"content\"");
                std::string content = token["content"].get<std::string>();
                const bool special = token.value("special", false);
                if (!special)
                    for (size_t at; (at = content.find("\u2581")) != std::string::npos;)
                        content.replace(at, 3, " ");
                v.tokens[size_t(id)] = content;
                v.types[size_t(id)] = int32_t(special ? kControl : kUserDefined);
                v.scores[size_t(id)] = -1000.0f;
            }
    }
    v.bos = sp.bosId();
    v.eos = sp.eosId();
    v.addBos = sp.addsBos() && v.bos >= 0;
    v.addEos = sp.addsEos() && v.eos >= 0;
    return v;
}

} // namespace

GgufVocabulary huggingFaceGgufVocabulary(const std::string &directory, int64_t vocabSize)
{
    namespace fs = std::filesystem;
    const fs::path dir(directory);
    std::error_code ec;
    const char *sentencePiece = fs::is_regular_file(dir / "tokenizer.model", ec) ? "tokenizer.model"
        : fs::is_regular_file(dir / "spiece.model", ec)                          ? "spiece.model"
                                                                                 : nullptr;
    Json root;
    std::string source;
    if (fs::is_regular_file(dir / "tokenizer.json", ec)) {
        source = (dir / "tokenizer.json").string();
        root = parseJson(readModelFile(source, limits::kTokenizerBytes), source);
        if (!isByteLevelBpe(root)
            && sentencePiece) // Mistral's and Llama 2's tokenizer.json beside their tokenizer.model
            return sentencePieceGgufVocabulary((dir / sentencePiece).string(), directory, vocabSize);
    } else if (fs::is_regular_file(dir / "vocab.json", ec) && fs::is_regular_file(dir / "merges.txt", ec)) {
        source = (dir / "vocab.json").string();
        root = gpt2TokenizerJson(source, (dir / "merges.txt").string());
    } else if (sentencePiece) {
        return sentencePieceGgufVocabulary((dir / sentencePiece).string(), directory, vocabSize);
    } else {
        throw Error(directory
            + ": no tokenizer.json, vocab.json and merges.txt, or SentencePiece model: the tokenizers written to GGUF "
              "files are byte-level BPEs and SentencePiece models (a WordPiece one is not written yet)");
    }
    const auto fail = [&](const std::string &key, const std::string &problem) {
        throw Error(source + ": key '" + key + "': " + problem);
    };
    const Json &model = root.contains("model") ? root["model"] : Json();
    if (!isByteLevelBpe(root))
        fail("model",
            "not a byte-level BPE (its type " + shownText(model.is_object() ? model.value("type", "?") : "?")
                + "), and no SentencePiece model (tokenizer.model) beside it: this tokenizer is not written to GGUF "
                  "files yet");
    GgufVocabulary v;
    v.pre = byteLevelPreName(root.value("pre_tokenizer", Json()));
    if (v.pre.empty())
        fail("pre_tokenizer",
            "not one of the byte-level pre-tokenizers llama.cpp names that this program writes (GPT-2's, Llama 3's "
            "and Qwen2's patterns)");
    const Json normalizer = root.value("normalizer", Json());
    if (!normalizer.is_null() && normalizer.value("type", "") != "NFC")
        fail("normalizer", "llama.cpp's 'gpt2' tokenizers have none (Qwen2's NFC aside): this one is not written");
    v.tokens.assign(size_t(vocabSize), "");
    v.types.assign(size_t(vocabSize), 0);
    const auto place = [&](const std::string &token, const Json &idValue, int32_t type, const std::string &key) {
        if (!idValue.is_number_integer() || idValue.get<int64_t>() < 0 || idValue.get<int64_t>() >= vocabSize)
            fail(key,
                "token '" + shownText(token) + "' has id " + idValue.dump() + ", outside the model's "
                    + std::to_string(vocabSize) + " embedding rows");
        const size_t id = idValue.get<size_t>();
        v.tokens[id] = token;
        v.types[id] = type;
    };
    if (!model.contains("vocab") || !model["vocab"].is_object())
        fail("model.vocab", "missing or not an object");
    for (const auto &[token, id] : model["vocab"].items())
        place(token, id, kNormal, "model.vocab");
    for (const Json &added : root.value("added_tokens", Json::array()))
        if (added.is_object() && added.contains("content") && added["content"].is_string())
            place(added["content"].get<std::string>(), added.value("id", Json()),
                added.value("special", false) ? kControl : kUserDefined, "added_tokens");
    for (size_t id = 0; id < v.tokens.size(); ++id)
        if (v.types[id] == 0) { // as the converter fills the ids no token has
            v.tokens[id] = "[PAD" + std::to_string(id) + "]";
            v.types[id] = 5;
        }
    for (const Json &merge : model.value("merges", Json::array())) {
        if (merge.is_string())
            v.merges.push_back(merge.get<std::string>());
        else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string())
            v.merges.push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
        else
            fail("model.merges", "a merge is neither \"left right\" nor [left, right]: " + shownJson(merge));
    }
    const auto idOf = [&](const std::string &token) -> int64_t {
        const auto it = std::find(v.tokens.begin(), v.tokens.end(), token);
        return token.empty() || it == v.tokens.end() ? -1 : int64_t(it - v.tokens.begin());
    };
    Json config;
    if (const fs::path path = dir / "tokenizer_config.json"; fs::is_regular_file(path, ec))
        config = parseJson(readModelFile(path.string(), limits::kTokenizerBytes), path.string());
    if (config.is_object()) {
        v.bos = idOf(tokenContent(config.value("bos_token", Json())));
        v.eos = idOf(tokenContent(config.value("eos_token", Json())));
        v.addBos = config.value("add_bos_token", false) && v.bos >= 0;
    }
    if (v.pre == "gpt-2" && v.eos < 0) // GPT-2's files: <|endoftext|> begins and ends a text
        v.bos = v.eos = idOf("<|endoftext|>");
    // A post-processor that puts a special token in front of a text (Llama 3's <|begin_of_text|>) adds BOS.
    const Json post = root.value("post_processor", Json());
    if (post.is_object() && post.value("type", "") == "TemplateProcessing" && post.contains("single")
        && post["single"].is_array() && !post["single"].empty() && post["single"][0].contains("SpecialToken")) {
        const int64_t bos = idOf(post["single"][0]["SpecialToken"].value("id", ""));
        if (bos >= 0) {
            v.bos = bos;
            v.addBos = true;
        }
    }
    return v;
}

} // namespace atlas
