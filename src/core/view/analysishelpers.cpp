#include "view/analysishelpers.h"

#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "trace/names.h"

// What several views' analysis requests share (view/analysishelpers.h): the target token, the traced streams' key,
// the held-out scores with a baseline.
namespace atlas {

namespace {

using namespace atlas::analysis;

} // namespace

int analysis::targetId(const std::string &key, const std::string &target, const Tokenizer &tokenizer, int vocab)
{
    return target.empty() ? -1 : singleToken(tokenizer, target, vocab, key);
}

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

std::string analysis::untracedWeightsText(const AnalysisContext &c)
{
    for (int layer = 0; layer < c.model->config.layers; ++layer)
        if (const std::string probs = names::layerTensor(layer, "attn.probs"); !c.trace->find(probs))
            return notComputedText(c.program.get(), probs);
    return {};
}

AnalysisRequest analysis::everyLayerRequest(
    const std::string &kind, const AnalysisContext &c, std::initializer_list<const char *> parts)
{
    AnalysisRequest r;
    r.key = kind + "/" + modelIdentity(*c.model);
    r.pinned = {c.model->wte};
    for (int layer = 0; layer < c.model->config.layers; ++layer)
        for (const char *part : parts) {
            const Tensor &t = c.trace->find(names::layerTensor(layer, part))->tensor;
            r.key += identity(t);
            r.pinned.push_back(t);
        }
    return r;
}

} // namespace atlas
