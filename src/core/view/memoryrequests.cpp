#include "view/analysisrequests.h"

#include "util/error.h"
#include "util/text.h"
#include "view/analysishelpers.h"

#include <algorithm>

namespace atlas {

namespace {

using namespace atlas::analysis;

// The common checks: a model that ran, 2 … maxTokens tokens of input.
std::string inputProblem(const AnalysisContext &c, int maxTokens, const std::string &what)
{
    if (!c.model || c.tokenIds.empty())
        return kNothingComputed;
    if (c.tokenIds.size() < 2)
        return "A training step needs at least 2 tokens: each position learns the next one.";
    if (int(c.tokenIds.size()) > maxTokens)
        return what + " up to " + std::to_string(maxTokens) + " tokens; the input has "
            + std::to_string(c.tokenIds.size()) + ".";
    return {};
}

// Why the spec's memory options cannot run on the input (validateMemoryOptions, naming the spec's keys), or "".
std::string optionsProblem(const ViewSpec &spec, const AnalysisContext &c, MemoryStrategy strategy)
{
    MemoryOptions o;
    o.strategy = strategy;
    o.checkpointEvery = strategy == MemoryStrategy::Checkpoint ? spec.checkpointEvery : 0;
    o.ffnChunks = spec.ffnChunks;
    MemoryOptionFields fields;
    fields.checkpointEvery = "checkpoint_every";
    fields.ffnChunks = "ffn_chunks";
    try {
        validateMemoryOptions(o, c.model->config, int(c.tokenIds.size()), fields);
    } catch (const Error &e) {
        return e.what();
    }
    return {};
}

// The key of a model's shape (not its weights: the sweeps train random weights of that shape).
std::string shapeKey(const ModelConfig &c, const ViewSpec &spec, int tokens)
{
    return std::to_string(c.layers) + "x" + std::to_string(c.heads) + "x" + std::to_string(c.dModel) + "x"
        + std::to_string(c.dFF) + "v" + std::to_string(c.vocab) + "p" + positionKindName(c.positions) + "/d"
        + std::to_string(spec.depth) + "/c" + std::to_string(spec.ffnChunks) + "/t" + std::to_string(tokens);
}

// A training step's work, about: the forward, the backward (twice the forward), a recomputed forward (checkpointing
// and reversible blocks). `steps` of them on the model the sweep measures at `layers` layers (configAtDepth).
double trainingFlops(const ModelConfig &shape, int layers, int tokens, double steps)
{
    return steps * 4.0 * Model::forwardFlopsOf(configAtDepth(shape, layers, shape.reversible), tokens);
}

// The plain step's memory at `layers` layers (the largest of the strategies').
double trainingBytes(const ModelConfig &shape, int layers, int tokens)
{
    return estimatedTrainingStepBytes(configAtDepth(shape, layers, shape.reversible), tokens, MemoryOptions {}, tokens);
}

} // namespace

// One training step of the input under every memory strategy (memory/memorytimeline.h). The key names the model's
// weights (pinned), the tokens, the padding and the options: moving the cursor needs no new run, and the timeline
// and the computation graph share it.
AnalysisRequest analysis::timelineRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (std::string p = inputProblem(c, MemoryTimelineAnalysis::kMaxTokens, "The memory timeline trains"); !p.empty())
        return problem(p);
    if (std::string p = optionsProblem(spec, c, MemoryStrategy::Checkpoint); !p.empty())
        return problem(p);
    const int T = int(c.tokenIds.size()), L = c.model->config.layers;
    if (auto over
        = overBudgetRequest(c, "Three training steps of " + countOf(size_t(T), "token") + " (and their warm-ups)",
            trainingFlops(c.model->config, L, T, 6), trainingBytes(c.model->config, L, T)))
        return *over;
    AnalysisRequest r;
    r.key = "memory-timeline/" + modelIdentity(*c.model) + "/k" + std::to_string(spec.checkpointEvery) + "/c"
        + std::to_string(spec.ffnChunks) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    const Input input = inputOf(c);
    r.run
        = [model = c.model, input, k = spec.checkpointEvery, chunks = spec.ffnChunks](const std::atomic<bool> &cancel) {
              return timedResult<MemoryTimelineAnalysis>([&](MemoryTimelineAnalysis &result) {
                  result.checkpointEvery = k;
                  result.ffnChunks = chunks;
                  result.timeline = memoryTimeline(*model, nextTokenSequence(input), k, chunks, &cancel);
              });
          };
    return r;
}

