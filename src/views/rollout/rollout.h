#pragma once

#include "analysis/attentionflow.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// Attention rollout and flow through the layers traced so far (analysis/attentionflow.h), for output `position`.
struct RolloutAnalysis : ViewAnalysis
{
    std::string fusion; // the spec's rollout_heads
    int position = 0; // the output position (the spec's, −1 resolved to the last)
    int layers = 0; // the layers whose attention was traced
    Eigen::MatrixXd rollout; // [T, T] after the last of them
    std::shared_ptr<const std::vector<float>> cells; // the same, row-major in float, as the view draws it
    std::vector<double> lastLayer; // [T]: the last layer's attention of `position`, heads combined, no residual
    AttentionFlow flow; // empty when flowProblem says why
    std::string flowProblem;
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::rollout {

inline const OwnKey<std::string> kRolloutHeads {"rollout_heads", "mean"};

} // namespace atlas::views::rollout
