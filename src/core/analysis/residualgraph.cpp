#include "analysis/residualgraph.h"

#include "model/blockrecipe.h"
#include "trace/names.h"
#include "util/error.h"

#include <map>
#include <optional>

namespace atlas {

std::string CircuitNode::name() const
{
    switch (kind) {
    case Kind::Embedding:
        return "embed";
    case Kind::Head:
        return "a" + std::to_string(layer) + "." + std::to_string(head);
    case Kind::Mlp:
        return "m" + std::to_string(layer);
    }
    return {};
}

std::string CircuitReceiver::name() const
{
    // appended, not "a" + std::to_string(…): GCC 12 warns of a false overflow in that operator+ once inlined here
    std::string h = "a";
    h += std::to_string(layer) + "." + std::to_string(head);
    switch (port) {
    case ReadPort::Query:
        return h + ".q";
    case ReadPort::Key:
        return h + ".k";
    case ReadPort::Value:
        return h + ".v";
    case ReadPort::Mlp:
        return "m" + std::to_string(layer);
    case ReadPort::Logits:
        return "logits";
    }
    return {};
}

int CircuitGraph::findSender(CircuitNode::Kind kind, int layer, int head) const
{
    for (size_t i = 0; i < senders.size(); ++i)
        if (senders[i].kind == kind && senders[i].layer == layer && senders[i].head == head)
            return int(i);
    return -1;
}

int CircuitGraph::findReceiver(ReadPort port, int layer, int head) const
{
    for (size_t i = 0; i < receivers.size(); ++i)
        if (receivers[i].port == port && receivers[i].layer == layer && receivers[i].head == head)
            return int(i);
    return -1;
}

int CircuitGraph::senderNamed(const std::string &name) const
{
    for (size_t i = 0; i < senders.size(); ++i)
        if (senders[i].name() == name)
            return int(i);
    return -1;
}

int CircuitGraph::receiverNamed(const std::string &name) const
{
    for (size_t i = 0; i < receivers.size(); ++i)
        if (receivers[i].name() == name)
            return int(i);
    return -1;
}

int CircuitGraph::findEdge(int sender, int receiver) const
{
    if (receiver < 0 || receiver >= int(receivers.size()))
        return -1;
    for (int e = edgesOf[size_t(receiver)].first; e < edgesOf[size_t(receiver)].second; ++e)
        if (edges[size_t(e)].sender == sender)
            return e;
    return -1;
}

std::string CircuitGraph::edgeName(int edge) const
{
    const CircuitEdge &e = edges.at(size_t(edge));
    return senders[size_t(e.sender)].name() + " → " + receivers[size_t(e.receiver)].name();
}

ResidualGraphLayout residualGraphLayout(const Model &model)
{
    ResidualGraphLayout g;
    const ModelConfig &c = model.config;
    const names::Stack &stack = names::kOnlyStack;
    if (c.isEncoderDecoder())
        return g.problem = "an encoder-decoder has two stacks and cross-attention; circuits are drawn for one stack", g;
    if (c.reversible)
        return g.problem = "a reversible model carries two streams, not one residual stream", g;
    if (c.funnel.active())
        return g.problem = "a Funnel-Transformer pools its stream between blocks", g;
    if (c.sinkhorn.active())
        return g.problem = "Sinkhorn attention sorts blocks of the stream inside attention", g;
    if (c.family == Family::Bert)
        return g.problem = "BERT's masked-LM head and post-norm blocks do not add into one stream", g;
    if (c.fourier.active())
        return g.problem = "FNet's blocks mix their tokens by a Fourier transform, which has no heads to trace", g;
    using Kind = BlockStep::Kind;
    CircuitGraph &graph = g.graph;
    const auto send = [&](CircuitNode node, std::string tensor) {
        graph.senders.push_back(node);
        g.written.push_back(std::move(tensor));
        g.writeNorms.emplace_back();
        return int(graph.senders.size()) - 1;
    };
    send({CircuitNode::Kind::Embedding, -1, -1}, names::residualStream(0));
    std::vector<int> stream {0}; // the senders the stream entering the block holds
    const int H = c.heads, Hkv = c.kvHeadCount();
    const auto receive = [&](CircuitReceiver r, const std::vector<int> &from, ResidualReadPoint at) {
        const int first = int(graph.edges.size());
        for (int s : from)
            graph.edges.push_back({s, int(graph.receivers.size())});
        graph.edgesOf.push_back({first, int(graph.edges.size())});
        graph.receivers.push_back(r);
        g.reads.push_back(std::move(at));
    };
    for (int l = 0; l < c.layers; ++l) {
        const BlockRecipe recipe = blockRecipe(c, stack, l);
        const std::string where = "block " + std::to_string(l) + ": ";
        std::map<std::string, std::vector<int>> streams {{BlockStep::kInput, stream}}; // local name → senders
        std::map<std::string, std::pair<std::string, BlockPart>> normed; // norm output → (stream, norm)
        std::map<std::string, std::vector<int>> outputs; // a sub-layer's output → its senders
        for (const BlockStep &step : recipe.steps) {
            // The stream `in` is, or is a norm of; its senders.
            const auto readPoint
                = [&](const std::string &in) -> std::optional<std::pair<ResidualReadPoint, std::vector<int>>> {
                if (const auto it = normed.find(in); it != normed.end())
                    return std::pair {ResidualReadPoint {blockTensor(stack, l, it->second.first), it->second.second,
                                          blockTensor(stack, l, in)},
                        streams[it->second.first]};
                if (const auto it = streams.find(in); it != streams.end())
                    return std::pair {
                        ResidualReadPoint {blockTensor(stack, l, in), std::nullopt, blockTensor(stack, l, in)},
                        it->second};
                return std::nullopt;
            };
            switch (step.kind) {
            case Kind::Norm:
                if (const auto sublayer = outputs.find(step.in[0]); sublayer != outputs.end()) { // Gemma's sandwich
                    for (int s : sublayer->second) {
                        if (graph.senders[size_t(s)].kind != CircuitNode::Kind::Head) {
                            g.written[size_t(s)] = blockTensor(stack, l, step.out);
                            continue;
                        }
                        if (c.outBias || g.writeNorms[size_t(s)])
                            return g.problem = where + "a norm after an attention "
                                       + (c.outBias ? "with an output bias" : "output already normed"),
                                   g;
                        g.writeNorms[size_t(s)] = SenderNorm {step.norm, blockTensor(stack, l, step.in[0])};
                    }
                    outputs[step.out] = sublayer->second;
                    break;
                }
                if (!streams.count(step.in[0]))
                    return g.problem = where + "a norm reads " + step.in[0]
                               + ", not the residual stream (a norm after the add: post-norm)",
                           g;
                normed[step.out] = {step.in[0], step.norm};
                break;
            case Kind::Attention: {
                const auto at = step.in.size() == 1 ? readPoint(step.in[0]) : std::nullopt;
                if (!at)
                    return g.problem = where + "the attention reads neither the stream nor a norm of it", g;
                const auto &[point, from] = *at;
                for (int h = 0; h < H; ++h)
                    receive({ReadPort::Query, l, h}, from, point);
                for (int h = 0; h < Hkv; ++h)
                    receive({ReadPort::Key, l, h}, from, point);
                for (int h = 0; h < Hkv; ++h)
                    receive({ReadPort::Value, l, h}, from, point);
                std::vector<int> heads;
                for (int h = 0; h < H; ++h)
                    heads.push_back(send({CircuitNode::Kind::Head, l, h}, names::attentionTensor({}, l, "context")));
                outputs[step.out] = heads;
                break;
            }
            case Kind::FeedForward: {
                auto at = readPoint(step.in[0]);
                if (!at)
                    return g.problem = where + "the feed-forward reads neither the stream nor a norm of it", g;
                if (!at->first.norm) { // its reading is written into its activations, which need no router
                    if (c.isMoeLayer(l))
                        return g.problem = where + "a mixture of experts reads the stream itself, not a norm of it", g;
                    at->first.edited = blockTensor(stack, l, "mlp.act");
                }
                receive({ReadPort::Mlp, l, -1}, at->second, at->first);
                outputs[step.out] = {send({CircuitNode::Kind::Mlp, l, -1}, blockTensor(stack, l, step.out))};
                break;
            }
            case Kind::Add: {
                if (!streams.count(step.in[0]))
                    return g.problem = where + "an add whose first term is not the residual stream (post-norm)", g;
                std::vector<int> sum = streams[step.in[0]];
                for (size_t t = 1; t < step.in.size(); ++t) {
                    const auto it = outputs.find(step.in[t]);
                    if (it == outputs.end())
                        return g.problem = where + "an add of " + step.in[t] + ", which is not a sub-layer's output", g;
                    sum.insert(sum.end(), it->second.begin(), it->second.end());
                }
                streams[step.out] = sum;
                break;
            }
            default:
                return g.problem = where + "a step the residual graph does not model (cross-attention or pooling)", g;
            }
        }
        if (recipe.outputs.size() != 1 || !streams.count(recipe.outputs[0]))
            return g.problem = where + "the block's output is not the residual stream", g;
        stream = streams[recipe.outputs[0]];
    }
    receive({ReadPort::Logits, c.layers, -1}, stream,
        {names::residualStream(c.layers), std::nullopt, names::residualStream(c.layers)});
    return g;
}

std::string circuitProblem(const Model &model)
{
    return residualGraphLayout(model).problem;
}

CircuitGraph circuitGraph(const Model &model)
{
    ResidualGraphLayout g = residualGraphLayout(model);
    if (!g.problem.empty())
        throw Error("circuits: " + g.problem);
    return std::move(g.graph);
}

} // namespace atlas
