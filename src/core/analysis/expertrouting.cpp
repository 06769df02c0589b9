#include "analysis/expertrouting.h"

#include "engine/engine.h"
#include "ops/ops.h"
#include "trace/names.h"
#include "util/error.h"

#include <algorithm>

namespace atlas {

namespace {

std::vector<std::vector<float>> rowsOf(const Tensor &t)
{
    std::vector<std::vector<float>> rows(static_cast<size_t>(t.dim(0)));
    for (int64_t r = 0; r < t.dim(0); ++r)
        rows[size_t(r)].assign(t.data() + r * t.dim(1), t.data() + (r + 1) * t.dim(1));
    return rows;
}

std::string layerList(const std::vector<int> &layers)
{
    std::string out;
    for (int l : layers)
        out += (out.empty() ? "" : ", ") + std::to_string(l);
    return out;
}

} // namespace

std::string expertLayerProblem(const ModelConfig &config, int layer)
{
    std::vector<int> layers;
    for (int l = 0; l < config.layers; ++l)
        if (config.isMoeLayer(l))
            layers.push_back(l);
    if (layers.empty())
        return "this model has no mixture-of-experts layers: its feed-forward layers are dense (train one with train "
               "--experts E, or open a built-in model whose name contains \"switch\")";
    if (!config.isMoeLayer(layer))
        return "layer " + std::to_string(layer) + "'s feed-forward layer is dense; the experts are in layer"
            + (layers.size() > 1 ? "s " : " ") + layerList(layers);
    return {};
}

ExpertRouting expertRouting(const Model &model, const Input &input, int layer, double capacityFactor, int topK,
    int devices, const std::atomic<bool> *cancel)
{
    const ModelConfig &c = model.config;
    if (const std::string problem = expertLayerProblem(c, layer); !problem.empty())
        throw Error(problem);
    ExpertRouting r;
    for (int l = 0; l < c.layers; ++l)
        if (c.isMoeLayer(l))
            r.moeLayers.push_back(l);
    auto routed = std::make_shared<const Model>(
        capacityFactor > 0 || topK > 0 ? model.withRouting(capacityFactor, topK, "expert routing") : model);
    Engine engine(routed, input);
    engine.runToEnd([cancel](int, int) { return !(cancel && *cancel); });
    if (cancel && *cancel)
        return r;
    const Trace &trace = engine.trace();
    const auto tensor
        = [&](const char *suffix) -> const Tensor & { return trace.tensor(names::layerTensor(layer, suffix)); };
    r.layer = layer;
    r.experts = c.experts;
    r.topK = routed->config.expertTopK;
    r.tokens = int(input.tokens.size());
    r.capacityFactor = routed->config.capacityFactor;
    r.dropless = routed->config.droplessRouting;
    r.capacity = int(tensor("router.capacity").data()[0]);
    r.probs = rowsOf(tensor("router.probs"));
    r.gate = rowsOf(tensor("router.gate"));
    r.auxLoss = tensor("router.aux_loss").data()[0];
    r.zLoss = tensor("router.z_loss").data()[0];
    const Tensor &choice = tensor("router.choice");
    const int T = r.tokens, E = r.experts, K = r.topK;
    r.choice.assign(size_t(T), std::vector<int>(size_t(K), -1));
    r.preferred = r.choice;
    r.buffer.assign(size_t(E), {});
    r.overflow.assign(size_t(E), {});
    r.bufferRank.assign(size_t(E), {});
    const Tensor &probs = tensor("router.probs");
    r.fraction = ops::router_top1_fractions(probs);
    r.meanProb = ops::router_mean_probs(probs);
    const std::vector<int> ranked = ops::router_ranking(probs, K); // as router_route ranked them
    for (int t = 0; t < T; ++t) {
        bool kept = false;
        for (int k = 0; k < K; ++k) {
            r.choice[size_t(t)][size_t(k)] = int(choice.data()[t * K + k]);
            r.preferred[size_t(t)][size_t(k)] = ranked[size_t(t * K + k)];
            kept = kept || r.choice[size_t(t)][size_t(k)] >= 0;
        }
        r.droppedTokens += !kept;
    }
    // Arrival order, as router_route fills the buffers: rank by rank, each rank in sequence order.
    for (int k = 0; k < K; ++k)
        for (int t = 0; t < T; ++t) {
            const int e = r.preferred[size_t(t)][size_t(k)];
            const bool kept = r.choice[size_t(t)][size_t(k)] >= 0;
            (kept ? r.buffer : r.overflow)[size_t(e)].push_back(t);
            if (kept)
                r.bufferRank[size_t(e)].push_back(k);
        }
    r.devices = std::clamp(devices, 1, E);
    r.deviceOfExpert.resize(size_t(E));
    for (int e = 0; e < E; ++e)
        r.deviceOfExpert[size_t(e)] = e * r.devices / E;
    r.deviceOfToken.resize(size_t(T));
    for (int t = 0; t < T; ++t)
        r.deviceOfToken[size_t(t)] = int(int64_t(t) * r.devices / T);
    r.sent.assign(size_t(r.devices), std::vector<int>(size_t(r.devices), 0));
    for (int t = 0; t < T; ++t)
        for (int k = 0; k < K; ++k)
            if (const int e = r.choice[size_t(t)][size_t(k)]; e >= 0) {
                const int from = r.deviceOfToken[size_t(t)], to = r.deviceOfExpert[size_t(e)];
                ++r.sent[size_t(from)][size_t(to)];
                ++r.dispatched;
                r.crossing += from != to;
            }
    return r;
}

} // namespace atlas
