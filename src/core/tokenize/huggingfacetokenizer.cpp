#include "tokenize/huggingfacetokenizer.h"

#include "io/atomicfile.h"
#include "io/gguf.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "io/modelfile.h"
#include "tokenize/bertvocabulary.h"
#include "tokenize/encodingprogress.h"
#include "tokenize/ggufvocabulary.h"
#include "tokenize/gpt2vocabulary.h"
#include "tokenize/pipeline.h"
#include "tokenize/subwordtables.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

namespace atlas {

using pipeline::Json;

namespace {

// Where the UTF-8 character before text[pos] starts (pos > 0).
size_t previousCharStart(std::string_view text, size_t pos)
{
    size_t start = pos - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
        --start;
    return start;
}

uint32_t charBefore(std::string_view text, size_t pos)
{
    return unicode::decodeUtf8(text, previousCharStart(text, pos)).codePoint;
}

// A byte-level token's bytes; false when some character is not one of the 256 byte symbols (an added token).
bool byteLevelBytes(const std::string &token, std::string &bytes)
{
    bytes.clear();
    for (size_t pos = 0; pos < token.size();) {
        const unicode::DecodedChar c = unicode::decodeUtf8(token, pos);
        const int b = pipeline::byteOfByteLevelChar(c.codePoint);
        if (b < 0)
            return false;
        bytes += static_cast<char>(b);
        pos += c.length;
    }
    return true;
}

bool mentionsType(const Json &json, const char *type)
{
    if (json.is_object()) {
        const auto it = json.find("type");
        if (it != json.end() && it->is_string() && it->get_ref<const std::string &>() == type)
            return true;
        for (const auto &[key, value] : json.items())
            if (mentionsType(value, type))
                return true;
    } else if (json.is_array()) {
        for (const Json &value : json)
            if (mentionsType(value, type))
                return true;
    }
    return false;
}

// transformers' clean_up_tokenization: the spaces before punctuation and English clitics.
std::string cleanedUpSpaces(std::string text)
{
    for (auto [from, to] : {std::pair {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
             {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}})
        for (size_t at = text.find(from); at != text.npos; at = text.find(from, at + std::string_view(to).size()))
            text.replace(at, std::string_view(from).size(), to);
    return text;
}

// Parses tokenizer.json with the members of model.vocab (when it is an object) moved into `vocab` instead of the
// tree: a 128,000-token vocabulary then costs a vector rather than a balanced tree of 128,000 nodes, built, walked
// and freed. The parser calls back for a member's value even when its key was kept out, so both are refused there;
// a member that is itself an object or an array is recorded as an empty one, for the vocabulary to refuse.
Json parseVocabularyAside(const std::string &text, const std::string &file, pipeline::VocabEntries &vocab)
{
    std::string keys[4]; // the key read at depths 1 to 3
    bool inVocab = false;
    return parseJsonFiltered(text, file, [&](int depth, Json::parse_event_t event, Json &parsed) {
        using E = Json::parse_event_t;
        if (inVocab && depth == 3) {
            if (event == E::key)
                keys[3] = parsed.get<std::string>();
            else if (event == E::value)
                vocab.emplace_back(std::move(keys[3]), std::move(parsed));
            else if (event == E::object_start || event == E::array_start)
                vocab.emplace_back(std::move(keys[3]), event == E::object_start ? Json::object() : Json::array());
            if (vocab.size() > pipeline::kMaxVocabularyTokens) // refused before the rest is read
                pipeline::checkVocabularySize(vocab.size(), file + ": model.vocab");
            return false;
        }
        if (event == E::key && depth >= 1 && depth <= 2)
            keys[depth] = parsed.get<std::string>();
        else if (depth == 2 && event == E::object_start)
            inVocab = keys[1] == "model" && keys[2] == "vocab";
        else if (depth == 2 && event == E::object_end)
            inVocab = false;
        return true;
    });
}

} // namespace

struct HuggingFaceTokenizerParts
{
    struct AddedToken
    {
        int id;
        std::string content;
        bool singleWord, lstrip, rstrip, normalized, special;
    };

