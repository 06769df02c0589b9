#include "train/objectives.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace atlas {

namespace {

// A draw in [0, n): the same numbers on every platform for a seed (std::uniform_int_distribution is not).
size_t below(std::mt19937_64 &rng, size_t n)
{
    return size_t(rng() % uint64_t(n));
}

void shuffle(std::vector<int> &items, std::mt19937_64 &rng)
{
    for (size_t i = items.size(); i > 1; --i)
        std::swap(items[i - 1], items[below(rng, i)]);
}

// `n` items cut into `k` non-empty runs, every cut equally likely: the run lengths.
std::vector<int> randomPartition(int n, int k, std::mt19937_64 &rng)
{
    std::vector<int> cuts;
    for (int i = 1; i < n; ++i)
        cuts.push_back(i);
    shuffle(cuts, rng);
    cuts.resize(size_t(k - 1));
    std::sort(cuts.begin(), cuts.end());
    std::vector<int> lengths;
    int previous = 0;
    for (int c : cuts) {
        lengths.push_back(c - previous);
        previous = c;
    }
    lengths.push_back(n - previous);
    return lengths;
}

void requireTokens(const std::vector<int> &tokens, size_t minimum, const char *objective)
{
    if (tokens.size() < minimum)
        throw Error(std::string(objective) + " needs at least " + std::to_string(minimum) + " tokens, the text has "
            + std::to_string(tokens.size()));
}

} // namespace

const char *objectiveName(Objective objective)
{
    switch (objective) {
    case Objective::NextToken:
        return "next";
    case Objective::MaskedLm:
        return "mlm";
    case Objective::SpanCorruption:
        return "span";
    case Objective::PrefixLm:
        return "prefix";
    case Objective::NextSentence:
        return "nsp";
    }
    return "next";
}

Objective parseObjective(const std::string &text, const std::string &source)
{
    for (Objective o : {Objective::NextToken, Objective::MaskedLm, Objective::SpanCorruption, Objective::PrefixLm,
             Objective::NextSentence})
        if (text == objectiveName(o))
            return o;
    throw Error(source + ": '" + text + "' is not an objective (next, mlm, span, prefix or nsp)");
}

CorruptedText nextTokenObjective(const std::vector<int> &tokens)
{
    requireTokens(tokens, 2, "the next-token objective");
    CorruptedText out;
    out.objective = Objective::NextToken;
    out.input = tokens;
    for (size_t t = 0; t < tokens.size(); ++t) {
        const bool last = t + 1 == tokens.size();
        out.targets.push_back(last ? -1 : tokens[t + 1]);
        out.lossMask.push_back(last ? 0.0f : 1.0f);
    }
    return out;
}

CorruptedText maskedLmObjective(
    const std::vector<int> &tokens, int maskId, int ordinaryTokens, uint64_t seed, double rate)
{
    requireTokens(tokens, 1, "the masked LM");
    if (!(rate > 0 && rate <= 1) || ordinaryTokens < 1)
        throw Error("the masked LM needs a rate in (0, 1] and at least one ordinary token to draw");
    const int T = int(tokens.size());
    std::mt19937_64 rng(seed);
    // Only ordinary tokens are chosen, as BERT's collator masks no special token: a [CLS], a [SEP] or a [MASK] the
    // text already holds has no original to recover.
    std::vector<int> order;
    for (int t = 0; t < T; ++t)
        if (tokens[size_t(t)] >= 0 && tokens[size_t(t)] < ordinaryTokens)
            order.push_back(t);
    if (order.empty())
        throw Error("the masked LM chooses among ordinary tokens, and the text has only special ones");
    shuffle(order, rng);
    const int eligible = int(order.size());
    const int chosen = std::clamp(int(std::lround(rate * eligible)), 1, eligible);
    CorruptedText out;
    out.objective = Objective::MaskedLm;
    out.input = tokens;
    out.targets = tokens;
    out.lossMask.assign(size_t(T), 0.0f);
    out.fates.assign(size_t(T), CorruptedText::Fate::Kept);
    for (int i = 0; i < chosen; ++i) {
        const size_t t = size_t(order[size_t(i)]);
        out.lossMask[t] = 1.0f;
        const size_t draw = below(rng, 10);
        if (draw < 8) {
            out.input[t] = maskId;
            out.fates[t] = CorruptedText::Fate::Masked;
        } else if (draw == 8) {
            out.input[t] = int(below(rng, size_t(ordinaryTokens)));
            out.fates[t] = CorruptedText::Fate::Random;
        } else {
            out.fates[t] = CorruptedText::Fate::Unchanged;
        }
    }
    for (size_t t = 0; t < out.targets.size(); ++t)
        if (out.lossMask[t] == 0.0f)
            out.targets[t] = -1;
    return out;
}

