#include "train/task.h"

#include "model/builtinmodels.h"
#include "tokenize/sentencepiecetokenizer.h"
#include "train/corpus.h"
#include "train/objectives.h"
#include "util/error.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace atlas {

namespace {

ModelConfig smallConfig(int layers, int heads, int dModel, int context, const std::string &description)
{
    ModelConfig c;
    c.layers = layers;
    c.heads = heads;
    c.dModel = dModel;
    c.dFF = 4 * dModel;
    c.vocab = 256;
    c.context = context;
    c.tokenizer = "bytes";
    c.description = description;
    return c;
}

std::string randomLetters(std::mt19937_64 &rng, int count, char first, int alphabet)
{
    std::string s;
    for (int i = 0; i < count; ++i)
        s += static_cast<char>(first + static_cast<int>(rng() % static_cast<uint64_t>(alphabet)));
    return s;
}

// "question" + separator + "answer": targets only on the answer (and on the end after it).
Example questionAnswer(const std::string &question, char separator, const std::string &answer)
{
    Example e;
    const std::string text = question + separator + answer;
    for (unsigned char c : text)
        e.tokens.push_back(c);
    e.targets.assign(e.tokens.size(), -1);
    const size_t firstAnswer = question.size() + 1;
    for (size_t t = firstAnswer - 1; t + 1 < e.tokens.size(); ++t)
        e.targets[t] = e.tokens[t + 1];
    return e;
}

// questionAnswer's targets read back from a text: from the first separator on, each next token.
std::vector<int> targetsAfter(const std::vector<int> &tokens, char separator)
{
    std::vector<int> targets(tokens.size(), -1);
    const auto first = std::find(tokens.begin(), tokens.end(), int(static_cast<unsigned char>(separator)));
    for (size_t t = size_t(first - tokens.begin()); t + 1 < tokens.size(); ++t)
        targets[t] = tokens[t + 1];
    return targets;
}

template <typename MakeQuestion, typename Answer>
Example drawQuestion(std::mt19937_64 &rng, bool heldOut, MakeQuestion make, char separator, Answer answer)
{
    for (;;) {
        const std::string q = make(rng);
        if (isHeldOutQuestion(q) == heldOut)
            return questionAnswer(q, separator, answer(q));
    }
}

class ReverseTask : public Task
{
public:
    std::string name() const override { return "reverse"; }
    Example sampleLonger(std::mt19937_64 &rng, int scale) const override
    {
        return drawQuestion(
            rng, true, [scale](auto &r) { return randomLetters(r, (4 + int(r() % 5)) * scale, 'a', 26); }, '>',
            [](const std::string &q) { return std::string(q.rbegin(), q.rend()); });
    }
    std::string summary() const override { return "reverse 4–8 letters: \"abcd>dcba\""; }
    ModelConfig modelConfig() const override { return smallConfig(2, 4, 64, 32, ""); }
    std::vector<int> targetsOf(const std::vector<int> &tokens) const override { return targetsAfter(tokens, '>'); }
    Example sample(std::mt19937_64 &rng, bool heldOut) const override
    {
        return drawQuestion(
            rng, heldOut, [](auto &r) { return randomLetters(r, 4 + int(r() % 5), 'a', 26); }, '>',
            [](const std::string &q) { return std::string(q.rbegin(), q.rend()); });
    }
};

// Sorting as translation (an encoder–decoder): the encoder reads the letters, the decoder writes them in order and
// then '.'. Its cross-attention has a visible job: at each step, find the source letter to write next.
class Seq2seqSortTask : public Task
{
public:
    std::string name() const override { return "seq2seq-sort"; }
    std::string summary() const override { return "encoder-decoder: sort 4–8 letters, source \"dbca\" → \">abcd.\""; }
    ModelConfig modelConfig() const override
    {
        ModelConfig c = smallConfig(2, 4, 64, 16, "");
        c.encoderLayers = 2;
        return c;
    }
    Example sample(std::mt19937_64 &rng, bool heldOut) const override
    {
        std::string letters;
        do
            letters = randomLetters(rng, 4 + int(rng() % 5), 'a', 26);
        while (isHeldOutQuestion(letters) != heldOut);
        std::string sorted = letters;
        std::sort(sorted.begin(), sorted.end());
        Example e;
        e.source.assign(letters.begin(), letters.end());
        const std::string written = ">" + sorted, expected = sorted + ".";
        e.tokens.assign(written.begin(), written.end());
        e.targets.assign(expected.begin(), expected.end());
        return e;
    }
};

class SortTask : public Task
{
public:
    std::string name() const override { return "sort"; }
    std::string summary() const override { return "sort 4–8 letters: \"dbca>abcd\""; }
    ModelConfig modelConfig() const override { return smallConfig(2, 4, 64, 32, ""); }
    std::vector<int> targetsOf(const std::vector<int> &tokens) const override { return targetsAfter(tokens, '>'); }
    Example sample(std::mt19937_64 &rng, bool heldOut) const override
    {
        return drawQuestion(
            rng, heldOut, [](auto &r) { return randomLetters(r, 4 + int(r() % 5), 'a', 26); }, '>',
            [](std::string q) {
                std::sort(q.begin(), q.end());
                return q;
            });
    }
};

// A random sequence shown twice: the second copy can only be predicted by finding the previous occurrence
// of the current token and copying what followed it, which is what induction heads do.
class CopyTask : public Task
{
public:
    std::string name() const override { return "copy"; }
    std::string summary() const override { return "repeat 8–16 random letters: \"qzkxw|qzkxw\" (induction heads)"; }
    ModelConfig modelConfig() const override { return smallConfig(2, 4, 64, 40, ""); }
    std::vector<int> targetsOf(const std::vector<int> &tokens) const override { return targetsAfter(tokens, '|'); }
    Example sample(std::mt19937_64 &rng, bool heldOut) const override
    {
        return drawQuestion(
            rng, heldOut, [](auto &r) { return randomLetters(r, 8 + int(r() % 9), 'a', 26); }, '|',
            [](const std::string &q) { return q; });
    }
};

// Is a string of 2–24 brackets balanced? The answer is one token after '=': 'y' or 'n'.
class ParenthesesTask : public Task
{
public:
    std::string name() const override { return "parens"; }
    std::string summary() const override { return "are the brackets balanced: \"(()())=y\", \"())(=n\""; }
    ModelConfig modelConfig() const override { return smallConfig(2, 4, 64, 32, ""); }
    std::vector<int> targetsOf(const std::vector<int> &tokens) const override { return targetsAfter(tokens, '='); }
    Example sample(std::mt19937_64 &rng, bool heldOut) const override
    {
        return drawQuestion(
            rng, heldOut, makeQuestion, '=', [](const std::string &q) { return balanced(q) ? "y" : "n"; });
    }

