#include "view/memoryrequests.h"

#include "util/error.h"
#include "util/text.h"
#include "view/analysishelpers.h"

#include <algorithm>

namespace atlas {

using namespace atlas::analysis;

std::string analysis::trainingInputProblem(const AnalysisContext &c, int maxTokens, const std::string &what)
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

namespace {

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

} // namespace

std::string analysis::shapeKey(const ModelConfig &c, int tokens)
{
    return std::to_string(c.layers) + "x" + std::to_string(c.heads) + "x" + std::to_string(c.dModel) + "x"
        + std::to_string(c.dFF) + "v" + std::to_string(c.vocab) + "p" + positionKindName(c.positions) + "/t"
        + std::to_string(tokens);
}

double analysis::trainingFlops(const ModelConfig &shape, int layers, int tokens, double steps)
{
    return steps * 4.0 * Model::forwardFlopsOf(configAtDepth(shape, layers, shape.reversible), tokens);
}

double analysis::trainingBytes(const ModelConfig &shape, int layers, int tokens)
{
    return estimatedTrainingStepBytes(configAtDepth(shape, layers, shape.reversible), tokens, MemoryOptions {}, tokens);
}

// One training step of the input under every memory strategy (memory/memorytimeline.h). The key names the model's
// weights (pinned), the tokens, the padding and the options: moving the cursor needs no new run, and the timeline
// and the computation graph share it.
AnalysisRequest analysis::timelineRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (std::string p = trainingInputProblem(c, MemoryTimelineAnalysis::kMaxTokens, "The memory timeline trains");
        !p.empty())
        return problem(p);
    if (std::string p = optionsProblem(spec, c, MemoryStrategy::Checkpoint); !p.empty())
        return problem(p);
    const int T = int(c.tokenIds.size()), L = c.model->config.layers;
    if (auto over
        = overBudgetRequest(c, "Three training steps of " + countOf(size_t(T), "token") + " (and their warm-ups)",
            trainingFlops(c.model->config, L, T, 6), trainingBytes(c.model->config, L, T)))
        return *over;
    AnalysisRequest r;
    r.key = "memory-timeline/" + modelIdentity(*c.model) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    const Input input = inputOf(c);
    r.run
        = [model = c.model, input, k = spec.checkpointEvery, chunks = spec.ffnChunks](const std::atomic<bool> &cancel) {
              return timedResult<MemoryTimelineAnalysis>([&](MemoryTimelineAnalysis &result) {
                  result.ffnChunks = chunks;
                  result.timeline = memoryTimeline(*model, nextTokenSequence(input), k, chunks, &cancel);
              });
          };
    return r;
}

std::vector<int> analysis::sweptDepths(int maxDepth)
{
    std::vector<int> depths;
    for (int d = 1; d < maxDepth; d *= 2)
        depths.push_back(d);
    depths.push_back(maxDepth);
    return depths;
}

SweepSettings analysis::sweepSettings(
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

std::string analysis::sweepProblem(
    const ViewSpec &spec, const AnalysisContext &c, int maxTokens, const std::string &what)
{
    if (std::string p = trainingInputProblem(c, maxTokens, what); !p.empty())
        return p;
    if (std::string p = optionsProblem(spec, c, MemoryStrategy::Plain); !p.empty())
        return p;
    const int tokens = int(c.tokenIds.size());
    if (tokens > c.model->config.context && c.model->config.positions == PositionKind::Learned)
        return "The input is longer than the model's learned position table.";
    return {};
}

} // namespace atlas
