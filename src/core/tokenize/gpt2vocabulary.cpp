#include "tokenize/gpt2vocabulary.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "io/modelfile.h"
#include "tokenize/pipeline.h"
#include "tokenize/subwordtables.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <unordered_set>

namespace atlas {

namespace {

constexpr int64_t kMaxTokenId = (1 << 24) - 1;

std::string hexCodePoint(uint32_t cp)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", cp);
    return buf;
}

// The first character of a symbol that is not one of the 256 byte symbols (kInvalidCodePoint for bad UTF-8), or
// 0 when all are.
uint32_t firstNonByteSymbol(std::string_view symbol)
{
    for (size_t pos = 0; pos < symbol.size();) {
        const unicode::DecodedChar c = unicode::decodeUtf8(symbol, pos);
        if (c.codePoint == unicode::kInvalidCodePoint || pipeline::byteOfByteLevelChar(c.codePoint) < 0)
            return c.codePoint;
        pos += c.length;
    }
    return 0;
}

nlohmann::json readVocab(const std::string &path)
{
    size_t tokens = 0; // counted as they are read: a vocabulary past the bound is refused before it is built
    nlohmann::json json = parseJson(readModelFile(path, limits::kTokenizerBytes), path,
        [&](int depth, nlohmann::json::parse_event_t event, const auto &) {
            if (depth == 1 && event == nlohmann::json::parse_event_t::key && ++tokens > pipeline::kMaxVocabularyTokens)
                pipeline::checkVocabularySize(tokens, path);
        });
    if (!json.is_object() || json.empty())
        throw Error(path + ": expected a JSON object mapping each token to its id");
    std::unordered_set<int64_t> ids;
    for (const auto &[key, value] : json.items()) {
        if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > kMaxTokenId)
            throw Error(path + ": token '" + key.substr(0, 60) + "' has id " + shownJson(value)
                + "; ids are integers 0.." + std::to_string(kMaxTokenId));
        if (!ids.insert(value.get<int64_t>()).second)
            throw Error(path + ": id " + std::to_string(value.get<int64_t>()) + " is given to two tokens (one is '"
                + key.substr(0, 60) + "')");
    }
    for (int b = 0; b < 256; ++b)
        if (!json.contains(std::string(pipeline::byteLevelUtf8(static_cast<unsigned char>(b))))) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "0x%02X", b);
            throw Error(path + ": byte " + buf + " (symbol " + hexCodePoint(pipeline::byteLevelChar(b))
                + ") has no token; a byte-level BPE vocabulary has a token for each of the 256 bytes");
        }
    return json;
}

nlohmann::json readMerges(const std::string &path, const nlohmann::json &vocab, const std::string &vocabPath)
{
    const std::string text = readModelFile(path, limits::kTokenizerBytes);
    nlohmann::json merges = nlohmann::json::array();
    int lineNo = 0;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        std::string_view line(text.data() + start, end - start);
        start = end + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if ((lineNo == 1 && line.starts_with("#version")) || line.empty())
            continue;
        const auto where = [&] { return path + ": line " + std::to_string(lineNo) + ": "; };
        const size_t space = line.find(' ');
        const std::string left(line.substr(0, space));
        const std::string right(space == line.npos ? std::string_view() : line.substr(space + 1));
        if (left.empty() || right.empty() || right.find(' ') != std::string::npos)
            throw Error(
                where() + "expected two symbols separated by one space, got '" + std::string(line.substr(0, 60)) + "'");
        for (const std::string *symbol : {&left, &right})
            if (const uint32_t bad = firstNonByteSymbol(*symbol))
                throw Error(where()
                    + (bad == unicode::kInvalidCodePoint
                            ? std::string("not valid UTF-8")
                            : hexCodePoint(bad) + " is not one of GPT-2's 256 byte symbols"));
        for (const std::string &token : {left, right, left + right})
            if (!vocab.contains(token))
                throw Error(where() + "'" + token.substr(0, 60) + "' is not a token of " + vocabPath);
        merges.push_back({left, right});
    }
    return merges;
}

} // namespace

nlohmann::json gpt2TokenizerJson(const std::string &vocabPath, const std::string &mergesPath)
{
    nlohmann::json vocab = readVocab(vocabPath);
    nlohmann::json merges = readMerges(mergesPath, vocab, vocabPath);
    nlohmann::json added = nlohmann::json::array();
    if (vocab.contains("<|endoftext|>"))
        added.push_back({{"id", vocab["<|endoftext|>"]}, {"content", "<|endoftext|>"}, {"single_word", false},
            {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"special", true}});
    const nlohmann::json byteLevel = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
    return {
        {"added_tokens", std::move(added)},
        {"pre_tokenizer", byteLevel},
        {"model", {{"type", "BPE"}, {"vocab", std::move(vocab)}, {"merges", std::move(merges)}}},
        {"decoder", byteLevel},
    };
}

} // namespace atlas
