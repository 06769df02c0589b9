#include "tokenize/bpetokenizer.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "tokenize/pretokenizer.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <mutex>
#include <unordered_map>

namespace atlas {

namespace {

namespace fs = std::filesystem;

constexpr int kMaxTokenId = (1 << 24) - 1;
constexpr size_t kMaxCachedWords = size_t(1) << 18;
constexpr size_t kMaxCachedWordBytes = 256; // longer words are rare and would only fill the cache

// bytes_to_unicode(): printable bytes stand for themselves, the other 68 for U+0100, U+0101, … in byte order.
struct ByteAlphabet
{
    std::array<char32_t, 256> toUnicode {};
    std::array<int, 324> toByte {}; // code point -> byte, -1 when not one of the 256 symbols

    ByteAlphabet()
    {
        toByte.fill(-1);
        char32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            toUnicode[b] = printable ? char32_t(b) : next++;
            toByte[toUnicode[b]] = b;
        }
    }
};

const ByteAlphabet &alphabet()
{
    static const ByteAlphabet a;
    return a;
}

// A vocab.json key or merges.txt symbol spelled in the byte alphabet -> its bytes; false when some character is
// not one of the 256 symbols (`bad` says which) or the text is not UTF-8 (`bad` is kInvalidCodePoint).
bool unicodeToBytes(std::string_view text, std::string &bytes, uint32_t &bad)
{
    bytes.clear();
    for (size_t pos = 0; pos < text.size();) {
        const DecodedChar c = decodeUtf8(text, pos);
        const int byte = c.codePoint < alphabet().toByte.size() ? alphabet().toByte[c.codePoint] : -1;
        if (byte < 0) {
            bad = c.codePoint;
            return false;
        }
        bytes += static_cast<char>(byte);
        pos += c.length;
    }
    return true;
}

std::string hexCodePoint(uint32_t cp)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", cp);
    return buf;
}

struct StringHash
{
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view> {}(s); }
};

void appendByteEscape(std::string &out, unsigned char byte)
{
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", byte);
    out += buf;
}

// A token's bytes as text a person can read on a chip (see BpeTokenizer::piece).
std::string readableBytes(std::string_view bytes)
{
    std::string out;
    for (size_t pos = 0; pos < bytes.size();) {
        const DecodedChar c = decodeUtf8(bytes, pos);
        const std::string_view raw = bytes.substr(pos, c.length);
        pos += c.length;
        const unicode::CharClass cls = charClass(c.codePoint);
        if (c.codePoint == ' ')
            out += "␣";
        else if (c.codePoint == '\n')
            out += "↵";
        else if (c.codePoint == '\t')
            out += "⇥";
        else if (c.codePoint == kInvalidCodePoint || c.codePoint < 0x20 || (c.codePoint >= 0x7F && c.codePoint < 0xA0))
            for (char b : raw)
                appendByteEscape(out, static_cast<unsigned char>(b));
        else if (cls == unicode::CharClass::Space || cls == unicode::CharClass::Format)
            out.append("<").append(hexCodePoint(c.codePoint)).append(">");
        else {
            if (cls == unicode::CharClass::Mark && out.empty())
                out += "◌"; // carries a combining mark that has nothing to combine with
            out += raw;
        }
    }
    return out;
}

} // namespace

// The parsed vocab.json and merges.txt. Symbols are the token strings BPE works with: a vocabulary id when the
// bytes are a token, or an extra number (>= firstExtra) for a merge part or result that vocab.json lacks.
struct BpeVocabulary
{
    struct Merge
    {
        int rank;
        int result;
    };

    std::string vocabPath, mergesPath;
    std::vector<std::string> idBytes; // id -> bytes
    std::vector<bool> idPresent;
    int tokenCount = 0;
    std::unordered_map<std::string, int, StringHash, std::equal_to<>> symbolOf; // bytes -> symbol
    std::array<int, 256> byteSymbol {};
    int firstExtra = 0;
    std::vector<std::pair<int, int>> extraParts; // extra symbol - firstExtra -> the merge that made it
    std::unordered_map<uint64_t, Merge> merges; // (left << 32 | right) -> rank and result