namespace {

// Depths 1, 2, 4 … below `maxDepth`, and maxDepth.
std::vector<int> sweptDepths(int maxDepth)
{
    std::vector<int> depths;
    for (int d = 1; d < maxDepth; d *= 2)
        depths.push_back(d);
    depths.push_back(maxDepth);
    return depths;
}

// `progress` counts the points measured.
SweepSettings sweepSettings(
    const ViewSpec &spec, int tokens, bool checkOnly, const std::atomic<bool> &cancel, AnalysisProgress &progress)
{
    SweepSettings s;
    s.tokens = tokens;
    s.ffnChunks = spec.ffnChunks;
    // At least 5 steps per point, and 200 ms of them: enough that one slow step (another process, a page fault) moves
    // neither the median nor the quartiles the views draw as the spread. A lesson check times each point once.
    s.repeat = checkOnly ? 1 : 5;
    s.minimumMs = checkOnly ? 0 : 200;
    s.cancel = &cancel;
    s.measured = [&progress](const SweepPoint &) { ++progress.done; };
    return s;
}

// A sweep's settings checked before it runs: chunks within the input, the input within a learned table.
std::string sweepProblem(const ViewSpec &spec, const AnalysisContext &c, int maxTokens, const std::string &what)
{
    if (std::string p = inputProblem(c, maxTokens, what); !p.empty())
        return p;
    if (std::string p = optionsProblem(spec, c, MemoryStrategy::Plain); !p.empty())
        return p;
    const int tokens = int(c.tokenIds.size());
    if (tokens > c.model->config.context && c.model->config.positions == PositionKind::Learned)
        return "The input is longer than the model's learned position table.";
    return {};
}

} // namespace

AnalysisRequest analysis::depthRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (std::string p = sweepProblem(spec, c, MemoryDepthAnalysis::kMaxTokens, "The depth sweep trains"); !p.empty())
        return problem(p);
    const int tokens = int(c.tokenIds.size());
    const int maxDepth = spec.depth > 0 ? spec.depth : c.model->config.layers;
    // Each depth under each strategy: at least 5 timed steps and a warm-up (a lesson check: one and one).
    const double steps = (c.checkOnly ? 2 : 6) * 3;
    double flops = 0;
    for (int d : sweptDepths(maxDepth))
        flops += trainingFlops(c.model->config, d, tokens, steps);
    if (auto over = overBudgetRequest(c,
            "The depth sweep to " + countOf(size_t(maxDepth), "layer") + " at " + countOf(size_t(tokens), "token"),
            flops, trainingBytes(c.model->config, maxDepth, tokens)))
        return *over;
    AnalysisRequest r;
    r.key = "memory-depth/" + shapeKey(c.model->config, spec, tokens) + (c.checkOnly ? "/check" : "");
    r.progress = std::make_shared<AnalysisProgress>();
    r.run = [shape = c.model->config, spec, tokens, maxDepth, once = c.checkOnly, progress = r.progress](
                const std::atomic<bool> &cancel) {
        return timedResult<MemoryDepthAnalysis>([&](MemoryDepthAnalysis &result) {
            result.asked = {spec.depth, spec.ffnChunks};
            result.tokens = tokens;
            result.maxDepth = maxDepth;
            const std::vector<int> depths = sweptDepths(maxDepth);
            progress->total = int(depths.size()) * (reversibleProblem(shape).empty() ? 3 : 2);
            result.points = sweepDepths(shape, depths, sweepSettings(spec, tokens, once, cancel, *progress));
            result.plain = fitDepth(result.points, MemoryStrategy::Plain);
            result.checkpoint = fitDepth(result.points, MemoryStrategy::Checkpoint);
            result.reversible = fitDepth(result.points, MemoryStrategy::Reversible);
            result.withoutReversible = reversibleProblem(shape);
        });
    };
    return r;
}

