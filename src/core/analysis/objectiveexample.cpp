#include "analysis/objectiveexample.h"

#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"

#include <algorithm>
#include <cctype>
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
    // BERT and T5 checkpoints say what they were pretrained on by their family; the project's models by their task.
    if (config.task == "mlm" || config.family == Family::Bert)
        return Objective::MaskedLm;
    return config.family == Family::T5 ? Objective::SpanCorruption : Objective::NextToken;
}

std::vector<int> objectiveText(
    const ModelConfig &config, Objective objective, const std::vector<int> &tokens, const std::vector<int> &source)
{
    if (!config.isEncoderDecoder() || objective != Objective::SpanCorruption)
        return tokens;
    std::vector<int> text = source;
    if (!text.empty() && text.back() == config.specialToken("</s>"))
        text.pop_back();
    return text;
}

std::vector<bool> sentenceEnds(const Tokenizer &tokenizer, const std::vector<int> &tokens)
{
    std::vector<std::string> text;
    for (int id : tokens)
        text.push_back(tokenizer.decode({id}));
    std::vector<bool> ends(tokens.size(), false);
    bool punctuated = false; // the text so far ends in . ! or ?, closing quotes and brackets aside
    for (size_t t = 0; t < tokens.size(); ++t) {
        const std::string &s = text[t];
        const size_t last = s.find_last_not_of("\"')]\xE2\x80\x9D\x99"); // closing quotes (also ” and ’) and brackets
        if (last != std::string::npos) // a token of closing marks alone keeps what came before it
            punctuated = std::string(".!?").find(s[last]) != std::string::npos;
        const bool spaceAfter = t + 1 == tokens.size()
            || (!text[t + 1].empty() && std::isspace(static_cast<unsigned char>(text[t + 1][0])));
        ends[t] = punctuated && spaceAfter;
    }
    return ends;
}

CorruptedText applyObjective(const Model &model, const std::vector<int> &tokens, Objective objective, uint64_t seed)
{
    const ModelConfig &config = model.config;
    const std::string &modelName = model.name;
    switch (objective) {
    case Objective::NextToken:
        return nextTokenObjective(tokens);
    case Objective::PrefixLm:
        return prefixLmObjective(tokens, seed);
    case Objective::MaskedLm:
        if (config.specialToken("[MASK]") < 0)
            throw Error("model " + modelName + " has no [MASK] token to hide tokens with");
        return maskedLmObjective(tokens, config.specialToken("[MASK]"), config.ordinaryTokens(), seed, kMlmRate);
    case Objective::SpanCorruption:
        if (config.sentinelTokens().empty())
            throw Error("model " + modelName + " has no sentinels <extra_id_0>, <extra_id_1> … to stand for the spans");
        return spanCorruptionObjective(tokens, config.sentinelTokens(), seed);
    case Objective::NextSentence:
        if (config.specialToken("[CLS]") < 0 || config.specialToken("[SEP]") < 0)
            throw Error("model " + modelName + " has no [CLS] and [SEP] tokens to join two sentences");
        return nextSentenceObjective(tokens, sentenceEnds(*tokenizerForModel(model), tokens),
            config.specialToken("[CLS]"), config.specialToken("[SEP]"), seed);
    }
    return nextTokenObjective(tokens);
}

ObjectiveExample objectiveExample(
    const Model &model, const Tokenizer &tokenizer, const std::vector<int> &tokens, Objective objective, uint64_t seed)
{
    const ModelConfig &config = model.config;
    ObjectiveExample e;
    e.original = tokens;
    for (const auto &[name, id] : config.specialTokens)
        e.specialNames[id] = name;
    // The special tokens the objective needs, the model's own or named past its vocabulary (special ids lie below the
    // vocabulary's size, so these are past every one).
    int past = config.vocab;
    const auto special = [&](const char *name) {
        int id = config.specialToken(name);
        if (id < 0) {
            e.specialsInVocabulary = false;
            e.specialNames[id = past++] = name;
        }
        return id;
    };
    switch (objective) {
    case Objective::NextToken:
        e.text = nextTokenObjective(tokens);
        break;
    case Objective::PrefixLm:
        e.text = prefixLmObjective(tokens, seed);
        break;
    case Objective::MaskedLm:
        e.text = maskedLmObjective(tokens, special("[MASK]"), config.ordinaryTokens(), seed, kMlmRate);
        countFates(e);
        break;
    case Objective::SpanCorruption: {
        std::vector<int> sentinels = config.sentinelTokens();
        if (sentinels.empty()) {
            e.specialsInVocabulary = false;
            sentinels = namedSentinels(past, tokens.size(), e.specialNames);
        }
        e.text = spanCorruptionObjective(tokens, sentinels, seed);
        break;
    }
    case Objective::NextSentence: {
        const int cls = special("[CLS]"), sep = special("[SEP]");
        e.text = nextSentenceObjective(tokens, sentenceEnds(tokenizer, tokens), cls, sep, seed);
        break;
    }
    }
    e.mask = objectiveAttentionMask(e.text);
    return e;
}

} // namespace atlas
