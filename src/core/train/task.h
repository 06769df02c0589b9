#pragma once

#include "engine/input.h"
#include "model/modelconfig.h"

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace atlas {

// One training sequence over the task's vocabulary (bytes, or its tokenizer's ids): the model reads `tokens` and, at
// position t, should predict targets[t] (the next token), or nothing where targets[t] is -1 (the question part of an
// algorithmic task).
struct Example
{
    std::vector<int> tokens;
    std::vector<int> targets;
    std::vector<int> source; // what an encoder–decoder's encoder reads (empty for a model with one stack)
};

// The language-modelling objective's targets for `tokens`: the next token at each position (none at the last) for a
// causal model, the token itself for a bidirectional one (a masked-LM head's reconstruction of what it sees).
std::vector<int> objectiveTargets(bool causal, const std::vector<int> &tokens);

// An example as the engine's input: tokens, and for an encoder–decoder its source.
Input inputOf(const Example &example);

// Held-out examples are those whose question hashes to the last fifth of a fixed partition, so no held-out question
// is ever trained on.
bool isHeldOutQuestion(const std::string &question);

// Key–value retrieval (Liu et al. 2023, "Lost in the Middle", §4, as characters): `pairs` pairs of a
// kRetrievalKeyLength-letter key followed by its kRetrievalValueLength-digit value, then '?' and one of the keys; the
// targets are its value, the key's last character predicting the first digit: "k48 a09 … ?a09". A key written apart
// from its value ("k=48 … ?a>09") or values of three digits were not learned in 8000 steps (docs/models.md, "Lost in
// the middle"): the model has to find the position after the asked key and copy what stands there.
// The example asking pair `position` (0 = the first), so that accuracy can be measured against where the pair stands.
constexpr int kRetrievalPairs = 10, kRetrievalKeyLength = 1, kRetrievalValueLength = 2;
constexpr int kRetrievalPairWidth = kRetrievalKeyLength + kRetrievalValueLength + 1; // "k48 "
constexpr int kRetrievalTrainingQuestions = 4; // questions a training context asks (held-out: one)
constexpr int kRetrievalMinTrainingPairs = 2; // training contexts hold 2 … kRetrievalPairs pairs
Example retrievalExample(std::mt19937_64 &rng, bool heldOut, int position, int pairs = kRetrievalPairs);

// A source of examples and the model shape that suits it. Tasks use bytes as tokens, so every example is
// readable text in the app ("abc>cba"), except those that name a tokenizer of their own (words).
class Task
{
public:
    virtual ~Task() = default;
    virtual std::string name() const = 0;
    virtual std::string summary() const = 0; // one line, for `train --help` and the Train panel
    virtual ModelConfig modelConfig() const = 0; // the shape the built-in model of this task uses
    // The tokenizer.model the task's tokens come from, copied into every model trained on it; empty for a task of
    // bytes.
    virtual std::string tokenizerFile() const { return {}; }
    // Training examples come from a seeded stream; held-out examples from a disjoint one (`heldOut`).
    virtual Example sample(std::mt19937_64 &rng, bool heldOut) const = 0;
    // A held-out example `scale` times as long as training's (scale 1: sample(rng, true)), to measure how a model
    // extrapolates past the lengths it was trained on. Throws atlas::Error for a task whose length is fixed.
    virtual Example sampleLonger(std::mt19937_64 &rng, int scale) const;
    // What sample() would give as the targets of an example reading `tokens` (a text typed in the app): the answer
    // after a question's separator, a retrieval question's value, every next character; -1 elsewhere and at the last
    // position. The default, where the text alone does not say (a masked LM's chosen characters, an
    // encoder–decoder's), is objectiveTargets.
    virtual std::vector<int> targetsOf(const std::vector<int> &tokens) const;
    // Whether its examples are windows of a corpus as long as the model's context (chars, words, mlm), which `create`'s
    // context sets; the other tasks' examples have lengths of their own.
    virtual bool takesContext() const { return false; }

    static std::vector<std::string> names();
    // `context`: the windows' length of a task that takes one (0: the task's own, 128), the model's context; the
    // other tasks ignore it. Throws atlas::Error for an unknown name, listing the known ones.
    static std::unique_ptr<Task> create(const std::string &name, int context = 0);
};

} // namespace atlas