AnalysisRequest analysis::tradeoffRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (std::string p = sweepProblem(spec, c, MemoryTradeoffAnalysis::kMaxTokens, "The trade-off trains"); !p.empty())
        return problem(p);
    const int tokens = int(c.tokenIds.size());
    const int depth = spec.depth > 0 ? spec.depth : c.model->config.layers;
    // Plain, every k and reversible, each at least 5 timed steps and a warm-up (a lesson check: one and one).
    if (auto over = overBudgetRequest(c,
            "The trade-off at " + countOf(size_t(depth), "layer") + " and " + countOf(size_t(tokens), "token"),
            trainingFlops(c.model->config, depth, tokens, (c.checkOnly ? 2 : 6) * (depth + 2.0)),
            trainingBytes(c.model->config, depth, tokens)))
        return *over;
    AnalysisRequest r;
    r.key = "memory-tradeoff/" + shapeKey(c.model->config, spec, tokens) + (c.checkOnly ? "/check" : "");
    r.progress = std::make_shared<AnalysisProgress>();
    r.run = [shape = c.model->config, spec, tokens, depth, once = c.checkOnly, progress = r.progress](
                const std::atomic<bool> &cancel) {
        return timedResult<MemoryTradeoffAnalysis>([&](MemoryTradeoffAnalysis &result) {
            result.asked = {spec.depth, spec.ffnChunks};
            result.tokens = tokens;
            result.depth = depth;
            result.sqrtK = checkpointInterval(MemoryOptions {MemoryStrategy::Checkpoint, 0, 1}, depth);
            progress->total = depth + (reversibleProblem(shape).empty() ? 2 : 1); // plain, every k, reversible
            result.points
                = sweepCheckpointIntervals(shape, depth, sweepSettings(spec, tokens, once, cancel, *progress));
            result.withoutReversible = reversibleProblem(shape);
        });
    };
    return r;
}

// The rebuild error of every block, in each precision of the streams (memory/inversionerror.h): of the model's own
// weights at depth 0 (it must be reversible), else of a random reversible model of its shape at that depth.
AnalysisRequest analysis::inversionRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (std::string p = inputProblem(c, InversionErrorAnalysis::kMaxTokens, "The inversion error runs"); !p.empty())
        return problem(p);
    if (spec.depth == 0 && !c.model->config.reversible)
        return problem("depth 0 measures the model's own weights, and this model has standard blocks: choose a "
                       "depth for a random reversible model of its shape, or open a reversible model (reverse-rev).");
    AnalysisRequest r;
    r.key = "inversion-error/" + modelIdentity(*c.model) + "/d" + std::to_string(spec.depth) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    r.run = [model = c.model, input = inputOf(c), depth = spec.depth](const std::atomic<bool> &cancel) {
        return timedResult<InversionErrorAnalysis>([&](InversionErrorAnalysis &result) {
            const Model measured = depth > 0 ? modelAtDepth(model->config, depth, true) : *model;
            result.asked = {depth, 1};
            result.tokens = int(input.tokens.size());
            result.depth = measured.config.layers;
            result.ownWeights = depth == 0;
            const std::vector<int> targets = nextTokenSequence(input).targets;
            for (StreamPrecision p : {StreamPrecision::Double, StreamPrecision::Float32, StreamPrecision::Float16,
                     StreamPrecision::BFloat16}) {
                if (cancel)
                    break;
                result.errors.push_back(measureInversionError(measured, input, targets, p));
            }
        });
    };
    return r;
}

} // namespace atlas
