#pragma once

#include "engine/input.h"
#include "model/model.h"

#include <memory>
#include <string>
#include <vector>

// How large the loss's gradient is at each depth (Xiong et al. 2020, "On Layer Normalization in the Transformer
// Architecture"): one backward pass of the model on an input, and each block's ‖∂L/∂W‖ (Frobenius) over its attention
// matrices and over its feed-forward's. With the norm after each residual add (post-LN, BERT's) the gradients of the
// last blocks are the largest at initialisation, which is why post-LN needs a learning-rate warm-up; with the norm
// before each sub-layer (pre-LN, GPT-2's) they are about the same at every depth.
namespace atlas {

struct GradientDepth
{
    std::string model; // its name
    LayerNormPlacement placement = LayerNormPlacement::Pre;
    // The same shape with fresh weights (Model::random, kInitialisationSeed), not the weights as trained.
    bool initialised = false;
    float loss = 0; // the mean cross-entropy differentiated
    int targets = 0; // the positions it counts
    // Per block: ‖∂L/∂W‖ over its attention's matrices (W_Q, W_K, W_V or their fused one, W_O), and over its
    // feed-forward's (W_1, W_2 and the gate; every expert's). Biases and norms are left out.
    std::vector<double> attention, feedForward;
};

inline constexpr uint64_t kInitialisationSeed = 1;

// Why the model's gradients by depth cannot be measured (an encoder–decoder: two stacks of blocks), or empty.
std::string gradientDepthProblem(const Model &model);

// What the loss predicts at each position: a causal model the next token (the last position none), a bidirectional
// one the token at the position itself (a masked-LM head's reconstruction of the tokens it sees); padding none (-1).
std::vector<int> gradientTargets(const ModelConfig &config, const Input &input);

// One traced forward and backward pass of `model` on `input`, the mean cross-entropy over gradientTargets; with
// `initialised`, of the same shape with fresh weights instead, drawn as its family draws them (Model::random,
// kInitialisationSeed). Throws atlas::Error when gradientDepthProblem is not empty, when the pass (and the fresh
// weights) would need more memory than the machine has (with the figure, before anything is allocated), or when no
// position has a target.
GradientDepth gradientDepth(std::shared_ptr<const Model> model, const Input &input, bool initialised = false);

} // namespace atlas
