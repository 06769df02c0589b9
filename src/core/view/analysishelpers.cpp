#include "view/analysishelpers.h"

#include "engine/attentiontrace.h"
#include "model/blockrecipe.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "trace/names.h"

#include <cstring>

// What several views' analysis requests share (view/analysishelpers.h): a head's Q, K and V, the target token, the
// traced streams' and every layer's keys, the held-out scores with a baseline, the weights' fingerprint.
namespace atlas {

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

analysis::HeadQkv analysis::headQkv(const AnalysisContext &c, int layer, int head, SlidingWindows windows)
{
    HeadQkv out;
    if (!c.trace || !c.program) {
        out.problem = kNothingComputed;
        return out;
    }
    if (layer < 0 || layer >= c.layers) {
        out.problem = "Layer " + std::to_string(layer) + " does not exist: the model has " + std::to_string(c.layers)
            + " layers.";
        return out;
    }
    if (const ModelConfig *config = c.model ? &c.model->config : nullptr; config) {
        std::string differs; // what the model's attention adds to softmax(QKᵀ/√d), which the rerun would leave out
        if (config->attentionSoftcap > 0 || config->queryScaleBase > 0)
            differs = " divides its scores by √query_pre_attn_scalar and soft-caps them";
        else if (config->attentionSinks)
            differs = " gives every softmax row a learned sink logit besides the keys";
        else if (windows == SlidingWindows::Refused && config->windowed(layer) && config->slidingWindow < c.tokens)
            differs = "'s layer " + std::to_string(layer) + " sees only the last "
                + std::to_string(config->slidingWindow) + " keys (a sliding window)";
        if (!differs.empty()) {
            out.problem = "This view reruns a head as softmax(QKᵀ/√d) over its keys; " + config->modelType + differs
                + ", so the rerun would not be this model's attention.";
            return out;
        }
    }
    // The queries and keys the scores use: RoPE's rotated ones when the model has them.
    const bool rotated = c.trace && c.trace->find(names::queriesOf(layer, true));
    const TraceEntry *q = c.trace ? c.trace->find(names::queriesOf(layer, rotated)) : nullptr;
    const TraceEntry *k = c.trace ? c.trace->find(names::keysOf(layer, rotated)) : nullptr;
    const TraceEntry *v = c.trace ? c.trace->find(names::layerTensor(layer, "attn.v")) : nullptr;
    if (q == nullptr || k == nullptr || v == nullptr) {
        out.problem = notComputedText(c.program.get(), names::layerTensor(layer, "attn.q"));
        return out;
    }
    if (q->tensor.rank() != 3 || head < 0 || head >= q->tensor.dim(0) || k->tensor.shape() != q->tensor.shape()
        || v->tensor.shape() != q->tensor.shape()) {
        out.problem = "Layer " + std::to_string(layer) + " has no head " + std::to_string(head) + ".";
        return out;
    }
    out.q = q->tensor;
    out.k = k->tensor;
    out.v = v->tensor;
    return out;
}

std::string analysis::weightsFingerprint(const Model &model)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    auto mix = [&h](uint64_t v) {
        h = (h ^ v) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    };
    for (const auto &[name, tensor] : model.parameters()) {
        for (char c : name)
            mix(uint8_t(c));
        mix(uint64_t(tensor->numel()));
        const auto *bytes = reinterpret_cast<const unsigned char *>(tensor->data());
        const size_t n = tensor->bytes();
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t word;
            std::memcpy(&word, bytes + i, 8);
            mix(word);
        }
        for (; i < n; ++i)
            mix(bytes[i]);
    }
    // A shared model lists its one block once whatever its depth (Model::withDepth), so the depth is named.
    return std::to_string(h) + "/" + model.config.task + "/" + positionKindName(model.config.positions) + "/cf"
        + std::to_string(model.config.capacityFactor) + "/k" + std::to_string(model.config.expertTopK) + "/L"
        + std::to_string(model.config.layers);
}

const TraceEntry *analysis::tracedAttentionInput(const AnalysisContext &c, int layer, std::string &why)
{
    const std::string input = mixingInput(c.model->config, names::kOnlyStack, layer);
    const TraceEntry *entry = c.trace->find(input);
    if (!entry)
        why = notComputedText(c.program.get(), input);
    else if (c.model->config.fourier.mixes(layer)) {
        if (const std::string mixed = names::layerTensor(layer, "fourier.out"); !c.trace->contains(mixed))
            why = notComputedText(c.program.get(), mixed);
    } else if (!LayerAttention::find(c.model.get(), c.padding, *c.trace, {}, layer))
        why = notComputedText(c.program.get(), names::attentionTensor({}, layer, "probs"));
    return why.empty() ? entry : nullptr;
}

} // namespace atlas