    static bool balanced(const std::string &s)
    {
        int depth = 0;
        for (char c : s)
            if ((depth += c == '(' ? 1 : -1) < 0)
                return false;
        return depth == 0;
    }

private:
    // Half the questions are balanced (random Dyck words); a quarter have one bracket flipped (the counts
    // differ); a quarter have the '(' that opens a top-level group swapped with the first ')' after it, so the
    // counts agree but the prefix up to that ')' closes more than it opened. The group is drawn among all the
    // word's top-level groups, so the dip can come anywhere, not only at the start. Guessing gets 50 %, counting
    // alone 75 %.
    static std::string makeQuestion(std::mt19937_64 &rng)
    {
        const int pairs = 1 + int(rng() % 12);
        std::string s;
        int open = 0, closed = 0;
        while (closed < pairs) {
            const bool canOpen = open < pairs, canClose = closed < open;
            const bool doOpen = canOpen && (!canClose || rng() % 2);
            s += doOpen ? '(' : ')';
            doOpen ? ++open : ++closed;
        }
        switch (rng() % 4) {
        case 0: { // flip one bracket
            const size_t i = rng() % s.size();
            s[i] = s[i] == '(' ? ')' : '(';
            break;
        }
        case 1: { // swap the '(' opening a top-level group with the first ')' after it: a negative prefix
            std::vector<size_t> groupStarts;
            int depth = 0;
            for (size_t i = 0; i < s.size(); depth += s[i] == '(' ? 1 : -1, ++i)
                if (depth == 0)
                    groupStarts.push_back(i);
            const size_t start = groupStarts[rng() % groupStarts.size()];
            std::swap(s[start], s[s.find(')', start)]);
            break;
        }
        default:
            break;
        }
        return s;
    }
};

// Key–value retrieval (Liu et al. 2023): the pairs, then a key; the answer is its value. A training context holds
// 2 to kRetrievalPairs pairs, every count equally often (a curriculum within each batch: the lookup is learned on
// short contexts first), and is asked kRetrievalTrainingQuestions questions in a row (multi-query associative recall:
// each question two more targets). "retrieval" asks every pair of a context equally often; "retrieval-ends" asks its
// first two and last two pairs half of the time, as text tends to put what matters at its start and end. A held-out
// context always holds kRetrievalPairs pairs and is asked one question, at a given position.
class RetrievalTask : public Task
{
public:
    explicit RetrievalTask(bool ends)
        : m_ends(ends)
    {
    }
    std::string name() const override { return m_ends ? "retrieval-ends" : "retrieval"; }
    std::string summary() const override
    {
        return m_ends
            ? "retrieval, trained asking the first two and last two pairs half of the time"
            : "ten pairs of a key and a value, then a key: its value (\"k48 … a09 ?a09\": lost in the middle)";
    }
    ModelConfig modelConfig() const override
    {
        ModelConfig c = smallConfig(2, 4, 128, 64, "");
        c.positions = PositionKind::Rope;
        return c;
    }
    Example sample(std::mt19937_64 &rng, bool heldOut) const override
    {
        if (heldOut)
            return retrievalExample(rng, true, int(rng() % kRetrievalPairs));
        const int pairs = kRetrievalMinTrainingPairs + int(rng() % (kRetrievalPairs - kRetrievalMinTrainingPairs + 1));
        Example e = retrievalExample(rng, false, trainingPosition(rng, pairs), pairs);
        for (int q = 1; q < kRetrievalTrainingQuestions; ++q)
            askAgain(e, trainingPosition(rng, pairs));
        return e;
    }

