#include "memory/memorytimeline.h"

#include "util/error.h"

#include <algorithm>

namespace atlas {

namespace {

TimelineStrategy fromMeasurement(const TrainingStepMemory &m, const std::string &label)
{
    TimelineStrategy s;
    s.options = m.options;
    s.label = label;
    const MemoryRecording &r = m.recording;
    s.ops = r.ops;
    s.events = r.events;
    CategoryBytes live {};
    for (const MemoryEvent &e : r.events) {
        live[size_t(e.category)] += e.bytes;
        s.x.push_back(double(e.op));
        for (int c = 0; c < kMemoryCategories; ++c)
            s.live[size_t(c)].push_back(double(live[size_t(c)]));
    }
    for (int i = 0; i < int(r.ops.size()); ++i) {
        const MemoryPhase phase = r.ops[size_t(i)].phase;
        if (s.phases.empty() || s.phases.back().phase != phase)
            s.phases.push_back({phase, i, i + 1});
        else
            s.phases.back().endOp = i + 1;
    }
    s.peakPoint = r.peakEvent(false);
    s.peakActivationPoint = r.peakEvent(true);
    s.peakLive = r.liveAt(s.peakPoint);
    s.peakBytes = m.peakBytes;
    s.peakActivationBytes = m.peakActivationBytes;
    s.predictedActivationBytes = m.predictedActivationBytes;
    s.stepMs = m.recordedMs;
    s.peakResidentBytes = peakResidentBytes();
    return s;
}

std::string labelOf(const MemoryOptions &o, int layers)
{
    std::string label = memoryStrategyName(o.strategy);
    if (o.strategy == MemoryStrategy::Checkpoint)
        label += " (k = " + std::to_string(checkpointInterval(o, layers)) + ")";
    return label;
}

} // namespace

int TimelineStrategy::pointAtOp(int op) const
{
    const auto it = std::upper_bound(x.begin(), x.end(), double(op));
    return int(it - x.begin()) - 1;
}

int64_t TimelineStrategy::activationBytesAt(int point) const
{
    double total = 0;
    for (int c = 0; c < kMemoryCategories; ++c)
        if (point >= 0 && isActivation(MemoryCategory(c)))
            total += live[size_t(c)][size_t(point)];
    return int64_t(total);
}

CategoryBytes TimelineStrategy::liveAt(int point) const
{
    CategoryBytes bytes {};
    for (int c = 0; c < kMemoryCategories && point >= 0; ++c)
        bytes[size_t(c)] = int64_t(live[size_t(c)][size_t(point)]);
    return bytes;
}

int64_t TimelineStrategy::liveBytesAt(int point) const
{
    int64_t total = 0;
    for (int64_t b : liveAt(point))
        total += b;
    return total;
}

TrainingSequence nextTokenSequence(const Input &input)
{
    TrainingSequence s {input, {}};
    for (size_t t = 0; t < input.tokens.size(); ++t)
        s.targets.push_back(t + 1 < input.tokens.size() ? input.tokens[t + 1] : -1);
    return s;
}

MemoryTimeline memoryTimeline(const Model &model, const TrainingSequence &sequence, int checkpointEvery, int ffnChunks,
    const std::atomic<bool> *cancel)
{
    MemoryTimeline timeline;
    timeline.tokens = int(sequence.input.tokens.size());
    timeline.layers = model.config.layers;
    if (model.config.isEncoderDecoder()) {
        timeline.sourceTokens = int(sequence.input.source.size());
        timeline.encoderLayers = model.config.encoderLayers;
    }
    if (timeline.tokens < 2)
        throw Error("a training step needs at least 2 tokens: each position learns the next one");
    for (MemoryStrategy strategy : {MemoryStrategy::Plain, MemoryStrategy::Checkpoint, MemoryStrategy::Reversible}) {
        if (cancel && *cancel)
            break;
        MemoryOptions o;
        o.strategy = strategy;
        o.checkpointEvery = strategy == MemoryStrategy::Checkpoint ? checkpointEvery : 0;
        o.ffnChunks = ffnChunks;
        if (strategy == MemoryStrategy::Checkpoint) {
            MemoryOptionFields fields;
            fields.checkpointEvery = "checkpoint_every";
            fields.ffnChunks = "ffn_chunks";
            validateMemoryOptions(o, model.config, timeline.tokens, fields);
        }
        if (strategy == MemoryStrategy::Reversible && !model.config.reversible) {
            TimelineStrategy s;
            s.options = o;
            s.label = "reversible";
            s.problem
                = "This model has standard blocks: a reversible model (such as the built-in reverse-rev) rebuilds "
                  "its activations instead of keeping them";
            timeline.strategies.push_back(std::move(s));
            continue;
        }
        Model copy = model; // the step updates the parameters
        AdamW optimizer;
        const std::vector<TrainingSequence> sequences = {sequence};
        timeTrainingStep(copy, sequences, o, optimizer); // moments allocated, parameters no longer shared
        const TrainingStepMemory m = measureTrainingStep(copy, sequences, o, optimizer);
        timeline.strategies.push_back(fromMeasurement(m, labelOf(o, model.config.layers)));
        timeline.maxBytes = std::max(timeline.maxBytes, m.peakBytes);
        timeline.maxActivationBytes = std::max(timeline.maxActivationBytes, m.peakActivationBytes);
        timeline.maxOps = std::max(timeline.maxOps, int(m.recording.ops.size()));
    }
    return timeline;
}

} // namespace atlas
