#pragma once

#include "model/model.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

// Lost in the middle (Liu et al. 2023), measured on a key–value retrieval model (train/task.h, "retrieval"): how often
// it answers right against where the asked pair stands in the context, and where its answer position looks.
namespace atlas {

struct RetrievalByPosition
{
    std::string model;
    int examples = 0; // held-out examples per position
    // Per asked position p = 0 … kRetrievalPairs − 1 (0 = the first pair):
    std::vector<float> exact; // the whole value right
    std::vector<float> digits; // each of its digits right (teacher-forced)
    // attention[layer][p][q]: the share of the answer position's attention (the asked key in the question, averaged
    // over heads and examples) on pair q's eight characters, when pair p is asked. The rest lies on the question.
    std::vector<std::vector<std::vector<float>>> attention;

    // Exact accuracy at the first pair, over the middle pairs (a quarter to three quarters through the context:
    // positions 3 … 6 of 10) and at the last pair: the three numbers of the U.
    float first() const { return exact.front(); }
    float middle() const;
    float last() const { return exact.back(); }
};

// Why `model` cannot be measured ("" when it can): it was trained on the retrieval task (atlas_task) and has one stack.
std::string retrievalProblem(const Model &model);
// Held-out examples at every position, both cores working; an empty result when `cancel` turns true. Throws
// atlas::Error with retrievalProblem's reason.
RetrievalByPosition retrievalByPosition(
    std::shared_ptr<const Model> model, int examples, const std::atomic<bool> *cancel = nullptr);

} // namespace atlas
