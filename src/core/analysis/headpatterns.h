#pragma once

#include "model/model.h"
#include "trace/names.h"
#include "train/task.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace atlas {

// A hypothesis about what a head does: for some queries of an example, the keys it should attend to.
struct HeadPattern
{
    std::string name; // "mirror", "previous token", "induction" …
    std::string description; // in words a student understands
    // The keys query `position` of `example` should attend to; empty = this query is not part of the test.
    std::function<std::vector<int>(const Example &example, int position)> keys;
    // Which attention it is about: self-attention ("attn.probs"), or an encoder–decoder's cross-attention
    // ("cross.probs" of the decoder, whose keys are source positions).
    names::Stack stack = names::kOnlyStack;
    std::string attention = "attn.probs";
};

// The patterns worth testing on a task's examples (every task has "previous token"; reverse has "mirror",
// copy "induction", sort "next in order", parens "brackets" and "first dip", chars "word start", mlm "next token" and
// "around the mask"; seq2seq-sort's cross-attention "source letter").
std::vector<HeadPattern> headPatterns(const std::string &task);

// For every layer and head, the attention mass that the pattern's queries put on the pattern's keys, averaged
// over the queries of `examples` held-out examples: result[layer][head] in [0, 1].
std::vector<std::vector<double>> patternMass(std::shared_ptr<const Model> model, const Task &task,
    const HeadPattern &pattern, int examples, uint64_t seed = 777);

// Heads can share a job, each taking some positions: for every pattern query, the largest mass any head of
// `layer` puts on the pattern's keys, averaged over the queries. Near 1 means that at every position some head
// of the layer does exactly what the pattern says.
double patternCoverage(std::shared_ptr<const Model> model, const Task &task, const HeadPattern &pattern, int layer,
    int examples, uint64_t seed = 777);

} // namespace atlas
