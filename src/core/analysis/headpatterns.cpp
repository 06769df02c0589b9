#include "analysis/headpatterns.h"

#include "engine/engine.h"
#include "trace/names.h"

#include <algorithm>

namespace atlas {

namespace {

// Position of the separator between question and answer (the first target), or -1.
int separatorOf(const Example &e)
{
    for (size_t t = 0; t < e.targets.size(); ++t)
        if (e.targets[t] >= 0)
            return static_cast<int>(t);
    return -1;
}

HeadPattern previousToken()
{
    return {"previous token", "each token looks at the token just before it",
        [](const Example &, int pos) { return pos > 0 ? std::vector<int> {pos - 1} : std::vector<int> {}; }};
}

bool isLetter(int token)
{
    return (token >= 'a' && token <= 'z') || (token >= 'A' && token <= 'Z');
}

// Patterns of a character-level language model (besides "previous token"). An induction pattern (what followed
// earlier occurrences of the current pair of characters) was measured on a model of the built-in shape: no head put
// more than 3 % on it within the 128-character context, so it is not offered.
std::vector<HeadPattern> characterPatterns()
{
    return {
        {"word start", "inside a word, each letter looks back at the space (or punctuation) just before the word",
            [](const Example &e, int pos) {
                if (!isLetter(e.tokens[size_t(pos)]) || pos == 0 || !isLetter(e.tokens[size_t(pos - 1)]))
                    return std::vector<int> {};
                int k = pos - 1;
                while (k >= 0 && isLetter(e.tokens[size_t(k)]))
                    --k;
                return k >= 0 ? std::vector<int> {k} : std::vector<int> {};
            }},
    };
}

} // namespace

std::vector<HeadPattern> headPatterns(const std::string &task)
{
    std::vector<HeadPattern> patterns = {previousToken()};
    if (task == "reverse")
        patterns.push_back({"mirror",
            "while writing the answer, each position looks at the mirrored letter of the question "
            "(the one it must copy next)",
            [](const Example &e, int pos) {
                const int sep = separatorOf(e);
                if (sep < 0 || pos < sep || pos >= 2 * sep)
                    return std::vector<int> {};
                return std::vector<int> {2 * sep - 1 - pos};
            }});
    if (task == "copy")
        patterns.push_back({"induction",
            "in the second copy, each position looks at the letter that followed the "
            "previous occurrence of the current letter, i.e. the letter to copy next",
            [](const Example &e, int pos) {
                const int sep = separatorOf(e);
                if (sep < 0 || pos < sep || pos >= 2 * sep)
                    return std::vector<int> {};
                return std::vector<int> {pos - sep};
            }});
    if (task == "sort")
        patterns.push_back({"next in order",
            "while writing the answer, each position looks at where the next letter "
            "in sorted order stands in the question",
            [](const Example &e, int pos) {
                const int sep = separatorOf(e);
                std::vector<int> keys;
                if (sep < 0 || pos < sep || e.targets[size_t(pos)] < 0)
                    return keys;
                for (int k = 0; k < sep; ++k)
                    if (e.tokens[size_t(k)] == e.targets[size_t(pos)])
                        keys.push_back(k);
                return keys;
            }});
    if (task == "chars")
        for (HeadPattern &p : characterPatterns())
            patterns.push_back(std::move(p));
    if (task == "words") // natural text repeats names and phrases: an earlier "Mr" followed by "Darcy"
        patterns.push_back({"induction",
            "each word looks at the word that followed an earlier occurrence of itself (what came next last time)",
            [](const Example &e, int pos) {
                std::vector<int> keys;
                for (int j = 0; j + 1 < pos; ++j)
                    if (e.tokens[size_t(j)] == e.tokens[size_t(pos)])
                        keys.push_back(j + 1);
                return keys;
            }});
    if (task == "mlm") { // an encoder sees both ways
        patterns.push_back({"next token", "each token looks at the token just after it (a decoder cannot)",
            [](const Example &e, int pos) {
                return pos + 1 < int(e.tokens.size()) ? std::vector<int> {pos + 1} : std::vector<int> {};
            }});
        const int mask = Task::create(task)->modelConfig().specialToken("[MASK]");
        patterns.push_back({"around the mask", "each [MASK] looks at the characters on both sides of it",
            [mask](const Example &e, int pos) {
                std::vector<int> keys;
                if (e.tokens[size_t(pos)] != mask)
                    return keys;
                for (int k : {pos - 1, pos + 1})
                    if (k >= 0 && k < int(e.tokens.size()))
                        keys.push_back(k);
                return keys;
            }});
    }
    if (task == "seq2seq-sort") {
        HeadPattern source {"source letter",
            "cross-attention: each step of the decoder looks at where, in the source, the letter it writes stands",
            [](const Example &e, int pos) {
                std::vector<int> keys;
                for (size_t k = 0; k < e.source.size(); ++k)
                    if (e.source[k] == e.targets[size_t(pos)])
                        keys.push_back(int(k));
                return keys; // none for the closing '.'
            }};
        source.stack = names::kDecoderStack;
        source.attention = "cross.probs";
        return {source};
    }
    if (task == "parens")
        patterns.push_back({"brackets", "the '=' that must answer looks at the brackets, not at itself",
            [](const Example &e, int pos) {
                const int sep = separatorOf(e);
                std::vector<int> keys;
                if (pos != sep)
                    return keys;
                for (int k = 0; k < sep; ++k)
                    keys.push_back(k);
                return keys;
            }});
    if (task == "parens")
        patterns.push_back({"first dip",
            "when the counts agree but some prefix closes more than it opened, the '=' "
            "looks at the ')' where the running count first drops below zero",
            [](const Example &e, int pos) {
                const int sep = separatorOf(e);
                if (pos != sep)
                    return std::vector<int> {};
                int depth = 0;
                for (int k = 0; k < sep; ++k)
                    depth += e.tokens[size_t(k)] == '(' ? 1 : -1;
                if (depth != 0)
                    return std::vector<int> {}; // unequal counts: counting alone decides
                for (int k = 0; k < sep; ++k)
                    if ((depth += e.tokens[size_t(k)] == '(' ? 1 : -1) < 0)
                        return std::vector<int> {k};
                return std::vector<int> {};
            }});
    return patterns;
}

namespace {

// Calls visit(probs of every layer, T, position, keys) for each query of the pattern in `examples` held-out
// examples of the task.
template <typename Visit>
long forEachPatternQuery(std::shared_ptr<const Model> model, const Task &task, const HeadPattern &pattern, int examples,
    uint64_t seed, Visit visit)
{
    std::mt19937_64 rng(seed);
    long queries = 0;
    for (int n = 0; n < examples; ++n) {
        const Example e = task.sample(rng, true);
        Engine engine(model, inputOf(e));
        engine.runToEnd();
        const int T = static_cast<int>(e.tokens.size());
        for (int pos = 0; pos < T; ++pos) {
            const std::vector<int> keys = pattern.keys(e, pos);
            if (keys.empty())
                continue;
            ++queries;
            visit(engine.trace(), pos, keys);
        }
    }
    return queries;
}

// The mass head h of `probs` (H,T,S) puts from query `pos` on `keys`.
double massOn(const Tensor &probs, int h, int pos, const std::vector<int> &keys)
{
    double mass = 0;
    for (int k : keys)
        mass += probs.data()[(int64_t(h) * probs.dim(1) + pos) * probs.dim(2) + k];
    return mass;
}

const Tensor &probsOf(const Trace &trace, const HeadPattern &pattern, int layer)
{
    return trace.tensor(names::layerTensor(pattern.stack, layer, pattern.attention));
}

} // namespace

std::vector<std::vector<double>> patternMass(
    std::shared_ptr<const Model> model, const Task &task, const HeadPattern &pattern, int examples, uint64_t seed)
{
    const int L = pattern.stack == names::kEncoderStack ? model->config.encoderLayers : model->config.layers;
    const int H = model->config.heads;
    std::vector<std::vector<double>> mass(size_t(L), std::vector<double>(size_t(H), 0.0));
    const long queries = forEachPatternQuery(
        model, task, pattern, examples, seed, [&](const Trace &trace, int pos, const std::vector<int> &keys) {
            for (int l = 0; l < L; ++l)
                for (int h = 0; h < H; ++h)
                    mass[size_t(l)][size_t(h)] += massOn(probsOf(trace, pattern, l), h, pos, keys);
        });
    for (auto &row : mass)
        for (double &m : row)
            m /= double(std::max(queries, 1L));
    return mass;
}

double patternCoverage(std::shared_ptr<const Model> model, const Task &task, const HeadPattern &pattern, int layer,
    int examples, uint64_t seed)
{
    const int H = model->config.heads;
    double total = 0;
    const long queries = forEachPatternQuery(
        model, task, pattern, examples, seed, [&](const Trace &trace, int pos, const std::vector<int> &keys) {
            double best = 0;
            for (int h = 0; h < H; ++h)
                best = std::max(best, massOn(probsOf(trace, pattern, layer), h, pos, keys));
            total += best;
        });
    return total / double(std::max(queries, 1L));
}

} // namespace atlas
