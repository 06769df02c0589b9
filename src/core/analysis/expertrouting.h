#pragma once

#include "engine/input.h"
#include "model/model.h"

#include <atomic>
#include <string>
#include <vector>

namespace atlas {

// How one mixture-of-experts layer routed an input (the Experts view; docs/models.md, "Mixture of experts"): the
// model run on the tokens at a chosen capacity factor, the layer's router read back from the trace, and the
// Switch paper's quantities derived from it.
struct ExpertRouting
{
    int layer = 0;
    int experts = 0, topK = 1, tokens = 0;
    double capacityFactor = 0; // the factor routed with
    int capacity = 0; // ⌈factor · T / E⌉; T for a dropless router
    // Mixtral's router: no capacity (nothing is dropped), the chosen probabilities renormalised (ModelConfig).
    bool dropless = false;
    std::vector<int> moeLayers; // every layer of the model with experts
    std::vector<std::vector<float>> probs; // [T][E] the router's softmax
    std::vector<std::vector<int>> choice; // [T][K] the expert of each choice, −1 when dropped
    std::vector<std::vector<float>> gate; // [T][K] its router probability (0 when dropped)
    std::vector<std::vector<int>> preferred; // [T][K] each token's top-k experts, whether or not they took it
    // Per expert, in the order they arrived: the tokens it took (its buffer, at most `capacity`), then the ones
    // it turned away.
    std::vector<std::vector<int>> buffer, overflow;
    std::vector<std::vector<int>> bufferRank; // the rank of each buffer entry's choice (0: the token's first choice)
    std::vector<float> fraction; // fᵢ: the share of tokens whose top-1 is expert i (before drops)
    std::vector<float> meanProb; // Pᵢ: the mean router probability of expert i
    float auxLoss = 0; // E · Σ fᵢ Pᵢ, as the trace's layer.{i}.router.aux_loss
    float zLoss = 0; // as layer.{i}.router.z_loss
    int droppedTokens = 0; // tokens no expert took (the residual alone carries them)
    // Expert parallelism as the lecture draws it: `devices` devices, experts in contiguous blocks (expert e on
    // device e·devices/E), the sequence split evenly (token t starts on device t·devices/T); sent[a][b] counts the
    // kept choices dispatched from device a to device b (the results come back the same way).
    int devices = 1;
    std::vector<int> deviceOfExpert, deviceOfToken;
    std::vector<std::vector<int>> sent;
    int dispatched = 0; // the sum of sent: every kept choice
    int crossing = 0; // of them, those sent to another device (off sent's diagonal)
};

// Why layer `layer` of a model with `config` has no routing to show (no experts at all, or a dense layer: naming the
// layers with experts); empty when it has.
std::string expertLayerProblem(const ModelConfig &config, int layer);

// Runs `model` on `input` with `capacityFactor` and `topK` (0: the model's own) and reads layer `layer`'s routing,
// spread over `devices` devices (clamped to 1..E). Throws atlas::Error for a model without experts or a dense layer
// (naming the layers with experts). Returns early, incomplete, when `cancel` is set.
ExpertRouting expertRouting(const Model &model, const Input &input, int layer, double capacityFactor, int topK,
    int devices, const std::atomic<bool> *cancel = nullptr);

} // namespace atlas
