#pragma once

#include "model/model.h"
#include "view/viewanalysis.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

// A needle in a haystack (Kamradt 2023; the long-context form of Liu et al.'s lost in the middle): a sentence that
// holds a fact is put at chosen depths of a long document, a question about it closes the context, and the model's
// probability of the answer is read at each depth, with where the question's last position attends. Any causal model
// with one stack, at any length its context and the memory allow (attention kept on demand).
namespace atlas {

class Tokenizer;

// Every percent of the document: the most depths a test takes (each one forward pass).
constexpr int kMaxNeedleDepths = 101;
// The most context lengths a grid takes (each a row of depths).
constexpr int kMaxNeedleLengths = 16;

struct NeedleTest
{
    std::string haystack; // the document; repeated when it is shorter than the context
    std::string needle; // the sentence put into it: " The secret number is 4821."
    std::string question; // what closes the context: " What is the secret number? The secret number is"
    std::string answer; // what should come next: " 4821"
    int tokens = 1024; // the context's length in tokens, everything included
    int depths = 11; // needle positions from 0 (the document's start) to 1 (just before the question), evenly spaced
    // Kamradt's grid: the test at this many context lengths, evenly spaced up to `tokens` (needleLengths); 1: at
    // `tokens` alone.
    int lengths = 1;
};

struct NeedleAtDepth
{
    double depth = 0; // the depth asked for, 0 … 1
    int needleStart = 0, needleEnd = 0; // the needle's tokens [start, end): after the sentence end nearest before it
    // P(answer | context): each answer token's probability at the position before it (teacher-forced), multiplied.
    double answerProbability = 0;
    double firstTokenProbability = 0;
    bool greedy = false; // every answer token is the most probable at its position
    // Per layer: the share of the question's last position's attention on the needle's tokens, heads averaged.
    std::vector<float> attention;
};

struct NeedleResult
{
    std::string model;
    int tokens = 0; // the context's length
    int layers = 0;
    int questionPosition = 0; // the question's last token: it predicts the answer's first token and attends
    std::vector<int> answer; // the answer's token ids
    std::vector<NeedleAtDepth> depths;
};

// Why `model` cannot take the test ("" when it can): it predicts the next token with one stack of blocks.
std::string needleProblem(const Model &model);

// Why a context of `tokens` tokens does not fit `model` ("" when it does).
std::string contextTooLong(const Model &model, int tokens);

// The test's texts as token ids, encoded once for every depth and length: the document's leading special tokens (a
// BOS) and its text (without an EOS the tokenizer adds), the needle, the question and the answer. Throws atlas::Error
// for a document without tokens, or a needle, question or answer without any.
struct NeedleTokens
{
    std::vector<int> leading, body, needle, question, answer;
};
NeedleTokens needleTokens(const Tokenizer &tokenizer, const NeedleTest &test);

// The token ids of the test's context with the needle at `depth`: the document's leading special tokens (a BOS), the
// document repeated and cut to fit, the needle after the last sentence end at or before the depth (at most a twentieth
// of the document's tokens back, and 64; at the depth itself when none is that near), the question, and the answer
// but its last token. *needleStart and *needleEnd get the needle's span.
// Throws atlas::Error saying what the context cannot hold.
std::vector<int> needleContext(
    const Tokenizer &tokenizer, const NeedleTest &test, double depth, int *needleStart, int *needleEnd);
// The same, of `tokens` tokens, from the texts encoded once (the tokenizer tells where sentences end).
std::vector<int> needleContext(
    const Tokenizer &tokenizer, const NeedleTokens &pieces, int tokens, double depth, int *needleStart, int *needleEnd);

// The grid's context lengths, shortest first: tokens · k / lengths for k = 1 … lengths, rounded; {tokens} for one.
std::vector<int> needleLengths(const NeedleTest &test);

// One traced forward per depth, each within `memoryBudget` bytes: where the model allows, attention on demand and
// each block keeping only its input (engine/attentiontrace.h, engine/recompute.h), each layer's queries and keys
// recomputed for its share; else the whole matrices. `progress` counts the depths done; an empty result when `cancel`
// turns true. Throws atlas::Error with needleProblem's reason, or when the context does not fit the model.
NeedleResult needleInAHaystack(std::shared_ptr<const Model> model, const Tokenizer &tokenizer, const NeedleTest &test,
    size_t memoryBudget, AnalysisProgress *progress = nullptr, const std::atomic<bool> *cancel = nullptr);

// Kamradt's grid: needleInAHaystack at each of needleLengths(test), shortest first, the document, needle and question
// the same; `progress` counts the forward passes of them all. Empty when `cancel` turns true. Throws atlas::Error as
// needleInAHaystack does, or for a count of lengths outside 1 … kMaxNeedleLengths, before anything runs.
std::vector<NeedleResult> needleGrid(std::shared_ptr<const Model> model, const Tokenizer &tokenizer,
    const NeedleTest &test, size_t memoryBudget, AnalysisProgress *progress = nullptr,
    const std::atomic<bool> *cancel = nullptr);

} // namespace atlas
