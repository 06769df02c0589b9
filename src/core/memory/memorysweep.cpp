#include "memory/memorysweep.h"

#include "train/adamw.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace atlas {

namespace {

// The value a fraction `q` of the way through the sorted values (0.5: the median; nearest rank, no interpolation).
double quantile(std::vector<double> values, double q)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1, size_t(q * double(values.size())))];
}

double median(const std::vector<double> &values)
{
    return quantile(values, 0.5);
}

SweepPoint pointOf(int depth, const MemoryOptions &o, const StepTiming &t)
{
    SweepPoint p;
    p.depth = depth;
    p.strategy = o.strategy;
    p.checkpointEvery = o.strategy == MemoryStrategy::Checkpoint ? checkpointInterval(o, depth) : 0;
    p.peakBytes = t.memory.peakBytes;
    p.peakActivationBytes = t.memory.peakActivationBytes;
    p.predictedActivationBytes = t.memory.predictedActivationBytes;
    p.stepMs = t.stepMs;
    p.stepMsLow = t.stepMsLow;
    p.stepMsHigh = t.stepMsHigh;
    p.recordedStepMs = t.recordedStepMs;
    return p;
}

bool cancelled(const SweepSettings &s)
{
    return s.cancel && s.cancel->load();
}

// One point: a fresh model of the shape at `depth`, trained one measured step under `o`.
SweepPoint measurePoint(const ModelConfig &shape, int depth, const MemoryOptions &o, const SweepSettings &s)
{
    Model model = modelAtDepth(shape, depth, o.strategy == MemoryStrategy::Reversible);
    validateMemoryOptions(o, model.config, s.tokens);
    const StepTiming t = measureStep(model, randomSequences(model.config, s.tokens, s.batch), o, s.repeat, s.minimumMs);
    const SweepPoint p = pointOf(depth, o, t);
    if (s.measured)
        s.measured(p);
    return p;
}

MemoryOptions optionsFor(MemoryStrategy strategy, int checkpointEvery, int ffnChunks)
{
    MemoryOptions o;
    o.strategy = strategy;
    o.checkpointEvery = checkpointEvery;
    o.ffnChunks = ffnChunks;
    return o;
}

} // namespace

ModelConfig configAtDepth(const ModelConfig &shape, int layers, bool reversible)
{
    ModelConfig c = shape;
    c.layers = layers;
    if (c.isEncoderDecoder())
        c.encoderLayers = layers;
    c.reversible = reversible;
    if (!c.moeLayers.empty()) {
        std::erase_if(c.moeLayers, [layers](int l) { return l >= layers; });
        if (c.moeLayers.empty())
            c.experts = 0;
    }
    if (c.fourier.active()) { // an FNet keeps its Fourier blocks (all of them, at any depth); a hybrid those it has
        const bool every = int(shape.fourier.layers.size()) == shape.layers;
        c.fourier.layers.clear();
        for (int l = 0; l < layers; ++l)
            if (every || shape.fourier.mixes(l))
                c.fourier.layers.push_back(l);
    }
    return c;
}

Model modelAtDepth(const ModelConfig &shape, int layers, bool reversible)
{
    if (layers < 1)
        throw Error("a model needs at least 1 block (depth " + std::to_string(layers) + ")");
    const ModelConfig c = configAtDepth(shape, layers, reversible);
    c.validate("depth " + std::to_string(layers));
    return Model::random(c, 1);
}

std::string reversibleProblem(const ModelConfig &shape)
{
    if (shape.isEncoderDecoder())
        return "an encoder–decoder's blocks are standard (reversible blocks are one stack's)";
    ModelConfig c = shape;
    c.reversible = true;
    const std::string source = "reversible";
    try {
        c.validate(source);
    } catch (const Error &e) { // "reversible: a llama model has one stack of dense blocks"
        const std::string why = e.what();
        return why.starts_with(source + ": ") ? why.substr(source.size() + 2) : why;
    }
    return {};
}

std::vector<TrainingSequence> randomSequences(const ModelConfig &config, int tokens, int batch)
{
    std::mt19937 rng(7);
    std::vector<TrainingSequence> out(static_cast<size_t>(batch));
    for (TrainingSequence &s : out) {
        std::vector<int> ids;
        for (int i = 0; i <= tokens; ++i)
            ids.push_back(int(rng() % unsigned(config.vocab)));
        s.input.tokens.assign(ids.begin(), ids.end() - 1);
        s.targets.assign(ids.begin() + 1, ids.end());
        if (config.isEncoderDecoder()) // a source of the same length for the encoder
            for (int i = 0; i < tokens; ++i)
                s.input.source.push_back(int(rng() % unsigned(config.vocab)));
    }
    return out;
}