    // After each " ?" and its key, the key's last character and the value's first digits predict the value.
    std::vector<int> targetsOf(const std::vector<int> &tokens) const override
    {
        std::vector<int> targets(tokens.size(), -1);
        for (size_t q = 0; q < tokens.size(); ++q) {
            if (tokens[q] != '?')
                continue;
            const size_t answer = q + kRetrievalKeyLength;
            for (size_t t = answer; t < answer + kRetrievalValueLength && t + 1 < tokens.size(); ++t)
                targets[t] = tokens[t + 1];
        }
        return targets;
    }

private:
    int trainingPosition(std::mt19937_64 &rng, int pairs) const
    {
        if (m_ends && pairs > 4 && rng() % 2 == 0) {
            const int end = int(rng() % 4);
            return end < 2 ? end : pairs - 4 + end;
        }
        return int(rng() % uint64_t(pairs));
    }

    // Appends " ?key" for the pair at `position` of e's context, its value after it as the targets.
    static void askAgain(Example &e, int position)
    {
        const auto pair = e.tokens.begin() + ptrdiff_t(position) * kRetrievalPairWidth;
        const std::vector<int> key(pair, pair + kRetrievalKeyLength),
            value(pair + kRetrievalKeyLength, pair + kRetrievalKeyLength + kRetrievalValueLength);
        for (int c : {int(' '), int('?')})
            e.tokens.push_back(c);
        e.tokens.insert(e.tokens.end(), key.begin(), key.end());
        const size_t answer = e.tokens.size() - 1; // the key's last character predicts the value's first digit
        e.tokens.insert(e.tokens.end(), value.begin(), value.end());
        e.targets.resize(e.tokens.size(), -1);
        for (size_t t = answer; t + 1 < e.tokens.size(); ++t)
            e.targets[t] = e.tokens[t + 1];
    }