    std::string path;
    std::unique_ptr<pipeline::Normalizer> normalizer;
    std::unique_ptr<pipeline::PreTokenizer> preTokenizer;
    std::unique_ptr<pipeline::SubwordModel> model;
    std::unique_ptr<pipeline::PostProcessor> postProcessor;
    std::unique_ptr<pipeline::Decoder> decoder;
    std::vector<AddedToken> added;
    std::unordered_map<int, size_t> addedById;
    pipeline::ByteTrie rawAdded, normalizedAdded; // content -> index into `added`
    bool byteLevel = false;
    bool cleanUpSpaces = false;

    // `given`: a model built apart (a GGUF file's 't5' vocabulary), which the JSON's "model" then leaves null.
    void read(const Json &root, const std::string &file, pipeline::VocabEntries *vocab = nullptr,
        std::unique_ptr<pipeline::SubwordModel> given = nullptr);
    void readAddedTokens(const Json &list, const JsonPlace &where);

    struct Section
    {
        std::string_view text;
        int added; // index into `added`, or -1 for text
        size_t offset;
    };
    std::vector<Section> splitAdded(std::string_view text, const pipeline::ByteTrie &trie) const;
    void encodeText(std::string_view text, bool atOrigin, std::vector<int> &ids) const;
    std::vector<int> encode(const std::string &text) const;
    const std::string *tokenString(int id) const;
};

void HuggingFaceTokenizerParts::read(const Json &root, const std::string &file, pipeline::VocabEntries *vocab,
    std::unique_ptr<pipeline::SubwordModel> given)
{
    path = file;
    if (!root.is_object())
        throw Error(file + ": expected a JSON object with a \"model\"");
    const auto part = [&](const char *key) { return root.contains(key) ? root[key] : Json(); };
    const auto model = root.find("model");
    if (!given && (model == root.end() || model->is_null()))
        throw Error(file + ": model: missing");
    normalizer = pipeline::makeNormalizer(part("normalizer"), {file, "normalizer"});
    preTokenizer = pipeline::makePreTokenizer(part("pre_tokenizer"), {file, "pre_tokenizer"});
    this->model = given ? std::move(given) : pipeline::makeSubwordModel(*model, {file, "model"}, vocab);
    postProcessor = pipeline::makePostProcessor(part("post_processor"), {file, "post_processor"});
    decoder = pipeline::makeDecoder(part("decoder"), {file, "decoder"});
    readAddedTokens(part("added_tokens"), {file, "added_tokens"});
    rawAdded.link();
    normalizedAdded.link();
    byteLevel = mentionsType(part("decoder"), "ByteLevel") || mentionsType(part("pre_tokenizer"), "ByteLevel");
}

void HuggingFaceTokenizerParts::readAddedTokens(const Json &list, const JsonPlace &where)
{
    if (list.is_null())
        return;
    if (!list.is_array())
        throw Error(where() + ": expected an array");
    for (size_t i = 0; i < list.size(); ++i) {
        const Json &t = list[i];
        const JsonPlace at = where.at(i);
        if (!t.is_object())
            throw Error(at() + ": expected an object, got " + shownJson(t));
        const auto id = t.find("id");
        if (id == t.end() || !pipeline::isIntegerUpTo(*id, 1 << 24))
            throw Error(at.at("id")() + ": expected a token id, got " + (id == t.end() ? "nothing" : shownJson(*id)));
        AddedToken token {id->get<int>(), jsonString(t, "content", at), jsonBool(t, "single_word", at, false),
            jsonBool(t, "lstrip", at, false), jsonBool(t, "rstrip", at, false), jsonBool(t, "normalized", at, true),
            jsonBool(t, "special", at, false)};
        if (token.content.empty())
            throw Error(at.at("content")() + ": empty");
        if (unicode::firstInvalidUtf8(token.content) != std::string::npos)
            throw Error(at.at("content")() + ": not valid UTF-8");
        if (addedById.count(token.id))
            continue; // listed twice: the first wins
        // The id names one token: an added token that takes the id of another of the vocabulary's would show and
        // decode that token as itself (the file's own tokens, as BERT's [CLS] or GPT-2's <|endoftext|>, agree).
        if (const std::string *own = model->tokenOf(token.id); own && *own != token.content)
            throw Error(at() + ": the added token \"" + token.content.substr(0, 60) + "\" is given id "
                + std::to_string(token.id) + ", which model.vocab gives to \"" + own->substr(0, 60)
                + "\"; one id cannot stand for two tokens");
        const int index = static_cast<int>(added.size());
        addedById[token.id] = added.size();
        if (token.normalized && normalizer) {
            std::string key = token.content;
            normalizer->normalize(key, pipeline::rewrittenLimit(key.size()));
            if (!key.empty())
                normalizedAdded.insert(key, index);
        } else {
            (token.normalized ? normalizedAdded : rawAdded).insert(token.content, index);
        }
        added.push_back(std::move(token));
    }
}

// The crate's AddedVocabulary::find_matches: leftmost-longest matches; single_word tokens only between non-word
// characters; lstrip and rstrip take the white space beside the token into it.
std::vector<HuggingFaceTokenizerParts::Section> HuggingFaceTokenizerParts::splitAdded(
    std::string_view text, const pipeline::ByteTrie &trie) const
{
    std::vector<Section> sections;
    if (trie.empty()) {
        sections.push_back({text, -1, 0});
        return sections;
    }
    // The longest token starting at each byte, found in one pass (ByteTrie::step): a walk from each byte cost the
    // text's length times the longest token's when a long token nearly matches over and over.
    std::vector<uint32_t> longestAt(text.size(), 0);
    for (size_t end = 1, node = 0; end <= text.size(); ++end) {
        node = size_t(trie.step(int(node), static_cast<unsigned char>(text[end - 1])));
        trie.eachEnding(int(node), [&](size_t length, int) {
            uint32_t &longest = longestAt[end - length];
            longest = std::max(longest, uint32_t(length));
        });
    }
    size_t sectionStart = 0, pos = 0;
    while (pos < text.size()) {
        const size_t length = longestAt[pos];
        if (length == 0) {
            ++pos;
            continue;
        }
        int index = -1;
        trie.eachPrefix(text.substr(pos, length), [&](size_t n, int value) { index = n == length ? value : index; });
        const AddedToken &token = added[index];
        size_t start = pos, stop = pos + length;
        pos = stop;
        if (token.singleWord
            && ((start > 0 && unicode::isWordChar(charBefore(text, start)))
                || (stop < text.size() && unicode::isWordChar(unicode::decodeUtf8(text, stop).codePoint))))
            continue;
        if (token.lstrip)
            while (start > sectionStart && unicode::isWhiteSpace(charBefore(text, start)))
                start = previousCharStart(text, start);
        if (token.rstrip)
            while (stop < text.size() && unicode::isWhiteSpace(unicode::decodeUtf8(text, stop).codePoint))
                stop += unicode::decodeUtf8(text, stop).length;
        if (start > sectionStart)
            sections.push_back({text.substr(sectionStart, start - sectionStart), -1, sectionStart});
        sections.push_back({text.substr(start, stop - start), index, start});
        sectionStart = pos = stop;
    }
    if (sectionStart < text.size())
        sections.push_back({text.substr(sectionStart), -1, sectionStart});
    return sections;
}

void HuggingFaceTokenizerParts::encodeText(std::string_view text, bool atOrigin, std::vector<int> &ids) const
{
    std::string normalizedText(text);
    const size_t limit = pipeline::rewrittenLimit(text.size());
    if (normalizer)
        normalizer->normalize(normalizedText, limit);
    bool first = true;
    for (const Section &s : splitAdded(normalizedText, normalizedAdded)) {
        if (s.added >= 0) {
            ids.push_back(added[s.added].id);
            first = false;
            continue;
        }
        if (s.text.empty())
            continue; // all normalized away
        std::vector<pipeline::Piece> pieces {{std::string(s.text), atOrigin && first && s.offset == 0}};
        first = false;
        const EncodingProgress::Part part(s.offset, s.offset + s.text.size(), normalizedText.size());
        if (preTokenizer)
            preTokenizer->preTokenize(pieces, limit);
        for (size_t i = 0; i < pieces.size(); ++i) {
            {
                const EncodingProgress::Part piece(i, i + 1, pieces.size());
                model->tokenize(pieces[i].text, ids);
            }
            EncodingProgress::reached(i + 1, pieces.size());
        }
    }
}

std::vector<int> HuggingFaceTokenizerParts::encode(const std::string &text) const
{
    if (const size_t bad = unicode::firstInvalidUtf8(text); bad != std::string::npos)
        throw Error("the text is not valid UTF-8 (byte " + std::to_string(bad) + "); " + path + " reads Unicode text");
    std::vector<int> ids;
    ids.reserve(text.size() / 3 + 4);
    try {
        for (const Section &s : splitAdded(text, rawAdded)) {
            if (s.added >= 0)
                ids.push_back(added[s.added].id);
            else if (!s.text.empty()) {
                const EncodingProgress::Part part(s.offset, s.offset + s.text.size(), text.size());
                encodeText(s.text, s.offset == 0, ids);
            }
        }
    } catch (const std::bad_alloc &) {
        throw Error(path + ": encoding a text of " + std::to_string(text.size()) + " bytes ran out of memory");
    } catch (const Error &e) { // every message of an encoding names the tokenizer's file
        if (std::string_view(e.what()).starts_with(path))
            throw;
        throw Error(path + ": " + e.what());
    }
    return ids;
}

const std::string *HuggingFaceTokenizerParts::tokenString(int id) const
{
    if (const auto it = addedById.find(id); it != addedById.end())
        return &added[it->second].content;
    return model->tokenOf(id);
}

namespace {

// The parts loaded from these files, while any tokenizer holds them; `load` when there are none (or the files
// changed: the key has their sizes and times).
std::shared_ptr<const HuggingFaceTokenizerParts> sharedParts(const std::vector<std::string> &files,
    const std::string &options, const std::function<std::unique_ptr<HuggingFaceTokenizerParts>()> &load)
{
    namespace fs = std::filesystem;
    std::string key = options + '\n';
    for (const std::string &file : files) {
        std::error_code ec;
        key += fs::weakly_canonical(file, ec).string() + '|' + fileStamp(file) + '\n';
    }
    static std::mutex mutex;
    static std::map<std::string, std::weak_ptr<const HuggingFaceTokenizerParts>> loaded;
    std::lock_guard lock(mutex);
    std::shared_ptr<const HuggingFaceTokenizerParts> parts = loaded[key].lock();
    if (!parts) {
        std::erase_if(loaded, [](const auto &entry) { return entry.second.expired(); }); // files no longer held
        parts = load();
        loaded[key] = parts;
    }
    return parts;
}

// BERT's vocab.txt as the tokenizer.json BertTokenizerFast writes for it. Its lines are counted first
// (checkVocabularySize) and go to the vocabulary as its members read aside, not into a JSON object (a vocab.txt of
// 10 million lines cost 4.8 GB that way, 80 times its size).
std::unique_ptr<HuggingFaceTokenizerParts> wordPieceParts(const std::string &vocabTxt, bool lowercase)
{
    const std::string text = readModelFile(vocabTxt, limits::kTokenizerBytes);
    const size_t lines = size_t(std::count(text.begin(), text.end(), '\n')) + (text.ends_with('\n') ? 0 : 1);
    pipeline::checkVocabularySize(lines, vocabTxt);
    pipeline::VocabEntries vocab;
    vocab.reserve(lines);
    pipeline::FlatTable<std::string_view, int> ids; // views into `text`
    ids.reserve(lines);
    int id = 0;
    for (size_t start = 0; start < text.size(); ++id) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        std::string_view token = std::string_view(text).substr(start, end - start);
        start = end + 1;
        if (!token.empty() && token.back() == '\r')
            token.remove_suffix(1);
        if (unicode::firstInvalidUtf8(token) != std::string::npos)
            throw Error(vocabTxt + ": line " + std::to_string(id + 1) + ": not valid UTF-8");
        if (!ids.find(token)) { // as BERT's load_vocab, a repeated line keeps its first id
            ids.put(token, id);
            vocab.emplace_back(std::string(token), id);
        }
    }
    const auto idOf = [&](const char *token) {
        const int *found = ids.find(token);
        if (!found)
            throw Error(vocabTxt + ": has no " + token + " token, which BERT's tokenizer needs");
        return *found;
    };
    Json added = Json::array();
    for (const char *special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
        if (ids.find(special))
            added.push_back({{"id", idOf(special)}, {"content", special}, {"single_word", false}, {"lstrip", false},
                {"rstrip", false}, {"normalized", false}, {"special", true}});
    BertTokenizerOptions options;
    options.addedTokens = added;
    options.lowercase = lowercase;
    options.cls = {"[CLS]", idOf("[CLS]")};
    options.sep = {"[SEP]", idOf("[SEP]")};
    const Json root = bertTokenizerJson(options);
    auto parts = std::make_unique<HuggingFaceTokenizerParts>();
    parts->read(root, vocabTxt, &vocab);
    parts->cleanUpSpaces = true; // BertTokenizer's default
    return parts;
}

} // namespace

HuggingFaceTokenizer::HuggingFaceTokenizer(std::shared_ptr<const HuggingFaceTokenizerParts> parts)
    : m_parts(std::move(parts))
{
}

HuggingFaceTokenizer::~HuggingFaceTokenizer() = default;

std::unique_ptr<HuggingFaceTokenizer> HuggingFaceTokenizer::fromFile(const std::string &tokenizerJson)
{
    const std::string config = (std::filesystem::path(tokenizerJson).parent_path() / "tokenizer_config.json").string();
    std::error_code ec;
    const bool hasConfig = std::filesystem::is_regular_file(config, ec);
    auto parts = sharedParts(hasConfig ? std::vector {tokenizerJson, config} : std::vector {tokenizerJson}, "", [&] {
        auto parts = std::make_unique<HuggingFaceTokenizerParts>();
        pipeline::VocabEntries vocab;
        const Json root
            = parseVocabularyAside(readModelFile(tokenizerJson, limits::kTokenizerBytes), tokenizerJson, vocab);
        parts->read(root, tokenizerJson, &vocab);
        if (hasConfig) {
            const Json json = parseJson(readModelFile(config, limits::kTokenizerBytes), config);
            if (json.is_object())
                parts->cleanUpSpaces = jsonBool(json, "clean_up_tokenization_spaces", {config, ""}, false);
        }
        return parts;
    });
    return std::unique_ptr<HuggingFaceTokenizer>(new HuggingFaceTokenizer(std::move(parts)));
}

std::unique_ptr<HuggingFaceTokenizer> HuggingFaceTokenizer::fromGpt2Files(
    const std::string &vocabJson, const std::string &mergesTxt)
{
    auto parts = sharedParts({vocabJson, mergesTxt}, "gpt2", [&] {
        auto parts = std::make_unique<HuggingFaceTokenizerParts>();
        parts->read(gpt2TokenizerJson(vocabJson, mergesTxt), vocabJson);
        return parts;
    });
    return std::unique_ptr<HuggingFaceTokenizer>(new HuggingFaceTokenizer(std::move(parts)));
}

std::unique_ptr<HuggingFaceTokenizer> HuggingFaceTokenizer::fromWordPieceVocab(
    const std::string &vocabTxt, bool lowercase)
{
    auto parts = sharedParts({vocabTxt}, lowercase ? "wordpiece lowercase" : "wordpiece",
        [&] { return wordPieceParts(vocabTxt, lowercase); });
    return std::unique_ptr<HuggingFaceTokenizer>(new HuggingFaceTokenizer(std::move(parts)));
}

namespace {

// A GGUF file's tokenizer read into the pipeline's parts (ggufvocabulary.h).
std::unique_ptr<HuggingFaceTokenizerParts> ggufParts(const GgufFile &file)
{
    auto parts = std::make_unique<HuggingFaceTokenizerParts>();
    pipeline::VocabEntries vocab;
    std::unique_ptr<pipeline::SubwordModel> model;
    const Json root = ggufTokenizerJson(file, vocab, model);
    parts->read(root, file.path(), &vocab, std::move(model));
    return parts;
}

} // namespace

std::unique_ptr<HuggingFaceTokenizer> HuggingFaceTokenizer::fromGguf(const std::string &ggufPath)
{
    auto parts = sharedParts({ggufPath}, "gguf", [&] { return ggufParts(GgufFile(ggufPath)); });
    return std::unique_ptr<HuggingFaceTokenizer>(new HuggingFaceTokenizer(std::move(parts)));
}

std::unique_ptr<HuggingFaceTokenizer> HuggingFaceTokenizer::fromGguf(const GgufFile &file)
{
    return std::unique_ptr<HuggingFaceTokenizer>(new HuggingFaceTokenizer(ggufParts(file)));
}

std::string HuggingFaceTokenizer::kind() const
{
    return m_parts->model->kind();
}

std::string HuggingFaceTokenizer::continuationPrefix() const
{
    return m_parts->model->continuationPrefix();
}

std::vector<int> HuggingFaceTokenizer::encode(const std::string &text) const
{
    return m_parts->encode(text);
}

std::vector<int> HuggingFaceTokenizer::encodeWithSpecialTokens(const std::string &text) const
{
    std::vector<int> ids = m_parts->encode(text);
    if (m_parts->postProcessor)
        m_parts->postProcessor->addSpecialTokens(ids);
    return ids;
}

std::string HuggingFaceTokenizer::tokenString(int id) const
{
    const std::string *token = m_parts->tokenString(id);
    if (!token)
        throw Error("token id " + std::to_string(id) + " is not in " + m_parts->path);
    return *token;
}

std::string HuggingFaceTokenizer::decode(const std::vector<int> &ids) const
{
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (int id : ids)
        tokens.push_back(tokenString(id));
    std::string text;
    if (m_parts->decoder) {
        size_t bytes = 0;
        for (const std::string &t : tokens)
            bytes += t.size();
        m_parts->decoder->decodeChain(tokens, pipeline::rewrittenLimit(bytes));
        for (const std::string &t : tokens)
            text += t;
    } else {
        for (size_t i = 0; i < tokens.size(); ++i)
            text.append(i ? " " : "").append(tokens[i]);
    }
    return m_parts->cleanUpSpaces ? cleanedUpSpaces(std::move(text)) : text;
}

std::string HuggingFaceTokenizer::piece(int id) const
{
    const std::string *token = m_parts->tokenString(id);
    if (!token)
        return std::string("#").append(std::to_string(id));
    if (m_parts->addedById.count(id))
        return *token;
    std::string bytes;
    if (m_parts->byteLevel) {
        if (!byteLevelBytes(*token, bytes))
            return unicode::readableText(*token);
    } else if (const int b = pipeline::byteFallbackValue(*token); b >= 0) {
        bytes = std::string(1, static_cast<char>(b));
    } else {
        static const std::string kMetaspace = "\xE2\x96\x81"; // SentencePiece's ▁ stands for a space
        for (size_t at = 0; at < token->size();) {
            const bool space = token->compare(at, kMetaspace.size(), kMetaspace) == 0;
            bytes += space ? ' ' : (*token)[at];
            at += space ? kMetaspace.size() : 1;
        }
    }
    return unicode::readableText(bytes);
}

TokenRole HuggingFaceTokenizer::role(int id) const
{
    if (id >= 0 && id == m_parts->model->unknownId()) // BERT's [UNK] is also a special added token
        return TokenRole::Unknown;
    if (isSpecial(id))
        return TokenRole::Special;
    const std::string *token = m_parts->tokenString(id);
    if (!token || m_parts->addedById.count(id))
        return TokenRole::Text;
    if (pipeline::byteFallbackValue(*token) >= 0)
        return TokenRole::Byte;
    std::string bytes; // a byte-level piece of a character: its bytes are not UTF-8 on their own
    if (m_parts->byteLevel && byteLevelBytes(*token, bytes) && unicode::firstInvalidUtf8(bytes) != std::string::npos)
        return TokenRole::Byte;
    return TokenRole::Text;
}

int HuggingFaceTokenizer::vocabSize() const
{
    return m_parts->model->vocabSize();
}

int HuggingFaceTokenizer::idOf(const std::string &tokenString) const
{
    for (const auto &token : m_parts->added)
        if (token.content == tokenString)
            return token.id;
    return m_parts->model->idOf(tokenString);
}

bool HuggingFaceTokenizer::isSpecial(int id) const
{
    const auto it = m_parts->addedById.find(id);
    return it != m_parts->addedById.end() && m_parts->added[it->second].special;
}

} // namespace atlas
