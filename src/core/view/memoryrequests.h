#pragma once

#include "memory/memorysweep.h"
#include "view/memoryanalysis.h"

#include <atomic>
#include <string>
#include <vector>

// Internal to the core: what the memory views' analysis requests share. They train real steps of a model: one step
// under every strategy (the timeline and the computation graph), the depth sweep, checkpointing every k, and reversible
// blocks' rebuild error.
namespace atlas::analysis {

// One training step of the input under every memory strategy, shared by the timeline and the computation graph.
AnalysisRequest timelineRequest(const ViewSpec &spec, const AnalysisContext &context);

// The common checks: a model that ran, 2 … maxTokens tokens of input ("" when they hold).
std::string trainingInputProblem(const AnalysisContext &c, int maxTokens, const std::string &what);
// A sweep's settings checked before it runs: the memory options, the input within a learned position table.
std::string sweepProblem(const ViewSpec &spec, const AnalysisContext &c, int maxTokens, const std::string &what);
// The key of a model's shape (not its weights: the sweeps train random weights of that shape) and the input's length.
std::string shapeKey(const ModelConfig &c, int tokens);
// A training step's work, about: the forward, the backward (twice the forward), a recomputed forward. `steps` of them
// on the model the sweep measures at `layers` layers (configAtDepth).
double trainingFlops(const ModelConfig &shape, int layers, int tokens, double steps);
// The plain step's memory at `layers` layers (the largest of the strategies').
double trainingBytes(const ModelConfig &shape, int layers, int tokens);
// Depths 1, 2, 4 … below `maxDepth`, and maxDepth.
std::vector<int> sweptDepths(int maxDepth);
// How a sweep measures each point; `progress` counts the points measured.
SweepSettings sweepSettings(
    const ViewSpec &spec, int tokens, bool checkOnly, const std::atomic<bool> &cancel, AnalysisProgress &progress);

} // namespace atlas::analysis
