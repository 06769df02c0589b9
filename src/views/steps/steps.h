#pragma once

#include "analysis/layerdrop.h"
#include "view/viewanalysis.h"

#include <string>
#include <vector>

namespace atlas {

// One shared model (a Universal Transformer's block, ModelConfig::shared) applied 1 … S times.
struct StepCurve
{
    StepSweep sweep; // its task's held-out accuracy at each step count
    // On the input, applying the block S times: [n − 1] is the mean over tokens of ‖X_n − X_{n−1}‖ / ‖X_{n−1}‖, X_n
    // the residual stream after the n-th application (X_0 the embeddings): how far each application moves a token.
    std::vector<double> change;
};

// The spec's model and `baseline_model`, each a shared model, with their block applied 1 … `steps` times.
struct StepsAnalysis : ViewAnalysis
{
    static constexpr int kExamples = 64; // held-out examples per step count
    int steps = 0;
    std::vector<StepCurve> curves; // the spec's model first
};

} // namespace atlas

namespace atlas::views::steps {

// S for a model trained with `trained` steps: the spec's `depth`, or twice the trained count when it is 0, at most
// Model::kMaxSharedSteps.
int stepsOf(int depth, int trained);

} // namespace atlas::views::steps