    bool m_ends;
};

// Next-character prediction on the shipped public-domain corpus (train/corpus.h).
class CharactersTask : public Task
{
public:
    explicit CharactersTask(int length)
        : m_length(length > 0 ? size_t(length) : kLength)
    {
    }
    static constexpr size_t kLength = 128;
    std::string name() const override { return "chars"; }
    std::string summary() const override { return "predict the next character of Pride and Prejudice"; }
    ModelConfig modelConfig() const override { return smallConfig(4, 4, 128, int(m_length), ""); }
    bool takesContext() const override { return true; }
    Example sample(std::mt19937_64 &rng, bool heldOut) const override
    {
        const std::string &text = heldOut ? corpusHeldOut() : corpusTraining();
        const size_t start = rng() % (text.size() - m_length - 1);
        Example e;
        for (size_t i = 0; i < m_length; ++i) {
            e.tokens.push_back(static_cast<unsigned char>(text[start + i]));
            e.targets.push_back(static_cast<unsigned char>(text[start + i + 1]));
        }
        return e;
    }

private:
    size_t m_length;
};

// Next-word prediction on the same corpus, read by a SentencePiece tokenizer trained on its training part
// (resources/tokenizers/austen-words, made by `train-tokenizer`): 128 tokens of about a word each, so that what a
// head attends to is a word, as in a real language model. In one training window in two a run of 8 to 32 words drawn
// at random from the novel stands at two places: a head can learn to complete what it has seen before (induction;
// Olsson et al. 2022) only where the repeated words are not already known, and a model this size learns the novel
// itself by heart, so repeated passages of it teach nothing. Held-out windows are plain text.
class WordsTask : public Task
{
public:
    explicit WordsTask(int length)
        : m_length(length > 0 ? size_t(length) : kLength)
    {
    }
    static constexpr const char *kTokenizer = "austen-words";
    static constexpr size_t kLength = 128;
    std::string name() const override { return "words"; }
    std::string summary() const override
    {
        return "predict the next word (SentencePiece token) of Pride and Prejudice";
    }
    std::string tokenizerFile() const override { return resolveTokenizer(kTokenizer) + "/tokenizer.model"; }
    ModelConfig modelConfig() const override
    {
        ModelConfig c = smallConfig(4, 4, 128, int(m_length), "");
        c.vocab = tokenizer().vocabSize();
        c.tokenizer = "gpt2"; // the model directory's own tokenizer: the task's tokenizer.model, copied beside it
        return c;
    }
    bool takesContext() const override { return true; }
    Example sample(std::mt19937_64 &rng, bool heldOut) const override
    {
        const size_t length = m_length;
        const std::vector<int> &ids = heldOut ? heldOutIds() : trainingIds();
        if (ids.size() <= length + 1)
            throw Error("the corpus is too short for the words task: " + std::to_string(ids.size()) + " tokens");
        const size_t start = rng() % (ids.size() - length - 1);
        const bool repeats = !heldOut && rng() % 2 == 0;
        std::vector<int> text(ids.begin() + long(start), ids.begin() + long(start + length + 1));
        if (repeats) { // n words drawn at random from the novel, at a and again at b: only the first reading tells
            const size_t n = 8 + rng() % 25, a = rng() % (length - 2 * n + 1),
                         b = a + n + rng() % (length - a - 2 * n + 1);
            for (size_t k = 0; k < n; ++k)
                text[a + k] = text[b + k] = ids[rng() % ids.size()];
        }
        Example e;
        e.tokens.assign(text.begin(), text.end() - 1);
        e.targets.assign(text.begin() + 1, text.end());
        return e;
    }

private:
    size_t m_length;
    // Read once (the Train panel asks for the shape often); its encoding is thread-safe.
    const SentencePieceTokenizer &tokenizer() const
    {
        static const SentencePieceTokenizer pieces(tokenizerFile());
        return pieces;
    }
    // Each part read once, apart: the Train panel's sample needs only the held-out tenth (tens of milliseconds), the
    // training part takes seconds (SentencePiece reads about 200 kB a second).
    const std::vector<int> &trainingIds() const
    {
        static const std::vector<int> ids = tokenizer().encode(corpusTraining());
        return ids;
    }
    const std::vector<int> &heldOutIds() const
    {
        static const std::vector<int> ids = tokenizer().encode(corpusHeldOut());
        return ids;
    }
};

// BERT's masked language model on the same corpus (train/objectives.h): 128 characters, 15 % of them chosen and
// hidden 80/10/10; the model, bidirectional, predicts the original character at each chosen position.
class MaskedCharactersTask : public Task
{
public:
    static constexpr int kMask = 256;
    std::string name() const override { return "mlm"; }
    std::string summary() const override
    {
        return "BERT's masked language model on Pride and Prejudice: fill in the characters hidden by [MASK]";
    }
    ModelConfig modelConfig() const override
    {
        ModelConfig c = smallConfig(4, 4, 128, 128, "");
        c.vocab = 260; // the bytes, then [MASK], [CLS], [SEP], [PAD]
        c.causal = false;
        // Rotary positions: with GPT-2's learned table (initialised at 0.02) this encoder stayed at the characters'
        // unigram frequencies for 3000 steps (held-out loss 2.71, 26 % of masked characters); with RoPE, which hands
        // attention the distance between two positions from the first step, it passed 63 % in 600 (docs/models.md).
        c.positions = PositionKind::Rope;
        c.specialTokens = {{"[MASK]", kMask}, {"[CLS]", 257}, {"[SEP]", 258}, {"[PAD]", 259}};
        return c;
    }
    Example sample(std::mt19937_64 &rng, bool heldOut) const override
    {
        const std::string &text = heldOut ? corpusHeldOut() : corpusTraining();
        const size_t length = 128;
        const size_t start = rng() % (text.size() - length);
        std::vector<int> tokens;
        for (size_t i = 0; i < length; ++i)
            tokens.push_back(static_cast<unsigned char>(text[start + i]));
        const CorruptedText c = maskedLmObjective(tokens, kMask, 256, rng());
        return {c.input, c.targets};
    }
};

// A tagging task for fine-tuning the masked LM (lesson 13), as BERT fine-tunes on named entities (Devlin et al. 2019,
// figure 4d): in a 96-character window of the corpus one letter of each of up to four words of five letters or more
// is asked about, and each one time in two was replaced by another letter of its kind (a vowel by a vowel); the model
// names 'y' there when the letter is the novel's and 'n' when it was replaced. Only the asked letters have targets, so
// the two answers are equally common (a chance score is 50 %); the model tags every position, and in the app a typed
// text shows 'n' at each misspelt letter. The labels are tokens the masked-LM head already predicts, so the pretrained
// head is the tagger's start where BERT adds a new layer. A replacement that happens to spell another word (rare at
// five letters) stays 'n'. Designs that learnt less from austen-mlm in 300–600 steps: one answer for the whole window
// at a [MASK] after [SEP] (chance: it has to find one letter in 96 through attention nothing had trained), a tag at
// every position (it learnt to say 'y' everywhere: one 'n' in 192 targets), one asked letter a window (70 %).
class TyposTask : public Task
{
public:
    static constexpr size_t kWindow = 96;
    static constexpr size_t kAsked = 4; // words asked about in a window, at most
    std::string name() const override { return "typos"; }
    std::string summary() const override
    {
        return "fine-tuning: is this letter of Pride and Prejudice spelt as the novel spells it? 'y' or 'n' "
               "(start from austen-mlm)";
    }
    ModelConfig modelConfig() const override { return MaskedCharactersTask().modelConfig(); }
    Example sample(std::mt19937_64 &rng, bool heldOut) const override
    {
        const std::string &text = heldOut ? corpusHeldOut() : corpusTraining();
        for (;;) {
            const size_t start = rng() % (text.size() - kWindow);
            std::string window = text.substr(start, kWindow);
            std::vector<std::pair<size_t, size_t>> words; // [begin, end) of whole words of 5+ letters in the window
            const auto letter = [&](size_t i) { return std::isalpha(static_cast<unsigned char>(window[i])) != 0; };
            for (size_t i = 0; i < window.size();) {
                size_t j = i;
                while (j < window.size() && letter(j))
                    ++j;
                if (j - i >= 5 && i > 0 && j < window.size())
                    words.emplace_back(i, j);
                i = j == i ? i + 1 : j;
            }
            if (words.empty()) // a window of short words only: draw another
                continue;
            for (size_t k = 0; k + 1 < words.size(); ++k) // the first kAsked of a shuffle
                std::swap(words[k], words[k + rng() % (words.size() - k)]);
            words.resize(std::min(words.size(), kAsked));
            Example e;
            e.targets.assign(window.size(), -1);
            for (const auto &[begin, end] : words) {
                const size_t at = begin + rng() % (end - begin);
                const bool replace = rng() % 2 == 0;
                if (replace) { // a vowel by a vowel, a consonant by a consonant: no letter pair gives it away
                    const char original = char(std::tolower(static_cast<unsigned char>(window[at])));
                    const std::string_view vowels = "aeiou", consonants = "bcdfghjklmnpqrstvwxyz";
                    const std::string_view kind = vowels.find(original) != std::string_view::npos ? vowels : consonants;
                    char replacement = original;
                    while (replacement == original)
                        replacement = kind[rng() % kind.size()];
                    window[at] = std::isupper(static_cast<unsigned char>(window[at])) ? char(std::toupper(replacement))
                                                                                      : replacement;
                }
                e.targets[at] = replace ? 'n' : 'y';
            }
            for (const unsigned char c : window)
                e.tokens.push_back(c);
            return e;
        }
    }
};

} // namespace

