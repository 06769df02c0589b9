#include "train/corpustasks.h"

#include "model/builtinmodels.h"
#include "tokenize/sentencepiecetokenizer.h"
#include "train/corpus.h"
#include "train/objectives.h"
#include "train/taskshape.h"
#include "util/error.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace atlas {

namespace {

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
    ModelConfig modelConfig() const override { return byteTaskConfig(4, 4, 128, int(m_length)); }
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
        // Refused here rather than at the first held-out window, which may come after minutes of training.
        if (length > 0 && heldOutIds().size() <= m_length + 1)
            throw Error("--context " + std::to_string(length)
                + " is longer than the words task's held-out part of the "
                  "novel ("
                + std::to_string(heldOutIds().size()) + " tokens); give at most "
                + std::to_string(heldOutIds().size() - 2));
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
        ModelConfig c = byteTaskConfig(4, 4, 128, int(m_length));
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

// BERT's masked language model on the same corpus (train/objectives.h): windows of 128 characters (or the context's),
// 15 % of them chosen and hidden 80/10/10; the model, bidirectional, predicts the original character at each chosen
// position.
class MaskedCharactersTask : public Task
{
public:
    explicit MaskedCharactersTask(int length = 0)
        : m_length(length > 0 ? size_t(length) : kLength)
    {
    }
    static constexpr int kMask = 256;
    static constexpr size_t kLength = 128;
    std::string name() const override { return "mlm"; }
    std::string summary() const override
    {
        return "BERT's masked language model on Pride and Prejudice: fill in the characters hidden by [MASK]";
    }
    ModelConfig modelConfig() const override
    {
        ModelConfig c = byteTaskConfig(4, 4, 128, int(m_length));
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
        const size_t start = rng() % (text.size() - m_length);
        std::vector<int> tokens;
        for (size_t i = 0; i < m_length; ++i)
            tokens.push_back(static_cast<unsigned char>(text[start + i]));
        const CorruptedText c = maskedLmObjective(tokens, kMask, 256, rng());
        return {c.input, c.targets};
    }
    bool takesContext() const override { return true; }

private:
    size_t m_length;
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

std::unique_ptr<Task> createCorpusTask(const std::string &name, int context)
{
    if (name == "chars")
        return std::make_unique<CharactersTask>(context);
    if (name == "words")
        return std::make_unique<WordsTask>(context);
    if (name == "mlm")
        return std::make_unique<MaskedCharactersTask>(context);
    if (name == "typos")
        return std::make_unique<TyposTask>();
    return nullptr;
}

} // namespace atlas
