#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).
//
// The tables the subword models (subwordmodels.cpp) keep their vocabularies, merges and word caches in.

#include "io/jsonread.h"
#include "tokenize/pipeline.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace atlas::pipeline {

constexpr int64_t kMaxTokenId = (1 << 24) - 1;
// The most tokens a vocabulary may hold: eight times the largest published ones (Gemma's 262,144). A token costs
// about 150 bytes while it is read (its string, its table slots and its id), so this bounds a vocabulary at about
// 300 MiB however small its lines are (a vocab.txt of 10 million one-letter lines is refused at once).
constexpr size_t kMaxVocabularyTokens = size_t(1) << 21;
// Throws atlas::Error when `count` tokens are more than kMaxVocabularyTokens.
inline void checkVocabularySize(size_t count, const std::string &where)
{
    if (count > kMaxVocabularyTokens)
        throw Error(where + ": " + std::to_string(count) + " tokens, more than the "
            + std::to_string(kMaxVocabularyTokens)
            + " a vocabulary may hold here (the largest published ones hold about 262,000)");
}
constexpr size_t kMaxCachedWords = size_t(1) << 18;
constexpr size_t kMaxCachedWordBytes = 256; // longer words are rare and would only fill the cache

struct StringHash
{
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view> {}(s); }
};

using TokenIds = std::unordered_map<std::string, int, StringHash, std::equal_to<>>;

// A hash table with open addressing: one allocation for the whole table where a node-based map makes one per entry,
// which is most of the time a 128,000-token vocabulary with 280,000 merges takes to load.
template <typename Key, typename Value, typename Hash = std::hash<Key>> class FlatTable
{
public:
    void reserve(size_t entries)
    {
        size_t capacity = 16;
        while (capacity < 2 * entries)
            capacity <<= 1;
        if (capacity > m_slots.size())
            rehash(capacity);
    }
    // Inserts `key`, or replaces its value.
    void put(const Key &key, const Value &value)
    {
        if (2 * (m_size + 1) > m_slots.size())
            rehash(std::max<size_t>(16, 2 * m_slots.size()));
        Slot &slot = m_slots[probe(key)];
        if (!slot.used)
            ++m_size;
        slot = {key, value, true};
    }
    const Value *find(const Key &key) const
    {
        if (m_slots.empty())
            return nullptr;
        const Slot &slot = m_slots[probe(key)];
        return slot.used ? &slot.value : nullptr;
    }
    size_t size() const { return m_size; }

private:
    struct Slot
    {
        Key key {};
        Value value {};
        bool used = false;
    };
    // The slot holding `key`, or the empty slot where it would go.
    size_t probe(const Key &key) const
    {
        const size_t mask = m_slots.size() - 1;
        for (size_t i = Hash {}(key)&mask;; i = (i + 1) & mask)
            if (!m_slots[i].used || m_slots[i].key == key)
                return i;
    }
    void rehash(size_t capacity)
    {
        std::vector<Slot> old = std::move(m_slots);
        m_slots.assign(capacity, Slot {});
        for (const Slot &slot : old)
            if (slot.used)
                m_slots[probe(slot.key)] = slot;
    }

    std::vector<Slot> m_slots;
    size_t m_size = 0;
};

// Spreads the two ids of a merge over the table (the identity hash of a 64-bit integer would cluster them).
struct PairHash
{
    size_t operator()(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15ull) >> 17); }
};

// id <-> token string for models whose vocabulary is a {"token": id} object (BPE, WordPiece). The table's keys view
// the strings in `tokens`, which is sized once and never moves them.
struct Vocabulary
{
    std::vector<std::string> tokens;
    std::vector<bool> present;
    FlatTable<std::string_view, int> ids;
    int count = 0;
    size_t longest = 0; // bytes of the longest token: no longer piece of a text can be one

    Vocabulary() = default;
    Vocabulary(const Vocabulary &) = delete;
    Vocabulary &operator=(const Vocabulary &) = delete;