bool isHeldOutQuestion(const std::string &question)
{
    return std::hash<std::string> {}(question) % 5 == 0;
}

Example retrievalExample(std::mt19937_64 &rng, bool heldOut, int position, int pairs)
{
    if (pairs < 1 || pairs > kRetrievalPairs || position < 0 || position >= pairs)
        throw Error("the retrieval task has 1.." + std::to_string(kRetrievalPairs) + " pairs and asks pair 0.."
            + std::to_string(pairs - 1) + "; got pair " + std::to_string(position) + " of " + std::to_string(pairs));
    for (;;) {
        std::vector<std::string> keys;
        while (int(keys.size()) < pairs) {
            const std::string key = randomLetters(rng, kRetrievalKeyLength, 'a', 26);
            if (std::find(keys.begin(), keys.end(), key) == keys.end())
                keys.push_back(key);
        }
        std::string question, value;
        for (size_t k = 0; k < keys.size(); ++k) {
            const std::string v = randomLetters(rng, kRetrievalValueLength, '0', 10);
            question += (question.empty() ? "" : " ") + keys[k] + v;
            if (int(k) == position)
                value = v;
        }
        question += " ?" + keys[size_t(position)];
        if (isHeldOutQuestion(question) != heldOut)
            continue;
        Example e;
        for (unsigned char c : question + value)
            e.tokens.push_back(c);
        e.targets.assign(e.tokens.size(), -1);
        for (size_t t = question.size() - 1; t + 1 < e.tokens.size(); ++t)
            e.targets[t] = e.tokens[t + 1];
        return e;
    }
}

