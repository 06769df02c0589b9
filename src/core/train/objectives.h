#pragma once

#include <cstdint>
#include <string>
#include <vector>

// Pretraining objectives as data: what the model reads, what it must predict, and which predictions count. The
// special tokens are ids the caller gives (a model's own [MASK] and sentinels), so the corruption is the same for
// any vocabulary. Conventions, where the papers leave a choice:
// - next token (GPT): targets[t] = tokens[t + 1]; the last position has no target.
// - masked LM (BERT, Devlin et al. 2019, as their create_pretraining_data.py): exactly max(1, round(rate · T))
//   positions chosen uniformly without replacement; each independently becomes [MASK] (80 %), a random ordinary token
//   (10 %, drawn uniformly from [0, ordinaryTokens), so it may equal the original) or stays (10 %). The targets are
//   the original tokens at the chosen positions (−1 elsewhere); only those count.
// - span corruption (T5, Raffel et al. 2020, their random_spans_noise_mask): round(density · T) noise tokens (at
//   least 1, at most T − 1) in round(noise / meanSpan) spans (at least 1), span and gap lengths a random partition,
//   the text starting with a kept gap. Each span becomes one sentinel in the input; the targets list each sentinel
//   followed by its span, and end with one more sentinel (the paper's Figure 2: "<X> for inviting <Y> last <Z>").
// - prefix LM (T5's prefix objective in one decoder): the first `prefix` tokens attend to each other both ways, the
//   rest causally; the next token counts from the end of the prefix on.
// - next-sentence prediction (BERT's second task, Devlin et al. 2019 §3.1): sentence A drawn uniformly from those
//   with a successor; B is A's successor with probability 0.5 (IsNext), else a sentence drawn uniformly from the rest
//   of the text, neither A nor its successor (NotNext: BERT draws it from another document of the corpus). The model
//   reads [CLS] A [SEP] B [SEP], segment 0 up to the first [SEP] and 1 after it, both ways; one target, read at [CLS]:
//   1 IsNext, 0 NotNext.
namespace atlas {

enum class Objective { NextToken, MaskedLm, SpanCorruption, PrefixLm, NextSentence };
const char *objectiveName(Objective objective); // next | mlm | span | prefix | nsp
Objective parseObjective(const std::string &text, const std::string &source); // throws atlas::Error naming source

struct CorruptedText
{
    // What happened to each input position under the masked LM (Kept for positions not chosen).
    enum class Fate { Kept, Masked, Random, Unchanged };

    Objective objective = Objective::NextToken;
    std::vector<int> input; // [T_in] what the model reads
    std::vector<int> targets; // [T_out] what it must predict, −1 where nothing
    std::vector<float> lossMask; // [T_out] 1 where the prediction counts
    std::vector<Fate> fates; // masked LM: [T_in]
    std::vector<std::pair<int, int>> spans; // span corruption: [begin, end) of each span in the original text
    int prefix = 0; // prefix LM: the positions that see each other both ways
    // Next-sentence prediction: the segment of each input position (0: [CLS] A [SEP], 1: B [SEP]), the two sentences
    // as [begin, end) of the original text, and whether B follows A there.
    std::vector<int> segments;
    std::pair<int, int> sentenceA {0, 0}, sentenceB {0, 0};
    bool isNext = false;
};

CorruptedText nextTokenObjective(const std::vector<int> &tokens);
CorruptedText maskedLmObjective(
    const std::vector<int> &tokens, int maskId, int ordinaryTokens, uint64_t seed, double rate = 0.15);
// `sentinels`: the ids of <extra_id_0>, <extra_id_1> …, at least one more than the spans drawn (the closing one).
CorruptedText spanCorruptionObjective(const std::vector<int> &tokens, const std::vector<int> &sentinels, uint64_t seed,
    double density = 0.15, double meanSpan = 3.0);
// The prefix length drawn uniformly from 1 … T − 1 (T ≥ 2).
CorruptedText prefixLmObjective(const std::vector<int> &tokens, uint64_t seed);

// The sentences of `tokens` as [begin, end): each ends after a token `endsSentence` marks (or at the end of the text).
std::vector<std::pair<int, int>> sentencesOf(const std::vector<int> &tokens, const std::vector<bool> &endsSentence);
// Needs three sentences (A, its successor, and another); `endsSentence` is per token of `tokens`.
CorruptedText nextSentenceObjective(
    const std::vector<int> &tokens, const std::vector<bool> &endsSentence, int clsId, int sepId, uint64_t seed);

// Span corruption undone: each sentinel of `input` replaced by the tokens `targets` lists after it.
std::vector<int> fillSpans(
    const std::vector<int> &input, const std::vector<int> &targets, const std::vector<int> &sentinels);

// The attention mask the objective implies over its input, [T_in × T_in] row-major, 1 = query i may attend key j:
// causal for next token, both ways for the masked LM, span corruption and next-sentence prediction (an encoder's view
// of its input),
// bidirectional over the prefix and causal after it for the prefix LM.
std::vector<uint8_t> objectiveAttentionMask(const CorruptedText &text);

} // namespace atlas