StepTiming measureStep(Model &model, const std::vector<TrainingSequence> &sequences, const MemoryOptions &options,
    int repeat, double minimumMs)
{
    constexpr int kMostRounds = 50;
    AdamW optimizer;
    timeTrainingStep(model, sequences, options, optimizer);
    std::vector<double> plain, recorded;
    StepTiming t;
    double timedMs = 0;
    for (int r = 0; r < std::max(1, repeat) || (repeat > 0 && timedMs < minimumMs && r < kMostRounds); ++r) {
        if (repeat > 0) {
            plain.push_back(timeTrainingStep(model, sequences, options, optimizer));
            timedMs += plain.back();
        }
        t.memory = measureTrainingStep(model, sequences, options, optimizer);
        recorded.push_back(t.memory.recordedMs);
    }
    t.recordedStepMs = median(recorded);
    t.stepMs = plain.empty() ? t.recordedStepMs : median(plain);
    t.stepMsLow = plain.empty() ? t.stepMs : quantile(plain, 0.25);
    t.stepMsHigh = plain.empty() ? t.stepMs : quantile(plain, 0.75);
    return t;
}

TimeRatio timeRatio(const SweepPoint &of, const SweepPoint &to)
{
    TimeRatio r;
    if (to.stepMs <= 0 || to.stepMsLow <= 0)
        return r;
    r.median = of.stepMs / to.stepMs;
    r.low = of.stepMsLow / to.stepMsHigh;
    r.high = of.stepMsHigh / to.stepMsLow;
    r.overlaps = of.stepMsLow <= to.stepMsHigh && to.stepMsLow <= of.stepMsHigh;
    return r;
}

std::vector<SweepPoint> sweepDepths(const ModelConfig &shape, const std::vector<int> &depths, const SweepSettings &s)
{
    std::vector<SweepPoint> points;
    const bool reversible = reversibleProblem(shape).empty();
    for (int depth : depths)
        for (MemoryStrategy strategy :
            {MemoryStrategy::Plain, MemoryStrategy::Checkpoint, MemoryStrategy::Reversible}) {
            if (cancelled(s))
                return points;
            if (strategy != MemoryStrategy::Reversible || reversible)
                points.push_back(measurePoint(shape, depth, optionsFor(strategy, 0, s.ffnChunks), s));
        }
    return points;
}

std::vector<SweepPoint> sweepCheckpointIntervals(const ModelConfig &shape, int depth, const SweepSettings &s)
{
    std::vector<SweepPoint> points;
    std::vector<MemoryOptions> runs = {optionsFor(MemoryStrategy::Plain, 0, s.ffnChunks)};
    for (int k = 1; k <= depth; ++k)
        runs.push_back(optionsFor(MemoryStrategy::Checkpoint, k, s.ffnChunks));
    if (reversibleProblem(shape).empty())
        runs.push_back(optionsFor(MemoryStrategy::Reversible, 0, s.ffnChunks));
    for (const MemoryOptions &o : runs) {
        if (cancelled(s))
            break;
        points.push_back(measurePoint(shape, depth, o, s));
    }
    return points;
}

double depthGrowth(MemoryStrategy strategy, double layers)
{
    switch (strategy) {
    case MemoryStrategy::Plain:
        return layers;
    case MemoryStrategy::Checkpoint:
        return std::sqrt(layers);
    case MemoryStrategy::Reversible:
        return 0;
    }
    return 0;
}

DepthFit fitDepth(const std::vector<SweepPoint> &points, MemoryStrategy strategy)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const SweepPoint &p : points) {
        if (p.strategy != strategy)
            continue;
        const double x = depthGrowth(strategy, p.depth), y = double(p.peakActivationBytes);
        n += 1;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    DepthFit fit;
    if (n == 0)
        return fit;
    const double spread = n * sxx - sx * sx;
    fit.slope = spread > 1e-12 * std::max(1.0, n * sxx) ? (n * sxy - sx * sy) / spread : 0;
    fit.constant = (sy - fit.slope * sx) / n;
    return fit;
}

} // namespace atlas
