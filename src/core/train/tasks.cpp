#include "train/task.h"

#include "train/corpustasks.h"
#include "train/objectives.h"
#include "train/taskshape.h"
#include "util/error.h"

#include <algorithm>

namespace atlas {

namespace {

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
    ModelConfig modelConfig() const override { return byteTaskConfig(2, 4, 64, 32); }
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
        ModelConfig c = byteTaskConfig(2, 4, 64, 16);
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
    ModelConfig modelConfig() const override { return byteTaskConfig(2, 4, 64, 32); }
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
    ModelConfig modelConfig() const override { return byteTaskConfig(2, 4, 64, 40); }
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
    ModelConfig modelConfig() const override { return byteTaskConfig(2, 4, 64, 32); }
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
        ModelConfig c = byteTaskConfig(2, 4, 128, 64);
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
    if (auto task = createCorpusTask(name, context))
        return task;
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
