#include "funnel/funnelresolution.h"

#include "analysis/headchoice.h"
#include "engine/engine.h"
#include "util/error.h"

namespace atlas {

namespace {

std::vector<int> presentPositions(int tokens, int stride)
{
    std::vector<int> out;
    for (int t = 0; t < tokens; t += stride)
        out.push_back(t);
    return out;
}

} // namespace

int FunnelPicture::presentAt(int l) const
{
    const int stride = strides.at(size_t(l));
    return (int(tokens.size()) + stride - 1) / stride;
}

std::string funnelProblem(const Model &model)
{
    return model.config.funnel.active()
        ? std::string()
        : model.name + " has no funnel: every layer keeps every token (the built-in austen-mlm-funnel has one)";
}

FunnelPicture funnelPicture(std::shared_ptr<const Model> model, const std::vector<int> &tokens, int layer, int head)
{
    if (const std::string why = funnelProblem(*model); !why.empty())
        throw Error(why);
    const ModelConfig &c = model->config;
    if (const std::string why = headChoiceProblem(*model, layer, head); !why.empty())
        throw Error(why);
    FunnelPicture f;
    f.tokens = tokens;
    f.layer = layer;
    f.head = head;
    for (int l = 0; l < c.layers; ++l) {
        f.strides.push_back(c.funnel.stride(l));
        f.keyStrides.push_back(c.funnel.keyStride(l));
    }
    const int T = int(tokens.size());
    f.work = c.funnel.workShare(T);
    f.queries = presentPositions(T, f.strides[size_t(layer)]);
    f.keys = presentPositions(T, f.keyStrides[size_t(layer)]);
    Input input;
    input.tokens = tokens;
    Engine engine(model, std::move(input));
    const std::string name = "layer." + std::to_string(layer) + ".attn.probs";
    engine.runTo(engine.program().producerOf(name) + 1);
    const ConstMatrixMap probs = engine.trace().tensor(name).slice(head);
    for (int q : f.queries)
        for (int k : f.keys)
            f.attention.push_back(probs(q, k));
    return f;
}

} // namespace atlas
