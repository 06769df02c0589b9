#include "memory/computationgraph.h"

#include "trace/names.h"

#include <algorithm>

namespace atlas {

namespace {

// The backward pass's outer scopes (train/strategyrunner.cpp, train/backwardpass.cpp): they free what a block
// kept, hold the parameters' gradients and, in a decoder, the gradient of the encoder's output ("cross-attention"):
// work of no node.
bool isBookkeeping(const MemoryOp &op)
{
    return op.phase == MemoryPhase::Setup || op.phase == MemoryPhase::Optimizer || op.name == "backward"
        || op.name == "gradients" || op.name == "cross-attention";
}

// An encoder–decoder's op outside the blocks. Each stack's own names are prefixed (enc.input, dec.embed, enc.ln_f);
// the encoder's final norm goes with the last encoder block, the rest (ln_f, logits, the loss) with the head.
int encoderDecoderNodeOutsideBlocks(const std::string &name, int layers, int encoderLayers)
{
    if (name == names::encoderOutput())
        return encoderLayers;
    if (name.starts_with(names::kEncoderStack.trace) || name.starts_with(names::kDecoderStack.trace))
        return 0;
    return encoderLayers + layers + 1;
}

struct NodeSpan
{
    int lastForward = -1; // the last op of its forward
    int firstBackward = -1, lastBackward = -1; // its backward-phase ops
};

} // namespace

const char *nodeStateName(NodeState state)
{
    static const char *const names[kNodeStates]
        = {"not yet", "computing", "kept", "freed", "recomputing", "recomputed", "backward", "done"};
    return names[int(state)];
}

std::vector<int> nodesOfOps(const std::vector<MemoryOp> &ops, int layers, int encoderLayers)
{
    std::vector<int> nodes;
    const bool twoStacks = encoderLayers > 0;
    bool blockForwardSeen = false, blockBackwardSeen = false;
    for (const MemoryOp &op : ops) {
        int node = -1;
        if (op.layer >= 0) { // "enc.layer.1.mlp": encoder block 1
            const bool decoder = twoStacks && !op.name.starts_with(names::kEncoderStack.trace);
            node = op.layer + 1 + (decoder ? encoderLayers : 0);
            blockForwardSeen = blockForwardSeen || op.phase == MemoryPhase::Forward;
            blockBackwardSeen = blockBackwardSeen || op.phase == MemoryPhase::Backward;
        } else if (twoStacks && !isBookkeeping(op)) {
            node = encoderDecoderNodeOutsideBlocks(op.name, layers, encoderLayers);
        } else if (!isBookkeeping(op)) {
            // Outside the blocks: the embedding before them in the forward pass and after them in the backward pass.
            const bool beforeBlocks = op.phase == MemoryPhase::Backward ? blockBackwardSeen : !blockForwardSeen;
            node = beforeBlocks ? 0 : layers + 1;
        }
        nodes.push_back(node);
    }
    return nodes;
}

std::vector<GraphNode> computationGraphAt(const TimelineStrategy &s, int layers, int op, int encoderLayers)
{
    if (!s.problem.empty() || s.ops.empty())
        return {};
    const int E = std::max(0, encoderLayers), nodeCount = E + layers + 2;
    std::vector<GraphNode> nodes(static_cast<size_t>(nodeCount));
    nodes.front().label = "embedding";
    nodes.front().tag = "emb";
    nodes.back().label = nodes.back().tag = "head";
    for (int i = 0; i < E + layers; ++i) {
        GraphNode &node = nodes[size_t(i + 1)];
        const int block = i < E ? i : i - E;
        node.label = std::string(E == 0 ? ""
                : i < E                 ? "encoder "
                                        : "decoder ")
                         .append("block ")
                         .append(std::to_string(block));
        node.tag = std::string(E == 0 ? "" : i < E ? "e" : "d").append(std::to_string(block));
    }
    const std::vector<int> opNodes = nodesOfOps(s.ops, layers, E);
    std::vector<NodeSpan> spans(static_cast<size_t>(nodeCount));
    for (int i = 0; i < int(s.ops.size()); ++i) {
        const int n = opNodes[size_t(i)];
        if (n < 0)
            continue;
        NodeSpan &span = spans[size_t(n)];
        if (s.ops[size_t(i)].phase == MemoryPhase::Forward)
            span.lastForward = i;
        if (s.ops[size_t(i)].phase == MemoryPhase::Backward) {
            span.firstBackward = span.firstBackward < 0 ? i : span.firstBackward;
            span.lastBackward = i;
        }
    }
    const int lastPoint = s.pointAtOp(op);
    for (int p = 0; p <= lastPoint && p < int(s.events.size()); ++p) {
        const MemoryEvent &e = s.events[size_t(p)];
        const int n = opNodes[size_t(e.source)];
        if (n < 0)
            continue;
        if (e.category == MemoryCategory::StoredActivations)
            nodes[size_t(n)].storedBytes += e.bytes;
        else if (e.category == MemoryCategory::RecomputedActivations)
            nodes[size_t(n)].recomputedBytes += e.bytes;
    }
    const bool inStep = op >= 0 && op < int(s.ops.size());
    const int activeNode = inStep ? opNodes[size_t(op)] : -1;
    for (int n = 0; n < nodeCount; ++n) {
        GraphNode &node = nodes[size_t(n)];
        const NodeSpan &span = spans[size_t(n)];
        if (n == activeNode) {
            const MemoryPhase phase = s.ops[size_t(op)].phase;
            node.state = phase == MemoryPhase::Forward ? NodeState::Computing
                : phase == MemoryPhase::Recompute      ? NodeState::Recomputing
                                                       : NodeState::Backward;
        } else if (span.lastBackward >= 0 && op > span.lastBackward) {
            node.state = NodeState::Done;
        } else if (node.storedBytes > 0) {
            node.state = NodeState::Kept;
        } else if (node.recomputedBytes > 0) {
            node.state = NodeState::Recomputed;
        } else if (span.firstBackward >= 0 && op > span.firstBackward) {
            node.state = NodeState::Backward;
        } else if (span.lastForward >= 0 && op > span.lastForward) {
            node.state = NodeState::Dropped;
        }
    }
    return nodes;
}

} // namespace atlas