CorruptedText spanCorruptionObjective(
    const std::vector<int> &tokens, const std::vector<int> &sentinels, uint64_t seed, double density, double meanSpan)
{
    requireTokens(tokens, 2, "span corruption");
    if (!(density > 0 && density < 1) || !(meanSpan >= 1))
        throw Error("span corruption needs a noise density in (0, 1) and a mean span length of at least 1");
    const int T = int(tokens.size());
    const int noise = std::clamp(int(std::lround(density * T)), 1, T - 1);
    const int spans = std::clamp(int(std::lround(noise / meanSpan)), 1, std::min(noise, T - noise));
    if (int(sentinels.size()) < spans + 1)
        throw Error("span corruption of " + std::to_string(T) + " tokens draws " + std::to_string(spans)
            + " spans and needs " + std::to_string(spans + 1) + " sentinels; the model has "
            + std::to_string(sentinels.size()));
    std::mt19937_64 rng(seed);
    const std::vector<int> noiseLengths = randomPartition(noise, spans, rng);
    const std::vector<int> keptLengths = randomPartition(T - noise, spans, rng);
    CorruptedText out;
    out.objective = Objective::SpanCorruption;
    int at = 0;
    for (int s = 0; s < spans; ++s) {
        out.input.insert(out.input.end(), tokens.begin() + at, tokens.begin() + at + keptLengths[size_t(s)]);
        at += keptLengths[size_t(s)];
        out.input.push_back(sentinels[size_t(s)]);
        out.targets.push_back(sentinels[size_t(s)]);
        out.targets.insert(out.targets.end(), tokens.begin() + at, tokens.begin() + at + noiseLengths[size_t(s)]);
        out.spans.push_back({at, at + noiseLengths[size_t(s)]});
        at += noiseLengths[size_t(s)];
    }
    out.targets.push_back(sentinels[size_t(spans)]);
    out.lossMask.assign(out.targets.size(), 1.0f);
    return out;
}

CorruptedText prefixLmObjective(const std::vector<int> &tokens, uint64_t seed)
{
    CorruptedText out = nextTokenObjective(tokens); // checks T >= 2
    std::mt19937_64 rng(seed);
    out.objective = Objective::PrefixLm;
    out.prefix = 1 + int(below(rng, tokens.size() - 1));
    for (int t = 0; t + 1 < out.prefix; ++t) { // inside the prefix nothing is predicted
        out.targets[size_t(t)] = -1;
        out.lossMask[size_t(t)] = 0.0f;
    }
    return out;
}

std::vector<std::pair<int, int>> sentencesOf(const std::vector<int> &tokens, const std::vector<bool> &endsSentence)
{
    std::vector<std::pair<int, int>> sentences;
    int begin = 0;
    for (int t = 0; t < int(tokens.size()); ++t)
        if ((size_t(t) < endsSentence.size() && endsSentence[size_t(t)]) || t + 1 == int(tokens.size())) {
            sentences.push_back({begin, t + 1});
            begin = t + 1;
        }
    return sentences;
}

CorruptedText nextSentenceObjective(
    const std::vector<int> &tokens, const std::vector<bool> &endsSentence, int clsId, int sepId, uint64_t seed)
{
    const std::vector<std::pair<int, int>> sentences = sentencesOf(tokens, endsSentence);
    const size_t n = sentences.size();
    if (n < 3)
        throw Error("next-sentence prediction needs at least 3 sentences (A, the one after it, and another to draw "
                    "instead), each ending in . ! or ?; the text has "
            + std::to_string(n));
    std::mt19937_64 rng(seed);
    const size_t a = below(rng, n - 1);
    CorruptedText out;
    out.objective = Objective::NextSentence;
    out.isNext = below(rng, 2) == 1;
    size_t b = a + 1;
    if (!out.isNext) { // any sentence but A and its successor
        b = below(rng, n - 2);
        b += b >= a ? 2 : 0;
    }
    out.sentenceA = sentences[a];
    out.sentenceB = sentences[b];
    const auto append = [&](int id, int segment) {
        out.input.push_back(id);
        out.segments.push_back(segment);
    };
    append(clsId, 0);
    for (int t = out.sentenceA.first; t < out.sentenceA.second; ++t)
        append(tokens[size_t(t)], 0);
    append(sepId, 0);
    for (int t = out.sentenceB.first; t < out.sentenceB.second; ++t)
        append(tokens[size_t(t)], 1);
    append(sepId, 1);
    out.targets = {out.isNext ? 1 : 0};
    out.lossMask = {1.0f};
    return out;
}

std::vector<int> fillSpans(
    const std::vector<int> &input, const std::vector<int> &targets, const std::vector<int> &sentinels)
{
    auto isSentinel = [&](int id) { return std::find(sentinels.begin(), sentinels.end(), id) != sentinels.end(); };
    std::map<int, std::vector<int>> filling;
    int current = -1;
    for (int id : targets) {
        if (isSentinel(id))
            current = id;
        else if (current >= 0)
            filling[current].push_back(id);
    }
    std::vector<int> out;
    for (int id : input) {
        if (!isSentinel(id)) {
            out.push_back(id);
            continue;
        }
        const auto &span = filling[id];
        out.insert(out.end(), span.begin(), span.end());
    }
    return out;
}

std::vector<uint8_t> objectiveAttentionMask(const CorruptedText &text)
{
    const size_t T = text.input.size();
    std::vector<uint8_t> mask(T * T, 0);
    for (size_t i = 0; i < T; ++i)
        for (size_t j = 0; j < T; ++j) {
            bool allowed = true;
            if (text.objective == Objective::NextToken)
                allowed = j <= i;
            else if (text.objective == Objective::PrefixLm)
                allowed = j <= i || (i < size_t(text.prefix) && j < size_t(text.prefix));
            mask[i * T + j] = allowed;
        }
    return mask;
}

} // namespace atlas
