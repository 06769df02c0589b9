#pragma once

// Internal to the core: activation patching (analysis/activationpatching.cpp) and circuit analysis
// (analysis/circuits.cpp) run the corrupted input through this.

#include "analysis/activationpatching.h"
#include "engine/engine.h"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace atlas {

// Tensor name → what to write into it as soon as the operation making it has run.
using TraceEdits = std::map<std::string, std::function<void(Tensor &)>>;

// The corrupted forward pass, stepped by hand so that the noise (on X₀) and the edits are written into its trace as
// soon as the operation that makes them has run.
class CorruptedRun
{
public:
    CorruptedRun(std::shared_ptr<const Model> model, const Input &clean, const Corruption &corruption);

    Engine &engine() { return m_engine; }
    const Engine &engine() const { return m_engine; }
    const Tensor *noised() const { return m_noise.empty() ? nullptr : &m_noise; }

    // Runs from `cursor` through the last block with `edits` applied as their tensors are made. The output head is
    // left to the metric, which needs one position's logits, not every position's; `throughHead` runs it too (the
    // backward pass reads the logits).
    void runFrom(int cursor, const TraceEdits &edits, bool throughHead = false);

private:
    Engine m_engine;
    Tensor m_noise;
};

// The metric from the output head applied to the metric's position alone (the same arithmetic for every run, so a
// patch that changes nothing gives the corrupted metric exactly).
double metricOf(const Engine &run, const PatchMetric &metric, int position);
// The metric's position, the last when it is −1.
int resolvedPosition(const PatchMetric &metric, size_t tokens);

} // namespace atlas
