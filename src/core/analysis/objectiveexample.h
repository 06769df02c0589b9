#pragma once

#include "model/model.h"
#include "train/objectives.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

// A pretraining objective (train/objectives.h) applied to one input, as the Objectives view and `dump --objective`
// show it: what the model reads, what it must predict, the counts against the objective's rule, and the attention
// mask the objective implies.
namespace atlas {

class Tokenizer;

// The objective a model was trained with: the masked LM for a model of task mlm (austen-mlm) and a BERT checkpoint,
// span corruption for a T5 checkpoint, the next token otherwise (every decoder here, and seq2seq-sort's decoder).
Objective ownObjective(const ModelConfig &config);
// The text the objective corrupts: an encoder–decoder's source for span corruption (T5: the encoder reads the corrupted
// text, the decoder writes the spans), without the </s> its tokenizer appends (T5 corrupts the text, then ends both
// sequences with </s>); otherwise the input, or the decoder's.
std::vector<int> objectiveText(
    const ModelConfig &config, Objective objective, const std::vector<int> &tokens, const std::vector<int> &source);

// Which tokens end a sentence, for next-sentence prediction: those whose text, closing quotes and brackets aside, ends
// in . ! or ? and that are followed by white space or the end of the text (so "Mr. Darcy" is cut after "Mr.").
std::vector<bool> sentenceEnds(const Tokenizer &tokenizer, const std::vector<int> &tokens);

// The objective applied to `tokens` with the model's own special tokens. Throws atlas::Error naming the model when it
// has none to take it (mlm without [MASK], span without sentinels, nsp without [CLS] and [SEP]), or the input is too
// short for the objective.
CorruptedText applyObjective(const Model &model, const std::vector<int> &tokens, Objective objective, uint64_t seed);

// One measured count against the rule that draws it.
struct RuleCount
{
    int measured = 0;
    double expected = 0; // n · p
    double spread = 0; // √(n · p · (1 − p)): the binomial standard deviation; 0 for a count the rule fixes
};

struct ObjectiveExample
{
    CorruptedText text;
    std::vector<int> original; // [T] the input as given
    std::map<int, std::string> specialNames; // every special token the example uses: [MASK], <extra_id_0> …
    // False when the model has no such tokens: the example then numbers them past the model's vocabulary, to be shown;
    // the model itself cannot read that input (applyObjective refuses it).
    bool specialsInVocabulary = true;
    // Masked LM: max(1, round(0.15 · T)) tokens chosen (the rule fixes it: spread 0, expected 0.15 · T), and of
    // those, Binomial(chosen, 0.8) hidden by [MASK], Binomial(chosen, 0.1) replaced by a random token and
    // Binomial(chosen, 0.1) left unchanged.
    RuleCount chosen, masked, random, unchanged;
    std::vector<uint8_t> mask; // objectiveAttentionMask(text), [T_in × T_in]: 1 = query i may attend key j
};

// The objective applied to `tokens` for display: with the model's special tokens where it has them, otherwise named
// ones past its vocabulary (specialsInVocabulary false). `tokenizer` is the model's (next-sentence prediction reads the
// text to find its sentences). Throws atlas::Error for an input too short to take it.
ObjectiveExample objectiveExample(
    const Model &model, const Tokenizer &tokenizer, const std::vector<int> &tokens, Objective objective, uint64_t seed);

} // namespace atlas