Input inputOf(const Example &example)
{
    Input input;
    input.tokens = example.tokens;
    input.source = example.source;
    return input;
}

Example Task::sampleLonger(std::mt19937_64 &rng, int scale) const
{
    if (scale == 1)
        return sample(rng, true);
    throw Error("task " + name() + " has one length only: longer examples are drawn for reverse");
}

std::vector<int> Task::targetsOf(const std::vector<int> &tokens) const
{
    return objectiveTargets(modelConfig().causal, tokens);
}

std::vector<int> objectiveTargets(bool causal, const std::vector<int> &tokens)
{
    std::vector<int> targets(tokens.size(), -1);
    for (size_t t = 0; t < tokens.size(); ++t)
        if (!causal)
            targets[t] = tokens[t];
        else if (t + 1 < tokens.size())
            targets[t] = tokens[t + 1];
    return targets;
}

std::vector<std::string> Task::names()
{
    return {"reverse", "copy", "sort", "parens", "chars", "words", "mlm", "typos", "seq2seq-sort", "retrieval",
        "retrieval-ends"};
}

std::unique_ptr<Task> Task::create(const std::string &name, int context)
{
    if (name == "reverse")
        return std::make_unique<ReverseTask>();
    if (name == "copy")
        return std::make_unique<CopyTask>();
    if (name == "sort")
        return std::make_unique<SortTask>();
    if (name == "parens")
        return std::make_unique<ParenthesesTask>();
    if (name == "chars")
        return std::make_unique<CharactersTask>(context);
    if (name == "words")
        return std::make_unique<WordsTask>(context);
    if (name == "mlm")
        return std::make_unique<MaskedCharactersTask>();
    if (name == "typos")
        return std::make_unique<TyposTask>();
    if (name == "seq2seq-sort")
        return std::make_unique<Seq2seqSortTask>();
    if (name == "retrieval" || name == "retrieval-ends")
        return std::make_unique<RetrievalTask>(name == "retrieval-ends");
    std::string known;
    for (const std::string &n : names())
        known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown task '" + name + "' (known: " + known + ")");
}

} // namespace atlas
