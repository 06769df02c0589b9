#include "rollout/rollout.h"

#include "engine/attentiontrace.h"
#include "util/error.h"
#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Rollout view (attention rollout and flow): its descriptor and its analysis request.
namespace atlas::views::rollout {

namespace {

using namespace atlas::analysis;

// Rollout and flow over the layers of the spec's self-attention traced so far, for output `position`.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace)
        return problem(kNothingComputed);
    names::AttentionSite site;
    try {
        site = attentionSiteOf(spec, c.model->config, "the spec");
        (void)headFusionFromName(spec.get(views::rollout::kRolloutHeads));
    } catch (const Error &e) {
        return problem(e.what());
    }
    if (c.model->config.funnel.active())
        return problem("Rollout follows each position's residual stream through the layers; a funnel model pools the "
                       "positions between its blocks and adds an early stream back on upsampling, which rollout's "
                       "identity term does not describe. The Funnel view shows its attention at each resolution.");
    if (site.cross)
        return problem("Rollout follows one sequence through its layers; cross-attention mixes the decoder's "
                       "positions with the source's. Choose Encoder or Decoder self-attention.");
    const int layers = siteLayers(site, c.model->config);
    AnalysisRequest r;
    r.key = "rollout";
    for (int l = 0; l < layers; ++l) {
        const TraceEntry *probs = c.trace->find(names::attentionTensor(site, l, "probs"));
        // a layer kept on demand: the log-sum-exp that recomputes them (engine/attentiontrace.h), [H, T] as well
        if (const TraceEntry *e = probs ? probs : c.trace->find(names::attentionTensor(site, l, "lse"))) {
            r.key += "/" + identity(e->tensor);
            r.pinned.push_back(e->tensor);
        }
    }
    if (r.pinned.empty())
        return problem(notComputedText(c.program.get(), names::attentionTensor(site, 0, "probs")));
    // Each traced layer's heads combined and its residual added (T × T doubles each), a T × T × T product per layer
    // for the rollout, its L products, and the cells drawn in float.
    const double T = r.pinned.front().dim(1), traced = double(r.pinned.size());
    if (auto over = overBudgetRequest(c,
            "Rollout over " + countOf(r.pinned.size(), "layer") + " of " + countOf(size_t(T), "token"),
            2.0 * traced * T * T * T, (2.0 * traced + 1.0) * T * T * 8.0 + T * T * 4.0))
        return *over;
    r.run = [trace = c.trace, model = c.model, padding = c.padding, site, layers,
                fusion = spec.get(views::rollout::kRolloutHeads),
                asked = spec.position](const std::atomic<bool> &cancel) {
        return timedResult<RolloutAnalysis>([&](RolloutAnalysis &result) {
            std::vector<Eigen::MatrixXd> augmented
                = combinedAttention(*trace, site, layers, headFusionFromName(fusion), model.get(), padding);
            const int T = int(augmented.front().rows());
            result.fusion = fusion;
            result.position = asked < 0 || asked >= T ? T - 1 : asked;
            const Eigen::VectorXd last = augmented.back().row(result.position);
            result.lastLayer.assign(last.data(), last.data() + last.size());
            for (Eigen::MatrixXd &a : augmented) // in place: the request's estimate counts one copy
                a = withResidual(a);
            result.layers = int(augmented.size());
            result.rollout = attentionRollout(augmented).back();
            // Here, not in the view: at thousands of tokens the T² cells took the window's thread 0.35 s.
            auto cells = std::make_shared<std::vector<float>>(size_t(T) * size_t(T));
            Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(cells->data(), T, T)
                = result.rollout.cast<float>();
            result.cells = std::move(cells);
            result.flowProblem = attentionFlowProblem(result.layers, T);
            if (result.flowProblem.empty())
                result.flow = attentionFlow(augmented, result.position, &cancel);
        });
    };
    return r;
}

// Every layer's scored queries and keys, which a trace that keeps only each block's input frees.
std::vector<std::string> recomputes(const ViewSpec &, const ModelConfig &config)
{
    std::vector<std::string> names;
    for (int l = 0; !config.isEncoderDecoder() && l < config.layers; ++l)
        std::ranges::move(readoutInputs(config, l), std::back_inserter(names));
    return names;
}

} // namespace

ViewKind kind()
{
    return {.kind = "rollout",
        .title = "Rollout and flow",
        .summary = "attention rollout and attention flow: how much each input token reaches a position through "
                   "every layer, beside the last layer's own attention",
        .group = "Research",
        .showsSites = true,
        .showsEncoderDecoder = true,
        .readsEveryBlocksHeads = true,
        .request = request,
        .analysisKeys = {"site", "position", kRolloutHeads.name},
        .alsoReads = {"scale"},
        .recomputes = recomputes,
        .after = "needle",
        .keys = {{.field = kRolloutHeads,
            .type = "string",
            .meaning = "rollout view: how each layer's heads are combined before the residual is added: `mean` (Abnar "
                       "& Zuidema's), or `max` / `min` (the largest or smallest weight of any head on each pair, rows "
                       "renormalised)",
            .choices = {"mean", "max", "min"},
            .ownedByView = true}}};
}

} // namespace atlas::views::rollout
