#pragma once

#include "memory/trainingstepmemory.h"
#include "model/model.h"
#include "trace/allocationrecorder.h"
#include "train/memorystrategy.h"

#include <array>
#include <atomic>
#include <string>
#include <vector>

// The memory timeline view's numbers (view kind "memory-timeline"): one real training step of the spec's input under
// plain backprop, checkpointing and (on a reversible model) reversible blocks, recorded, as live bytes per category
// after every allocation and free, against the op the step was running. The view stacks the categories and draws the
// three strategies on shared axes; it computes nothing.
namespace atlas {

struct TimelinePhase
{
    MemoryPhase phase = MemoryPhase::Forward;
    int firstOp = 0, endOp = 0; // ops [firstOp, endOp) of the recording ran in this phase
};

struct TimelineStrategy
{
    MemoryOptions options;
    std::string label; // "plain", "checkpoint (k = 2)", "reversible"
    std::string problem; // why this strategy did not run (a model with standard blocks cannot be reversible)
    std::vector<MemoryOp> ops; // the recording's ops: names, phases, layers; the x axis runs over their indices
    std::vector<MemoryEvent> events; // the recording's allocations and frees: a point each
    std::vector<double> x; // per point (one per allocation or free): the index of its op
    std::array<std::vector<double>, kMemoryCategories> live; // per point: live bytes of each category after it
    std::vector<TimelinePhase> phases; // consecutive runs of ops in one phase
    int peakPoint = -1; // the point with the most live bytes (the first, on ties)
    int peakActivationPoint = -1; // the point with the most live activation bytes
    CategoryBytes peakLive {}; // what was live there, by category
    int64_t peakBytes = 0;
    int64_t peakActivationBytes = 0; // the highest activation bytes anywhere in the step
    int64_t predictedActivationBytes = 0; // predictedActivationBytes() for the shape and strategy
    double stepMs = 0; // the recorded step's wall time
    int64_t peakResidentBytes = 0; // the process's peak RSS after the step (all it ever held, not this step alone)

    // The last point at or before op `op` (-1 when the step had no event by then).
    int pointAtOp(int op) const;
    // Live activation bytes (stored, recomputed, workspace) after point `point`; 0 before the first (point < 0).
    int64_t activationBytesAt(int point) const;
    // Live bytes of every category after `point` (none before the first), and their sum.
    CategoryBytes liveAt(int point) const;
    int64_t liveBytesAt(int point) const;
};

struct MemoryTimeline
{
    std::vector<TimelineStrategy> strategies; // plain, checkpoint, reversible
    int tokens = 0, layers = 0;
    int sourceTokens = 0, encoderLayers = 0; // an encoder–decoder's encoder (0 for a model of one stack)
    int64_t maxBytes = 0; // the highest peak of them all (the shared y axis)
    int64_t maxActivationBytes = 0; // the highest activation peak of them all
    int maxOps = 0; // the longest step in ops (the shared x axis)
};

// Runs one training step of `sequence` on a copy of `model` (after one unrecorded step, so AdamW's moments exist
// and are adopted as optimizer state) under each strategy, with checkpoints every `checkpointEvery` blocks (0: ⌈√L⌉)
// and `ffnChunks` feed-forward chunks. Reversible needs a reversible model: otherwise its entry has a problem and
// nothing else. Polls `cancel` between strategies. Throws atlas::Error for options the model cannot use (a k
// outside 1..L, chunks outside 1..T) or targets with nothing to learn.
MemoryTimeline memoryTimeline(const Model &model, const TrainingSequence &sequence, int checkpointEvery, int ffnChunks,
    const std::atomic<bool> *cancel = nullptr);

// The sequence a view trains on: the input, each position's target the next token, the last one not counted.
TrainingSequence nextTokenSequence(const Input &input);

} // namespace atlas
