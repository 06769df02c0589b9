#pragma once

#include "engine/input.h"
#include "model/model.h"
#include "tensor/tensor.h"
#include "view/viewanalysis.h"

#include <atomic>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace atlas {

// One model's next-token loss at each position of its context.
struct PositionLossCurve
{
    std::string model;
    // [t]: the mean cross-entropy of the token after the first t + 1 tokens read; NaN where nothing was scored.
    std::vector<double> loss;
    int windows = 0; // held-out windows of the model's task averaged; 0: the Input box's text, read once
    // The standard error of inContextScore: the windows are scored in kGroups groups drawn apart, and the groups'
    // scores spread (batch means); NaN for a text, or windows too few to group.
    double scoreError = std::nan("");
    // The sliding window of the model's windowed layers (0: none): how far back those layers reach.
    int slidingWindow = 0;
    int windowedLayers = 0, layers = 0;
};

// The spec's model and `baseline_model` scored on held-out windows of their own task (chars, words), and the spec's
// model on the Input box's text.
struct PositionLossAnalysis : ViewAnalysis
{
    static constexpr int kWindows = 64; // held-out windows per model
    static constexpr int kGroups = 8; // the windows' groups that give the score's error
    std::vector<PositionLossCurve> curves; // the task's curves, the spec's model first, then the text's (if any)
};

} // namespace atlas

namespace atlas::views::positionloss {

// Whether `model`'s own task is windows of a corpus read token by token (chars, words: a causal model of one stack).
bool readsTaskWindows(const Model &model);
// The model scored on `windows` held-out windows of its task (Evaluation::positionLoss), in
// PositionLossAnalysis::kGroups groups for the score's error when there are at least two windows a group; throws
// atlas::Error for a model without such a task. `scored`, when given, is called after each group and stops the
// scoring (the curve then incomplete) when it returns false.
PositionLossCurve taskLossCurve(
    std::shared_ptr<const Model> model, int windows, const std::function<bool()> &scored = {});
// The groups taskLossCurve scores `windows` in.
int lossGroups(int windows);
// The model's probabilities [rows, V] of the next token at `positions` of the run of the input.
using NextTokenRows = std::function<Tensor(const std::vector<int> &positions)>;
// The input's own next tokens scored from a run of it, a few hundred rows of `probs` at a time (no [T, V] table);
// padding positions are left NaN. Stops early, the rest NaN, when `cancel` is set.
PositionLossCurve textLossCurve(
    const Model &model, const Input &input, const NextTokenRows &probs, const std::atomic<bool> *cancel = nullptr);

// Positions gathered on a logarithmic scale: tokens read first … last (1-based, both included), the mean loss of
// the positions in it that have one.
struct PositionBin
{
    int first = 0, last = 0;
    double loss = 0;
};
// Bins [1] [2] [3] [4, 5] [6, 7] [8, 11] [12, 15] [16, 23] … (two a doubling), the last one cut at the curve's end
// or stretched to it over a tail shorter than half a bin; a bin without a scored position is left out.
std::vector<PositionBin> binned(const std::vector<double> &loss);

// The mean loss at tokens read within 10 % of `tokensRead` (at least that one position); NaN when none is scored.
double lossNear(const std::vector<double> &loss, int tokensRead);

// Olsson et al. 2022's in-context learning score, the loss at the 500th token read minus at the 50th (each averaged
// within 10 %, lossNear), for a curve of at least 550 positions; for a shorter one the same at 9/10 of its length and
// a tenth of that. `late` and `early` get the two positions.
double inContextScore(const std::vector<double> &loss, int *late, int *early);

} // namespace atlas::views::positionloss
