#pragma once

#include "model/model.h"
#include "trace/names.h"
#include "trace/trace.h"

#include <Eigen/Dense>

#include <atomic>
#include <string>
#include <vector>

// Attention rollout and attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): how
// much each input token reaches a position after all the layers, not within one. Each layer's attention is combined
// over heads, and the residual connection is added as an identity: Â = (Ā + I) / rowsum(Ā + I), which is (Ā + I) / 2
// for rows that sum to 1. Rollout multiplies these: R₁ = Â₁, R_l = Â_l R_{l−1}. Flow treats the layers as a graph
// whose edges from position p of layer l to position q of layer l − 1 carry Â_l[p, q], and takes the maximum flow
// from an output node to each input token, normalised over the inputs as the authors' code does.
namespace atlas {

// How a layer's heads are combined before the residual is added: their mean (the paper), or the largest or
// smallest weight of any head on each pair (later implementations; rows are renormalised to sum to 1).
enum class HeadFusion { Mean, Max, Min };
HeadFusion headFusionFromName(const std::string &name); // "mean" | "max" | "min"; throws atlas::Error otherwise
const char *headFusionName(HeadFusion fusion);

// Ā, the heads combined, for each layer of the site's stack whose probabilities are traced, in order (a partial
// trace: the first layers); and Â, the same with the residual added. With `model` (and the input's padding), a layer
// a one-stack trace keeps on demand (engine/attentiontrace.h) is read through its readout, a head at a time.
std::vector<Eigen::MatrixXd> combinedAttention(const Trace &trace, const names::AttentionSite &site, int layers,
    HeadFusion fusion, const Model *model = nullptr, const std::vector<int> &padding = {});
Eigen::MatrixXd withResidual(const Eigen::MatrixXd &combined); // (Ā + I) / rowsum(Ā + I)
std::vector<Eigen::MatrixXd> augmentedAttention(
    const Trace &trace, const names::AttentionSite &site, int layers, HeadFusion fusion);
// R_l after each layer: rollout[l] = Â_l … Â_1 ([T, T]: row = position, column = input token).
std::vector<Eigen::MatrixXd> attentionRollout(const std::vector<Eigen::MatrixXd> &augmented);

// Exact maximum flow is run for inputs up to these sizes (the flow of one output takes T max-flows over L·T² edges).
constexpr int kMaxFlowTokens = 128;
constexpr long kMaxFlowEdges = 200000;
// Why the flow is not computed for `layers` layers of `tokens` tokens ("" when it is).
std::string attentionFlowProblem(int layers, int tokens);

struct AttentionFlow
{
    std::vector<double> raw; // [T]: the maximum flow from output `position` after the last layer to each input token
    std::vector<double> normalised; // raw / Σ raw, as the authors' compute_flows
};
// The flow into `output` (a position of the last layer) from every input token. Throws atlas::Error over the limits.
AttentionFlow attentionFlow(
    const std::vector<Eigen::MatrixXd> &augmented, int output, const std::atomic<bool> *cancel = nullptr);

} // namespace atlas