    mutable std::mutex cacheMutex;
    mutable std::unordered_map<std::string, std::vector<int>, StringHash, std::equal_to<>> cache;

    void readVocab(const std::string &path);
    void readMerges(const std::string &path);
    int intern(const std::string &bytes);
    void addMerge(int left, int right, int rank, const std::string &bytes);
    const Merge *findMerge(int left, int right) const
    {
        auto it = merges.find(uint64_t(uint32_t(left)) << 32 | uint32_t(right));
        return it == merges.end() ? nullptr : &it->second;
    }
    void appendIds(int symbol, std::vector<int> &ids) const;
    std::vector<int> bpe(std::string_view word) const;
};

void BpeVocabulary::readVocab(const std::string &path)
{
    vocabPath = path;
    const nlohmann::json json = parseJson(readFile(path, limits::kTokenizerBytes), path);
    if (!json.is_object() || json.empty())
        throw Error(path + ": expected a JSON object mapping each token to its id");
    std::string bytes;
    for (const auto &[key, value] : json.items()) {
        if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > kMaxTokenId)
            throw Error(path + ": token '" + key + "' has id " + shownJson(value) + "; ids are integers 0.."
                + std::to_string(kMaxTokenId));
        const int id = value.get<int>();
        if (size_t(id) >= idBytes.size()) {
            idBytes.resize(id + 1);
            idPresent.resize(id + 1);
        }
        if (idPresent[id])
            throw Error(path + ": id " + std::to_string(id) + " is given to two tokens (one is '" + key + "')");
        uint32_t bad = 0;
        // A key outside the byte alphabet (a special token such as "<s> x") stands for its own UTF-8 text and
        // is never produced by BPE.
        const bool plain = unicodeToBytes(key, bytes, bad);
        idBytes[id] = plain ? bytes : key;
        idPresent[id] = true;
        if (plain)
            symbolOf.emplace(bytes, id);
        ++tokenCount;
    }
    for (int b = 0; b < 256; ++b) {
        auto it = symbolOf.find(std::string(1, static_cast<char>(b)));
        if (it == symbolOf.end()) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "0x%02X", b);
            throw Error(path + ": byte " + buf + " (symbol " + hexCodePoint(alphabet().toUnicode[b])
                + ") has no token; a byte-level BPE vocabulary has a token for each of the 256 bytes");
        }
        byteSymbol[b] = it->second;
    }
    firstExtra = static_cast<int>(idBytes.size());
}

int BpeVocabulary::intern(const std::string &bytes)
{
    auto [it, added] = symbolOf.emplace(bytes, firstExtra + static_cast<int>(extraParts.size()));
    if (added)
        extraParts.push_back({-1, -1});
    return it->second;
}

void BpeVocabulary::addMerge(int left, int right, int rank, const std::string &bytes)
{
    const int result = intern(bytes);
    if (result >= firstExtra && extraParts[result - firstExtra].first < 0)
        extraParts[result - firstExtra] = {left, right};
    // As in GPT-2's dict(zip(merges, range(...))): a pair listed twice keeps its later rank.
    merges[uint64_t(uint32_t(left)) << 32 | uint32_t(right)] = Merge {rank, result};
}

void BpeVocabulary::readMerges(const std::string &path)
{
    mergesPath = path;
    const std::string text = readFile(path, limits::kTokenizerBytes);
    std::string leftBytes, rightBytes;
    int lineNo = 0, rank = 0;
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
        auto where = [&] { return path + ": line " + std::to_string(lineNo) + ": "; };
        const size_t space = line.find(' ');
        const std::string_view left = line.substr(0, space);
        const std::string_view right = space == line.npos ? std::string_view() : line.substr(space + 1);
        if (left.empty() || right.empty() || right.find(' ') != right.npos)
            throw Error(
                where() + "expected two symbols separated by one space, got '" + std::string(line.substr(0, 60)) + "'");
        uint32_t bad = 0;
        if (!unicodeToBytes(left, leftBytes, bad) || !unicodeToBytes(right, rightBytes, bad))
            throw Error(where()
                + (bad == kInvalidCodePoint ? std::string("not valid UTF-8")
                                            : hexCodePoint(bad) + " is not one of GPT-2's 256 byte symbols"));
        addMerge(intern(leftBytes), intern(rightBytes), rank++, leftBytes + rightBytes);
    }
}

