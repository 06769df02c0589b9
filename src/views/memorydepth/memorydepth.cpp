#include "memorydepth/memorydepth.h"

#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/memoryrequests.h"
#include "view/viewkinds.h"

// The Peak vs depth view (peak activation memory and step time against depth): its descriptor and its analysis
// request.
namespace atlas::views::memorydepth {

namespace {

using namespace atlas::analysis;

AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
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
    r.key = "memory-depth/" + shapeKey(c.model->config, tokens) + (c.checkOnly ? "/check" : "");
    r.progress = std::make_shared<AnalysisProgress>();
    r.run = [shape = c.model->config, spec, tokens, maxDepth, once = c.checkOnly, progress = r.progress](
                const std::atomic<bool> &cancel) {
        return timedResult<MemoryDepthAnalysis>([&](MemoryDepthAnalysis &result) {
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

} // namespace

ViewKind kind()
{
    return {.kind = "memory-depth",
        .title = "Peak vs depth",
        .summary = "peak activation memory and step time against depth, with the O(L), O(\u221AL) and O(1) curves",
        .group = "Memory",
        .showsEncoderDecoder = true,
        .request = request,
        .analysisKeys = {"depth", "ffn_chunks"},
        .after = "memory-graph"};
}

} // namespace atlas::views::memorydepth
