#pragma once

#include "view/viewanalysis.h"
#include "view/viewspec.h"

#include <string>
#include <utility>
#include <vector>

namespace atlas {

// Adaptive computation time (ModelConfig::act) as the run traced it: each token's halting after every block, the
// weights ln_f read the blocks' outputs with, where it halted, and how surprised the model was by the next token.
struct HaltingAnalysis : ViewAnalysis
{
    int layers = 0, tokens = 0; // the blocks run (a shared block's applications, `max_steps` when set) and the tokens
    int trained = 0; // the blocks the model has, the count a shared block was trained with
    double epsilon = 0;
    bool sharedBlock = false; // one block's weights at every step: the Universal Transformer (ModelConfig::shared)
    std::vector<float> halting, weights; // [T × L], token-major: h_n and p_n of token t at t·L + n − 1
    std::vector<int> steps; // N per token
    std::vector<float> ponder; // N + R per token
    // −log p(next token) per position, the model's loss there; NaN at the last position and in a model that does not
    // predict the next token.
    std::vector<double> surprise;
    // A byte-level model's characters by kind (' ', a vowel, another letter, anything else): their mean N, NaN for a
    // kind the input lacks; empty for a model of any other tokenizer.
    std::vector<std::pair<std::string, double>> stepsByCharacter;

    double meanPonder() const;
    // The mean ponder time of the positions whose surprise is in the highest (`hardest`) or lowest quarter; NaN
    // without four scored positions.
    double quarterPonder(bool hardest) const;
    // Pearson's correlation of surprise and ponder time over the scored positions; NaN without three.
    double correlation() const;
};

} // namespace atlas

// This view's own spec key (documented by its descriptor's `keys`).
namespace atlas::views::halting {

// A shared block with halting applied at most this many times; 0 = the count the model was trained with.
inline const OwnKey<int> kMaxSteps {"max_steps", 0};

} // namespace atlas::views::halting
