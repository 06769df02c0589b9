#pragma once

#include "analysis/logitlens.h"

#include <string>
#include <vector>

// Early exit: a token stops at the first layer that is sure enough of its prediction, and the layers after it are
// saved. Each layer's prediction is the logit lens's (its stream read through the model's own final norm and output
// head); a model trained for early exit has a classifier per layer instead, which the lens stands in for.
//   - Confidence (as in DeeBERT and the lecture): exit after block i when the top probability p_i ≥ θ.
//   - Patience (PABEE, Zhou et al. 2020, eq. 4): cnt_i = cnt_{i−1} + 1 when argmax_i = argmax_{i−1}, else 0
//     (cnt_1 = 0); exit after block i when cnt_i = t, i.e. when the prediction has stayed unchanged t times in a row.
// A token no rule stops runs every block. Exits are counted from block 1: the embedding alone is no layer's work.
namespace atlas {

enum class ExitRule { Confidence, Patience };

struct EarlyExitPoint
{
    double setting = 0; // θ, or t
    double meanLayers = 0; // blocks run per token, averaged over the positions
    double agreement = 0; // share of the positions whose exit prediction is the whole model's
    double accuracy = -1; // share of the scored positions whose exit prediction is the next input token; −1 none
};

struct EarlyExit
{
    int layers = 0, tokens = 0;
    std::vector<int> prediction; // [layers, T]: row i−1 the most probable token after block i
    std::vector<float> confidence; // [layers, T]: its probability
    std::vector<int> target; // [T]: the next input token (−1 at the last position, and for a model that is not causal)
    double fullAccuracy = -1; // the whole model's accuracy on the scored positions; −1 when none is scored
    std::vector<EarlyExitPoint> confidenceCurve; // θ = 0.05, 0.10 … 1.00
    std::vector<EarlyExitPoint> patienceCurve; // t = 1 … layers − 1

    int predictionAt(int block, int t) const { return prediction[size_t(block - 1) * size_t(tokens) + size_t(t)]; }
    float confidenceAt(int block, int t) const { return confidence[size_t(block - 1) * size_t(tokens) + size_t(t)]; }
    // The block after which each position exits under `rule` at `setting` (θ, or t), 1 … layers.
    std::vector<int> exitBlocks(ExitRule rule, double setting) const;
    EarlyExitPoint measure(ExitRule rule, double setting) const;
};

// Why the lens cannot give every block's prediction yet (its reason, or a stream not traced yet); "" when it can.
std::string earlyExitProblem(const ModelConfig &config, const Program &program, const Trace &trace);
// Each block's prediction and confidence from `lens` (computed on the whole run of a model of `config`), scored
// against the next input token when the model is a causal decoder of one stack. Throws atlas::Error when the lens
// lacks a block's row.
EarlyExit earlyExit(const LogitLens &lens, const ModelConfig &config, const std::vector<int> &tokens);

ExitRule parseExitRule(const std::string &text, const std::string &source); // "confidence" | "patience"

} // namespace atlas
