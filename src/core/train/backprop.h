#pragma once

#include "engine/input.h"
#include "model/model.h"
#include "trace/trace.h"

#include <map>
#include <string>
#include <vector>

namespace atlas {

// The loss of one input and its gradient with respect to every parameter; or, after accumulateGradients over
// several inputs, the sums of their losses and of their gradients.
struct Gradients
{
    float loss = 0.0f; // mean cross-entropy over the positions whose target is not -1
    // Σ over mixture-of-experts layers of α·aux_loss + β·z_loss (ModelConfig's coefficients): differentiated with
    // the loss, reported apart from it.
    float routerLoss = 0.0f;
    // Adaptive span's penalty, Σ over layers of λ · mean_h z_h (ModelConfig::spanPenalty): likewise apart.
    float spanLoss = 0.0f;
    // Adaptive computation time (ModelConfig::act): the mean over tokens of the ponder time N + R, whose cost
    // τ · ponderTime is differentiated with the loss and left out of it.
    float ponderTime = 0.0f;
    std::map<std::string, Tensor> grads; // d loss / d parameter, under Model::parameters()'s names and shapes

    // Sets the loss and every gradient to 0, keeping the buffers (a training loop reuses them every step:
    // zeroing 0.5 GB in place is several times cheaper than allocating it afresh).
    void zero();
};

// The gradients in the layout `model`'s checkpoint keeps its parameters in, as PyTorch's .grad holds them: GPT-2's
// Conv1D matrices as [in, out] (Model::conv1dParameterNames), every other one as it is.
std::map<std::string, Tensor> gradientsAsStored(const Model &model, const Gradients &g);

// Backpropagation through the whole model, reading the forward activations from `trace`, the Trace of a
// traced Engine run to the end on `model` and `input` (an untraced run has freed them: atlas::Error).
// targets are one per input position: the token the model should predict there, or -1 to leave the position
// out of the loss (padding, the last token). The loss is their mean cross-entropy, as
// torch.nn.functional.cross_entropy(logits, targets, ignore_index=-1). Throws atlas::Error for targets of the
// wrong length, ids outside the vocabulary, or no counted target at all.
Gradients backward(const Model &model, const Input &input, const Trace &trace, const std::vector<int> &targets);

// The same, adding this input's loss and gradients into `into` (zero it first; a missing gradient is
// created as zeros). Accumulating several inputs before an optimiser step makes a larger batch.
void accumulateGradients(
    Gradients &into, const Model &model, const Input &input, const Trace &trace, const std::vector<int> &targets);

// The largest max |a − b| / max |b| over a's parameters (each one in b, of the same shape). With a floor f, max |b|
// counts as at least f times the largest |b| of any parameter: a gradient that is 0 in exact arithmetic (a key
// bias's, as softmax ignores a shift of a row's scores) holds rounding noise, measured against the model's gradients.
// `worst`, when given, receives the parameter that differs most.
double gradientDifference(const Gradients &a, const Gradients &b, std::string *worst = nullptr, double floor = 0);

} // namespace atlas
