#include "analysis/objectiveexample.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

constexpr double kMlmRate = 0.15;

RuleCount binomial(int measured, int n, double p)
{
    return {measured, n * p, std::sqrt(n * p * (1 - p))};
}

// The masked LM's counts against the rule: how many were chosen, and how the chosen split 80/10/10.
void countFates(ObjectiveExample &e)
{
    int masked = 0, random = 0, unchanged = 0;
    for (CorruptedText::Fate f : e.text.fates) {
        masked += f == CorruptedText::Fate::Masked;
        random += f == CorruptedText::Fate::Random;
        unchanged += f == CorruptedText::Fate::Unchanged;
    }
    const int chosen = masked + random + unchanged;
    e.chosen = {chosen, kMlmRate * double(e.original.size()), 0.0};
    e.masked = binomial(masked, chosen, 0.8);
    e.random = binomial(random, chosen, 0.1);
    e.unchanged = binomial(unchanged, chosen, 0.1);
}

// Enough sentinels for any span corruption of T tokens: at most T / 2 spans, and the closing one.
std::vector<int> namedSentinels(int firstId, size_t tokens, std::map<int, std::string> &names)
{
    std::vector<int> ids;
    for (size_t k = 0; k < tokens / 2 + 2; ++k) {
        ids.push_back(firstId + int(k));
        names[ids.back()] = "<extra_id_" + std::to_string(k) + ">";
    }
    return ids;
}

} // namespace

Objective ownObjective(const ModelConfig &config)
{
    return config.task == "mlm" ? Objective::MaskedLm : Objective::NextToken;
}

CorruptedText applyObjective(const ModelConfig &config, const std::string &modelName, const std::vector<int> &tokens,
    Objective objective, uint64_t seed)
{
    switch (objective) {
    case Objective::NextToken:
        return nextTokenObjective(tokens);
    case Objective::PrefixLm:
        return prefixLmObjective(tokens, seed);
    case Objective::MaskedLm:
        if (config.specialToken("[MASK]") < 0)
            throw Error("model " + modelName
                + " has no [MASK] token (atlas_special_tokens in its config.json) to hide tokens with");
        return maskedLmObjective(tokens, config.specialToken("[MASK]"), config.ordinaryTokens(), seed, kMlmRate);
    case Objective::SpanCorruption:
        if (config.sentinelTokens().empty())
            throw Error("model " + modelName
                + " has no sentinels <extra_id_0>, <extra_id_1> … (atlas_special_tokens in its config.json)");
        return spanCorruptionObjective(tokens, config.sentinelTokens(), seed);
    }
    return nextTokenObjective(tokens);
}

ObjectiveExample objectiveExample(
    const ModelConfig &config, const std::vector<int> &tokens, Objective objective, uint64_t seed)
{
    ObjectiveExample e;
    e.original = tokens;
    for (const auto &[name, id] : config.specialTokens)
        e.specialNames[id] = name;
    int mask = config.specialToken("[MASK]");
    std::vector<int> sentinels = config.sentinelTokens();
    const bool needsMask = objective == Objective::MaskedLm, needsSentinels = objective == Objective::SpanCorruption;
    if ((needsMask && mask < 0) || (needsSentinels && sentinels.empty())) {
        e.specialsInVocabulary = false; // special ids lie below the vocabulary's size: these are past every one
        if (needsMask)
            e.specialNames[mask = config.vocab] = "[MASK]";
        else
            sentinels = namedSentinels(config.vocab, tokens.size(), e.specialNames);
    }
    switch (objective) {
    case Objective::NextToken:
        e.text = nextTokenObjective(tokens);
        break;
    case Objective::PrefixLm:
        e.text = prefixLmObjective(tokens, seed);
        break;
    case Objective::MaskedLm:
        e.text = maskedLmObjective(tokens, mask, config.ordinaryTokens(), seed, kMlmRate);
        countFates(e);
        break;
    case Objective::SpanCorruption:
        e.text = spanCorruptionObjective(tokens, sentinels, seed);
        break;
    }
    e.mask = objectiveAttentionMask(e.text);
    return e;
}

} // namespace atlas
