#include "model/modeltokenizer.h"
#include "view/analysisrequests.h"

#include "analysis/headchoice.h"
#include "engine/inputbuilder.h"
#include "model/builtinmodels.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"
#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/specrun.h"

#include <algorithm>

namespace atlas {

namespace {

using namespace atlas::analysis;

// The spec's target (or contrast) as a token id; −1 for "".
int targetId(const std::string &key, const std::string &target, const Tokenizer &tokenizer, int vocab)
{
    return target.empty() ? -1 : singleToken(tokenizer, target, vocab, key);
}

} // namespace

AnalysisRequest analysis::streamsRequest(std::string key, const AnalysisContext &c)
{
    AnalysisRequest r;
    r.key = std::move(key);
    for (const TraceEntry &e : c.trace->entries())
        if (e.name == "input" || e.name.ends_with(".input") || e.name.ends_with(".out") || e.name.ends_with(".out1")
            || e.name.ends_with(".out2")) {
            r.key.append("/").append(identity(e.tensor));
            r.pinned.push_back(e.tensor);
        }
    r.pinned.push_back(c.model->wte);
    return r;
}

bool analysis::scoreWithBaseline(std::shared_ptr<const Model> model, const std::string &baseline, int examples,
    const std::atomic<bool> &cancel, std::vector<HeldOutScore> &out)
{
    static ResultCache<HeldOutScore> cache;
    std::vector<std::shared_ptr<const Model>> models = {std::move(model)};
    if (!baseline.empty())
        models.push_back(loadModel(baseline));
    for (const std::shared_ptr<const Model> &m : models) {
        const auto score = cache.findOrMake(
            weightsFingerprint(*m) + "/" + std::to_string(examples), [&]() -> std::shared_ptr<const HeldOutScore> {
                auto made = std::make_shared<HeldOutScore>(heldOutScore(m, examples, &cancel));
                return cancel.load() ? nullptr : made;
            });
        if (!score)
            return false;
        if (!score->model.empty())
            out.push_back(*score);
    }
    return true;
}

// Every stream traced so far read through the output head; its key names the streams' tensors, so stepping within a
// block or switching views reruns nothing.
AnalysisRequest analysis::logitLensRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || !c.program)
        return problem(kNothingComputed);
    if (const std::string why = logitLensProblem(c.model->config, *c.program, *c.trace); !why.empty())
        return problem("The logit lens reads the residual stream through the output head. " + sentenceCased(why) + ".");
    AnalysisRequest r = streamsRequest("logit-lens/" + modelIdentity(*c.model) + "/target:" + spec.target, c);
    r.run = [model = c.model, program = c.program, trace = c.trace, input = inputOf(c), target = spec.target](
                const std::atomic<bool> &cancel) {
        return timedResult<LogitLensAnalysis>([&](LogitLensAnalysis &result) {
            result.target = target;
            LogitLensOptions options;
            options.topK = LogitLensAnalysis::kTopK;
            options.target = targetId("target", target, *tokenizerForModel(*model), model->config.vocab);
            options.cancel = &cancel;
            result.lens = logitLens(*model, *program, *trace, input, options);
        });
    };
    return r;
}

// Rollout and flow over the layers of the spec's self-attention traced so far, for output `position`.
AnalysisRequest analysis::rolloutRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace)
        return problem(kNothingComputed);
    names::AttentionSite site;
    try {
        site = attentionSiteOf(spec, c.model->config, "the spec");
        (void)headFusionFromName(spec.rolloutHeads);
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
    r.key = "rollout/" + spec.rolloutHeads + "/p" + std::to_string(spec.position);
    for (int l = 0; l < layers; ++l)
        if (const TraceEntry *e = c.trace->find(names::attentionTensor(site, l, "probs"))) {
            r.key += "/" + identity(e->tensor);
            r.pinned.push_back(e->tensor);
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
    r.run = [trace = c.trace, site, layers, fusion = spec.rolloutHeads, asked = spec.position](
                const std::atomic<bool> &cancel) {
        return timedResult<RolloutAnalysis>([&](RolloutAnalysis &result) {
            std::vector<Eigen::MatrixXd> augmented
                = combinedAttention(*trace, site, layers, headFusionFromName(fusion));
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

std::string patchingSettings(const ViewSpec &spec)
{
    std::string noise;
    for (int t : spec.noisePositions)
        noise += std::to_string(t) + ",";
    return spec.patch + "|" + spec.corruptedText + "|" + noise + "|" + std::to_string(spec.seed) + "|" + spec.target
        + "|" + spec.contrast + "|" + std::to_string(spec.position);
}

// Every cell of the spec's patch site, the input against its corruption; each patched forward pass is a step of the
// progress the window shows.
AnalysisRequest analysis::patchingRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (spec.target.empty())
        return problem("Activation patching measures one token at one position: name it in the Target box (a token, "
                       "or #id), and a second one in Contrast for a logit difference.");
    if (spec.corruptedText.empty() && spec.noisePositions.empty())
        return problem("Activation patching compares the input with a corrupted one: type it in the Corrupted box "
                       "(as many tokens as the input; text, or #ids), or list positions in the Noise box to "
                       "corrupt them with noise.");
    // Every cell is a forward pass of the input from the patched operation on, beside the clean and the corrupted
    // runs' traces: at 2000 tokens hours of work, and a bad_alloc at 8000 before this estimate.
    PatchSite site = PatchSite::Residual;
    try {
        site = patchSiteFromName(spec.patch);
    } catch (const Error &e) {
        return problem(e.what());
    }
    const PatchingWork work
        = patchingWork(c.model->config, c.tokens, site, double(c.program ? c.program->tracedBytes() : 0));
    if (auto over = overBudgetRequest(c, work.what, work.flops, work.bytes))
        return *over;
    AnalysisRequest r;
    r.key = "patching/" + modelIdentity(*c.model) + "/" + patchingSettings(spec) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    r.progress = std::make_shared<AnalysisProgress>();
    r.run = [model = c.model, input = inputOf(c), spec, progress = r.progress](const std::atomic<bool> &cancel) {
        return timedResult<PatchingAnalysis>([&](PatchingAnalysis &result) {
            result.asked = patchingSettings(spec);
            const std::unique_ptr<Tokenizer> tokenizer = tokenizerForModel(*model);
            Corruption corruption;
            if (!spec.corruptedText.empty()) { // as the Input box reads it: text, or #ids
                corruption.tokens = boxTokens(*tokenizer, readBoxInput(spec.corruptedText));
                if (corruption.tokens.size() != input.tokens.size())
                    throw Error("The corrupted input \"" + shownText(spec.corruptedText) + "\" is "
                        + countOf(corruption.tokens.size(), "token") + " and the input "
                        + countOf(input.tokens.size(), "token")
                        + ": patching compares the same positions, so give a corrupted input of as many tokens");
            }
            corruption.noisePositions = spec.noisePositions;
            corruption.seed = uint64_t(spec.seed);
            PatchingOptions options;
            options.site = patchSiteFromName(spec.patch);
            result.target = targetId("target", spec.target, *tokenizer, model->config.vocab);
            result.contrast = targetId("contrast", spec.contrast, *tokenizer, model->config.vocab);
            options.metric = {spec.position, result.target, result.contrast};
            options.cancel = &cancel;
            options.budget = WorkBudget::unbounded(); // the request checked the context's
            options.progress = [progress](int done, int total) {
                progress->total = total;
                progress->done = done;
                return true;
            };
            result.result = activationPatching(model, input, corruption, options);
        });
    };
    return r;
}

} // namespace atlas
