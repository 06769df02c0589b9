#pragma once

#include "engine/input.h"
#include "model/model.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

// How large the loss's gradient is at each depth (Xiong et al. 2020, "On Layer Normalization in the Transformer
// Architecture"): one backward pass of the model on an input, and each block's ‖∂L/∂W‖ (Frobenius) over its attention
// matrices and over its feed-forward's. With the norm after each residual add (post-LN, BERT's), Xavier-initialised and
// deep, the gradients of the last blocks are the largest at initialisation, which is why post-LN needs a learning-rate
// warm-up; with the norm before each sub-layer (pre-LN, GPT-2's) they fall with depth.
namespace atlas {

struct GradientDepth
{
    std::string model; // its name
    LayerNormPlacement placement = LayerNormPlacement::Pre;
    // Fresh weights (Model::random, kInitialisationSeed) drawn this way, not the weights as trained.
    bool initialised = false;
    WeightInit init = WeightInit::Family;
    float loss = 0; // the mean cross-entropy differentiated
    int targets = 0; // the positions it counts
    // Per block: ‖∂L/∂W‖ over its attention's matrices (W_Q, W_K, W_V or their fused one, W_O), and over its
    // feed-forward's (W_1, W_2 and the gate; every expert's). Biases and norms are left out.
    std::vector<double> attention, feedForward;
};

inline constexpr uint64_t kInitialisationSeed = 1;

// The fresh twin a pass may measure instead of the model as trained: its weights drawn `init`'s way, and `blocks` of
// them (the model's own count when 0), each as wide as the model's.
struct FreshWeights
{
    WeightInit init = WeightInit::Family;
    int blocks = 0;
};
inline constexpr int kMaxFreshBlocks = 48;

// Why the model's gradients by depth cannot be measured (an encoder–decoder: two stacks of blocks), or empty.
std::string gradientDepthProblem(const Model &model);

// What the loss predicts at each position: for a model trained on a built-in task, what the task trains it to
// predict there (Task::targetsOf: "abc>cba"'s answer alone); else a causal model the next token (the last position
// none), a bidirectional one the token at the position itself (a masked-LM head's reconstruction of the tokens it
// sees); padding none (-1).
std::vector<int> gradientTargets(const ModelConfig &config, const Input &input);

// One traced forward and backward pass of `model` on `input`, the mean cross-entropy over gradientTargets; with
// `fresh`, of its fresh twin instead (Model::random, kInitialisationSeed). Throws atlas::Error when
// gradientDepthProblem is not empty, when the twin's block count is outside 1..kMaxFreshBlocks or its shape is not a
// valid model, when the pass (and the fresh weights) would need more memory than the machine has (with the figure,
// before anything is allocated), or when no position has a target.
GradientDepth gradientDepth(
    std::shared_ptr<const Model> model, const Input &input, std::optional<FreshWeights> fresh = std::nullopt);

} // namespace atlas