    // The model's "vocab" object, or its members read aside (`aside`, then what json still holds).
    void read(const Json &json, VocabEntries *aside, const JsonPlace &where)
    {
        if (!json.is_object() && !(aside && json.is_null()))
            throw Error(where() + ": expected an object mapping each token to its id");
        VocabEntries entries = aside ? std::move(*aside) : VocabEntries();
        checkVocabularySize(entries.size() + (json.is_object() ? json.size() : 0), where());
        if (json.is_object())
            for (const auto &[token, value] : json.items())
                entries.emplace_back(token, value);
        if (entries.empty()) // BPE drops what it cannot spell; with no token, the whole text would vanish
            throw Error(where() + ": empty: a tokenizer without tokens cannot encode any text");
        int64_t largest = -1;
        for (const auto &[token, value] : entries) {
            if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > kMaxTokenId)
                throw Error(where() + ": token \"" + token.substr(0, 60) + "\" has id " + shownJson(value)
                    + "; ids are integers 0.." + std::to_string(kMaxTokenId));
            largest = std::max(largest, value.get<int64_t>());
        }
        // Ids index a table, so a few tokens with huge ids would cost a huge table: allow ids up to four times the
        // tokens' count or a million, whichever is larger (Hugging Face's files number their tokens densely).
        const int64_t slots = largest + 1, allowed = std::max<int64_t>(4 * int64_t(entries.size()), 1 << 20);
        if (slots > allowed)
            throw Error(where() + ": ids up to " + std::to_string(largest) + " for " + std::to_string(entries.size())
                + " tokens would need a table of " + std::to_string(slots * int64_t(sizeof(std::string)) >> 20)
                + " MiB; ids this sparse are refused (at most " + std::to_string(allowed) + " slots)");
        tokens.resize(size_t(slots));
        present.resize(size_t(slots));
        ids.reserve(entries.size());
        for (auto &[token, value] : entries) {
            const int id = value.get<int>();
            if (present[id])
                throw Error(where() + ": id " + std::to_string(id) + " is given to two tokens (\""
                    + tokens[id].substr(0, 40) + "\" and \"" + token.substr(0, 40) + "\")");
            if (const int *earlier = ids.find(token)) { // a key listed twice: the later wins, as in a JSON object
                present[*earlier] = false;
                --count;
            }
            longest = std::max(longest, token.size());
            tokens[id] = std::move(token);
            present[id] = true;
            ids.put(tokens[id], id);
            ++count;
        }
    }
    int idOf(std::string_view token) const
    {
        const int *id = ids.find(token);
        return id ? *id : -1;
    }
    const std::string *tokenOf(int id) const
    {
        return id >= 0 && size_t(id) < tokens.size() && present[id] ? &tokens[id] : nullptr;
    }
};

inline int optionalTokenId(const Json &json, const char *name, const Vocabulary &vocab, const JsonPlace &where)
{
    const auto it = json.find(name);
    if (it == json.end() || it->is_null())
        return -1;
    const std::string token = jsonString(json, name, where);
    const int id = vocab.idOf(token);
    if (id < 0)
        throw Error(where.at(name)() + ": \"" + token.substr(0, 60) + "\" is not in the vocabulary");
    return id;
}

inline std::string byteFallbackToken(unsigned char byte)
{
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", byte);
    return buf;
}

// A cache of whole words, shared by the threads that encode with one model.
class WordCache
{
public:
    bool find(std::string_view word, std::vector<int> &ids) const
    {
        if (word.size() > kMaxCachedWordBytes)
            return false;
        std::lock_guard lock(m_mutex);
        const auto it = m_words.find(word);
        if (it == m_words.end())
            return false;
        ids.insert(ids.end(), it->second.begin(), it->second.end());
        return true;
    }
    void store(std::string_view word, std::vector<int> ids) const
    {
        if (word.size() > kMaxCachedWordBytes)
            return;
        std::lock_guard lock(m_mutex);
        if (m_words.size() >= kMaxCachedWords)
            m_words.clear();
        m_words.emplace(std::string(word), std::move(ids));
    }

private:
    mutable std::mutex m_mutex;
    mutable std::unordered_map<std::string, std::vector<int>, StringHash, std::equal_to<>> m_words;
};

// A unigram model's best segmentation of a text (Viterbi over its pieces' log-probabilities), the lattice of the
// Hugging Face crate's Unigram and of llama.cpp's 't5' tokenizer alike: each character that no piece of its own
// length covers is also an unknown edge scored `unknownScore`, and runs of unknown characters come out as one span.
class UnigramLattice
{
public:
    struct Span
    {
        size_t begin, end;
        int id; // the piece's, or the unknown id
    };

    void add(std::string_view piece, int id, double score);
    // After the last add.
    void link(int unknownId, double unknownScore);
    // `text` is UTF-8; edges begin and end at its characters' boundaries.
    std::vector<Span> bestPath(std::string_view text) const;

private:
    ByteTrie m_trie;
    std::vector<double> m_scores; // by id
    int m_unknown = -1;
    double m_unknownScore = 0;
};

} // namespace atlas::pipeline
