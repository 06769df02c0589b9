#pragma once

#include "memory/trainingstepmemory.h"
#include "model/model.h"
#include "train/memorystrategy.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

// Memory strategies compared over models of one shape: peak against depth (view "memory-depth", `memory
// --sweep-depth`) and checkpointing's k against step time (view "memory-tradeoff"). Each point is a real training
// step of random tokens on a model of the shape with random weights (GPT-2's initialisation, seed 1): its peak is
// recorded (trace/allocationrecorder.h) and its time measured without the recorder.
namespace atlas {

// `shape` with `layers` blocks, reversible or not: an encoder–decoder gets `layers` blocks in each stack.
// Mixture-of-experts layers past the new depth go; every other setting (heads, widths, d_ff, positions, vocabulary,
// context) stays. Not validated: the estimates of a depth read it as it is.
ModelConfig configAtDepth(const ModelConfig &shape, int layers, bool reversible);
// A model of configAtDepth(shape, layers, reversible), validated, with random weights.
Model modelAtDepth(const ModelConfig &shape, int layers, bool reversible);

// Why a model of this shape cannot have reversible blocks (an encoder–decoder, a Llama, BERT or T5 layout, post-LN
// blocks …), or empty when it can. The sweeps leave the reversible strategy out of such shapes.
std::string reversibleProblem(const ModelConfig &shape);

// `batch` sequences of `tokens` random ids (a fixed seed), each id's successor its target; an encoder–decoder's
// also a source of `tokens` random ids.
std::vector<TrainingSequence> randomSequences(const ModelConfig &config, int tokens, int batch);

struct StepTiming
{
    TrainingStepMemory memory; // the last recorded step
    double stepMs = 0; // median of the unrecorded steps
    double stepMsLow = 0, stepMsHigh = 0; // their first and third quartiles: the middle half of the times
    double recordedStepMs = 0; // median of the recorded steps (the recorder's cost is the difference)
};

// One warm-up step (AdamW's moments, parameters no longer shared), then rounds of an unrecorded and a recorded step,
// alternating so that both meet the same machine: `repeat` rounds, and more while the unrecorded steps have taken
// less than `minimumMs` in all (at most 50: a fast step's median needs more of them). repeat 0: one recorded step,
// stepMs its time.
StepTiming measureStep(Model &model, const std::vector<TrainingSequence> &sequences, const MemoryOptions &options,
    int repeat, double minimumMs = 0);

struct SweepPoint
{
    int depth = 0;
    MemoryStrategy strategy = MemoryStrategy::Plain;
    int checkpointEvery = 0; // the k used (checkpointing), else 0
    int64_t peakBytes = 0, peakActivationBytes = 0, predictedActivationBytes = 0;
    double stepMs = 0, recordedStepMs = 0;
    double stepMsLow = 0, stepMsHigh = 0; // the unrecorded steps' first and third quartiles (StepTiming)
};

struct SweepSettings
{
    int tokens = 64, batch = 1, ffnChunks = 1, repeat = 3;
    double minimumMs = 0; // per point, at least this long timing unrecorded steps (measureStep)
    const std::atomic<bool> *cancel = nullptr; // polled between points: a cancelled sweep returns what it has
    std::function<void(const SweepPoint &)> measured; // told of each point as it is measured (the CLI prints)
};

// Every depth under plain, checkpointing (k = ⌈√L⌉) and reversible blocks (where the shape allows them), in that
// order. Throws atlas::Error for
// a depth below 1 or settings the shape cannot train (chunks outside 1 … T, T past a learned table).
std::vector<SweepPoint> sweepDepths(const ModelConfig &shape, const std::vector<int> &depths, const SweepSettings &s);

// At `depth`: plain, checkpointing for every k = 1 … depth, and reversible blocks (where the shape allows them).
std::vector<SweepPoint> sweepCheckpointIntervals(const ModelConfig &shape, int depth, const SweepSettings &s);

// `of`'s step time over `to`'s: the ratio of their medians, and its least and most over the middle halves of their
// steps (first to third quartile). `overlaps`: the two middle halves overlap, so this machine's timing cannot tell the
// two times apart.
struct TimeRatio
{
    double median = 0, low = 0, high = 0;
    bool overlaps = false;
};
TimeRatio timeRatio(const SweepPoint &of, const SweepPoint &to);

// How a strategy's activation peak grows with depth L, as the lectures teach: plain O(L), checkpointing O(√L),
// reversible O(1). growth(L) is L, √L or 0.
double depthGrowth(MemoryStrategy strategy, double layers);

// peak ≈ constant + slope·growth(L), least squares over a strategy's points (reversible: the mean, slope 0).
struct DepthFit
{
    double constant = 0, slope = 0;
    double at(MemoryStrategy strategy, double layers) const { return constant + slope * depthGrowth(strategy, layers); }
};
DepthFit fitDepth(const std::vector<SweepPoint> &points, MemoryStrategy strategy);

} // namespace atlas
