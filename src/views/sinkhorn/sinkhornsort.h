#pragma once

#include "model/model.h"
#include "train/evaluation.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

// Sparse Sinkhorn attention (Tay et al. 2020; model/sinkhorn.h) read on one input: the chosen layer's sort matrix S
// and one head's attention as the weight each value gets (a block's own keys plus the blocks S mixes into its sorted
// half); with the model's task held out, and a baseline's, for what the sparsity costs.
namespace atlas {

struct SinkhornPicture
{
    std::vector<int> tokens;
    int layer = 0, head = 0, block = 1, blocks = 1; // blocks: N = ⌈T / block⌉
    std::vector<float> sort; // [N × N] row-major: S_IJ, how much of block J query block I's sorted half reads
    std::vector<int> sortedTo; // per query block I: the block J with the largest S_IJ
    std::vector<float> attention; // [T × T] row-major: the head's weight of each value in each query's context
    double sharpness = 0; // the mean over query blocks of max_J S_IJ (1: a permutation; 1/N: a uniform mixture)
    double sortedShare = 0; // the head's weight on the sorted half, Σᵣ aᵣ, averaged over the queries
    double pairs = 1; // the query–key pairs scored (2 · block per query) as a share of T · T
};

// Why `model` has no Sinkhorn attention to show ("" when it has).
std::string sinkhornProblem(const Model &model);
// `model` run on `tokens` (at inference: no Gumbel noise); `layer` and `head` choose what is drawn. Throws
// atlas::Error for a model sinkhornProblem refuses, or a layer or head it does not have.
SinkhornPicture sinkhornPicture(
    std::shared_ptr<const Model> model, const std::vector<int> &tokens, int layer, int head);

// `model`'s held-out score on its task (as heldOutScore) with every layer's sort switched off (Input::sortSwitchedOff:
// each block's sorted half is itself): what the learned sort adds is the difference.
HeldOutScore sortSwitchedOffScore(std::shared_ptr<const Model> model, int examples);

} // namespace atlas
