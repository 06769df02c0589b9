#include "tokenize/tokenizer.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "io/modelfile.h"
#include "tokenize/huggingfacetokenizer.h"
#include "tokenize/sentencepiecetokenizer.h"
#include "tokenize/specialtokenstokenizer.h"
#include "util/commalist.h"
#include "util/error.h"

#include <charconv>
#include <filesystem>

#include <nlohmann/json.hpp>

namespace atlas {

namespace {

// A model without a tokenizer this program reads: ids only, shown as "#id". `reason` says why.
class IdTokenizer : public Tokenizer
{
public:
    explicit IdTokenizer(std::string reason)
        : m_reason(std::move(reason))
    {
    }
    std::string kind() const override { return "ids"; }
    bool canEncode() const override { return false; }
    std::string noTextReason() const override { return m_reason; }
    std::vector<int> encode(const std::string &) const override
    {
        throw Error(m_reason + ", so text cannot be tokenized: give token ids instead (--tokens 464,3290,318)");
    }
    std::string decode(const std::vector<int> &ids) const override
    {
        std::string s;
        for (int id : ids)
            s += piece(id);
        return s;
    }
    std::string piece(int id) const override { return std::string("#").append(std::to_string(id)); }

private:
    std::string m_reason;
};

bool hasFile(const std::string &directory, const char *name)
{
    std::error_code ec;
    return !directory.empty() && std::filesystem::is_regular_file(std::filesystem::path(directory) / name, ec);
}

bool lowerCasesWordPieces(const std::string &directory)
{
    const std::string config = (std::filesystem::path(directory) / "tokenizer_config.json").string();
    if (!hasFile(directory, "tokenizer_config.json"))
        return true; // bert-base-uncased, the usual vocab.txt
    const nlohmann::json json = parseJson(readModelFile(config, limits::kSpecBytes), config);
    const auto it = json.is_object() ? json.find("do_lower_case") : json.end();
    if (it == json.end() || it->is_null())
        return true;
    if (!it->is_boolean())
        throw Error(config + ": do_lower_case: expected true or false, got " + shownJson(*it));
    return it->get<bool>();
}

} // namespace

std::unique_ptr<Tokenizer> directoryTokenizer(const std::string &directory)
{
    const std::filesystem::path dir(directory);
    const char *sentencePiece = hasFile(directory, "spiece.model") ? "spiece.model"
        : hasFile(directory, "tokenizer.model")                    ? "tokenizer.model"
                                                                   : nullptr;
    if (hasFile(directory, "tokenizer.json")) {
        try {
            return HuggingFaceTokenizer::fromFile((dir / "tokenizer.json").string());
        } catch (const Error &) {
            if (!sentencePiece)
                throw;
        }
    }
    if (sentencePiece)
        return std::make_unique<SentencePieceTokenizer>((dir / sentencePiece).string());
    if (hasFile(directory, "vocab.json") && hasFile(directory, "merges.txt"))
        return HuggingFaceTokenizer::fromGpt2Files((dir / "vocab.json").string(), (dir / "merges.txt").string());
    if (hasFile(directory, "vocab.txt"))
        return HuggingFaceTokenizer::fromWordPieceVocab((dir / "vocab.txt").string(), lowerCasesWordPieces(directory));
    return nullptr;
}

std::unique_ptr<Tokenizer> idTokenizer(const std::string &reason)
{
    return std::make_unique<IdTokenizer>(reason);
}

std::vector<int> ByteTokenizer::encode(const std::string &text) const
{
    std::vector<int> ids;
    ids.reserve(text.size());
    for (unsigned char c : text)
        ids.push_back(c);
    return ids;
}

std::string ByteTokenizer::decode(const std::vector<int> &ids) const
{
    std::string s;
    for (int id : ids)
        if (id >= 0 && id < 256)
            s += static_cast<char>(id);
    return s;
}

std::string ByteTokenizer::piece(int id) const
{
    if (id == ' ')
        return "␣";
    if (id == '\n')
        return "↵";
    if (id == '\t')
        return "⇥";
    if (id > 32 && id < 127)
        return std::string(1, static_cast<char>(id));
    char buf[12];
    std::snprintf(buf, sizeof buf, "<0x%02X>", id & 0xff);
    return buf;
}

int singleToken(const Tokenizer &tokenizer, const std::string &text, int vocab, const std::string &name)
{
    const bool byId = !text.empty() && text[0] == '#';
    const std::vector<int> ids = byId ? parseTokenList(text.substr(1)) : tokenizer.encode(text);
    if (ids.size() != 1)
        throw Error(name + " \"" + text + "\" is " + std::to_string(ids.size())
            + " tokens for this model's tokenizer: give one token, or its id as #id");
    if (ids.front() < 0 || ids.front() >= vocab)
        throw Error(name + " \"" + text + "\": an id is #0 … #" + std::to_string(vocab - 1));
    return ids.front();
}

std::vector<int> parseTokenList(const std::string &text)
{
    std::vector<int> ids;
    if (text.find_first_not_of(" \t\n") == std::string::npos)
        return ids;
    const auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
    for (const std::string &item : splitCommaList(text)) {
        if (item.find_first_not_of(" \t\n") == std::string::npos)
            throw Error("token list '" + text + "': an empty item (two commas in a row, or a comma at an end)");
        for (size_t i = 0; i < item.size();) { // items may also be separated by white space: "1 2 3"
            if (isSpace(item[i])) {
                ++i;
                continue;
            }
            size_t j = i;
            while (j < item.size() && !isSpace(item[j]))
                ++j;
            int value = 0;
            auto [ptr, ec] = std::from_chars(item.data() + i, item.data() + j, value);
            if (ec != std::errc() || ptr != item.data() + j || value < 0)
                throw Error(
                    "token list: '" + item.substr(i, j - i) + "' is not a token id (expected non-negative integers)");
            ids.push_back(value);
            i = j;
        }
    }
    return ids;
}

} // namespace atlas