void BpeVocabulary::appendIds(int symbol, std::vector<int> &ids) const
{
    if (symbol < firstExtra) {
        ids.push_back(symbol);
        return;
    }
    // A merge whose result is not in vocab.json: fall back to the tokens it was made of.
    const auto [left, right] = extraParts[symbol - firstExtra];
    appendIds(left, ids);
    appendIds(right, ids);
}

// GPT-2's bpe(): repeatedly merge every occurrence (left to right) of the adjacent pair with the lowest rank.
// A heap keyed by (rank, position) over a linked list keeps long words O(n log n).
std::vector<int> BpeVocabulary::bpe(std::string_view word) const
{
    struct Node
    {
        int symbol, prev, next; // symbol -1: merged into its left neighbour
    };
    struct Candidate
    {
        int rank, pos, left, right;
        bool operator>(const Candidate &o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    const int n = static_cast<int>(word.size());
    std::vector<Node> nodes(n);
    for (int i = 0; i < n; ++i)
        nodes[i] = {byteSymbol[static_cast<unsigned char>(word[i])], i - 1, i + 1 < n ? i + 1 : -1};
    std::vector<Candidate> heap;
    auto consider = [&](int pos) {
        if (pos < 0 || nodes[pos].next < 0)
            return;
        const Node &a = nodes[pos], &b = nodes[a.next];
        if (const Merge *m = findMerge(a.symbol, b.symbol)) {
            heap.push_back({m->rank, pos, a.symbol, b.symbol});
            std::push_heap(heap.begin(), heap.end(), std::greater<>());
        }
    };
    for (int i = 0; i + 1 < n; ++i)
        consider(i);
    std::vector<int> merged;
    while (!heap.empty()) {
        // All occurrences of the best pair first, then the pairs those merges made (GPT-2's order).
        const int rank = heap.front().rank;
        merged.clear();
        while (!heap.empty() && heap.front().rank == rank) {
            std::pop_heap(heap.begin(), heap.end(), std::greater<>());
            const Candidate c = heap.back();
            heap.pop_back();
            Node &a = nodes[c.pos];
            if (a.symbol != c.left || a.next < 0 || nodes[a.next].symbol != c.right)
                continue; // stale: a neighbour changed since this pair was queued
            Node &b = nodes[a.next];
            a.symbol = findMerge(c.left, c.right)->result;
            b.symbol = -1;
            a.next = b.next;
            if (a.next >= 0)
                nodes[a.next].prev = c.pos;
            merged.push_back(c.pos);
        }
        for (int pos : merged) {
            consider(nodes[pos].prev);
            consider(pos);
        }
    }
    std::vector<int> ids;
    for (int i = 0; i >= 0; i = nodes[i].next)
        appendIds(nodes[i].symbol, ids);
    return ids;
}

BpeTokenizer::BpeTokenizer(std::shared_ptr<BpeVocabulary> vocabulary)
    : m_vocab(std::move(vocabulary))
{
}

BpeTokenizer::BpeTokenizer(const std::string &vocabPath, const std::string &mergesPath)
    : m_vocab(std::make_shared<BpeVocabulary>())
{
    m_vocab->readVocab(vocabPath);
    m_vocab->readMerges(mergesPath);
}

bool BpeTokenizer::directoryHasFiles(const std::string &directory)
{
    std::error_code ec;
    return !directory.empty() && fs::is_regular_file(fs::path(directory) / "vocab.json", ec)
        && fs::is_regular_file(fs::path(directory) / "merges.txt", ec);
}

std::unique_ptr<BpeTokenizer> BpeTokenizer::fromDirectory(const std::string &directory)
{
    const std::string vocab = (fs::path(directory) / "vocab.json").string();
    const std::string merges = (fs::path(directory) / "merges.txt").string();
    // The same files (path, size and time) are parsed once while any tokenizer holds them.
    std::string key;
    for (const std::string &file : {vocab, merges}) {
        std::error_code ec;
        key += fs::weakly_canonical(file, ec).string() + '|' + std::to_string(fs::file_size(file, ec)) + '|'
            + std::to_string(fs::last_write_time(file, ec).time_since_epoch().count()) + '\n';
    }
    static std::mutex mutex;
    static std::map<std::string, std::weak_ptr<BpeVocabulary>> loaded;
    std::lock_guard lock(mutex);
    std::shared_ptr<BpeVocabulary> shared = loaded[key].lock();
    if (!shared) {
        shared = BpeTokenizer(vocab, merges).m_vocab;
        loaded[key] = shared;
    }
    return std::unique_ptr<BpeTokenizer>(new BpeTokenizer(shared));
}

void BpeTokenizer::encodeWord(std::string_view word, std::vector<int> &ids) const
{
    if (word.size() == 1) {
        ids.push_back(m_vocab->byteSymbol[static_cast<unsigned char>(word[0])]);
        return;
    }
    if (word.size() <= kMaxCachedWordBytes) {
        std::lock_guard lock(m_vocab->cacheMutex);
        auto it = m_vocab->cache.find(word);
        if (it != m_vocab->cache.end()) {
            ids.insert(ids.end(), it->second.begin(), it->second.end());
            return;
        }
    }
    std::vector<int> wordIds = m_vocab->bpe(word);
    ids.insert(ids.end(), wordIds.begin(), wordIds.end());
    if (word.size() > kMaxCachedWordBytes)
        return;
    std::lock_guard lock(m_vocab->cacheMutex);
    if (m_vocab->cache.size() >= kMaxCachedWords)
        m_vocab->cache.clear();
    m_vocab->cache.emplace(std::string(word), std::move(wordIds));
}

std::vector<int> BpeTokenizer::encode(const std::string &text) const
{
    std::vector<int> ids;
    ids.reserve(text.size() / 3);
    const std::string_view view(text);
    for (size_t pos = 0; pos < view.size();) {
        const size_t n = gpt2WordLength(view, pos);
        encodeWord(view.substr(pos, n), ids);
        pos += n;
    }
    return ids;
}

std::string BpeTokenizer::tokenBytes(int id) const
{
    if (id < 0 || size_t(id) >= m_vocab->idBytes.size() || !m_vocab->idPresent[id])
        throw Error("token id " + std::to_string(id) + " is not in " + m_vocab->vocabPath);
    return m_vocab->idBytes[id];
}

std::string BpeTokenizer::decode(const std::vector<int> &ids) const
{
    std::string text;
    for (int id : ids)
        text += tokenBytes(id);
    return text;
}

std::string BpeTokenizer::piece(int id) const
{
    if (id < 0 || size_t(id) >= m_vocab->idBytes.size() || !m_vocab->idPresent[id])
        return std::string("#").append(std::to_string(id));
    return readableBytes(m_vocab->idBytes[id]);
}

int BpeTokenizer::vocabSize() const
{
    return m_vocab->tokenCount;
}

int BpeTokenizer::idOf(const std::string &tokenBytes) const
{
    auto it = m_vocab->symbolOf.find(tokenBytes);
    return it == m_vocab->symbolOf.end() || it->second >= m_vocab->firstExtra ? -1 : it->second;
}

size_t BpeTokenizer::cachedWords() const
{
    std::lock_guard lock(m_vocab->cacheMutex);
    return m_vocab->cache.size();
}

void BpeTokenizer::clearCache() const
{
    std::lock_guard lock(m_vocab->cacheMutex);
    m_vocab->cache.clear();
}

char32_t gpt2ByteToUnicode(unsigned char byte)
{
    return alphabet().toUnicode[byte];
}

} // namespace atlas
