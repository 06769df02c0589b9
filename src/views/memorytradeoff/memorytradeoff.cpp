#include "memorytradeoff/memorytradeoff.h"

#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/memoryrequests.h"
#include "view/viewkinds.h"

// The Checkpoint k view (checkpointing every k blocks: peak memory against step time): its descriptor and its
// analysis request.
namespace atlas::views::memorytradeoff {

namespace {

using namespace atlas::analysis;

AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
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
    r.key = "memory-tradeoff/" + shapeKey(c.model->config, tokens) + (c.checkOnly ? "/check" : "");
    r.progress = std::make_shared<AnalysisProgress>();
    r.run = [shape = c.model->config, spec, tokens, depth, once = c.checkOnly, progress = r.progress](
                const std::atomic<bool> &cancel) {
        return timedResult<MemoryTradeoffAnalysis>([&](MemoryTradeoffAnalysis &result) {
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

} // namespace

ViewKind kind()
{
    return {.kind = "memory-tradeoff",
        .title = "Checkpoint k",
        .summary = "gradient checkpointing every k blocks, k = 1 \u2026 L: peak memory against step time",
        .group = "Memory",
        .showsEncoderDecoder = true,
        .request = request,
        .analysisKeys = {"depth", "ffn_chunks"},
        .after = "memory-depth"};
}

} // namespace atlas::views::memorytradeoff
