#include "memory/computationgraph.h"

#include <algorithm>

namespace atlas {

namespace {

// The backward pass's outer scopes (train/strategyrunner.cpp, train/backwardpass.cpp): they free what a block
// kept and hold the parameters' gradients, work of no node.
bool isBookkeeping(const MemoryOp &op)
{
    return op.phase == MemoryPhase::Setup || op.phase == MemoryPhase::Optimizer || op.name == "backward"
        || op.name == "gradients";
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

std::vector<int> nodesOfOps(const std::vector<MemoryOp> &ops, int layers)
{
    std::vector<int> nodes;
    bool blockForwardSeen = false, blockBackwardSeen = false;
    for (const MemoryOp &op : ops) {
        int node = -1;
        if (op.layer >= 0) {
            node = op.layer + 1;
            blockForwardSeen = blockForwardSeen || op.phase == MemoryPhase::Forward;
            blockBackwardSeen = blockBackwardSeen || op.phase == MemoryPhase::Backward;
        } else if (!isBookkeeping(op)) {
            // Outside the blocks: the embedding before them in the forward pass and after them in the backward pass.
            const bool beforeBlocks = op.phase == MemoryPhase::Backward ? blockBackwardSeen : !blockForwardSeen;
            node = beforeBlocks ? 0 : layers + 1;
        }
        nodes.push_back(node);
    }
    return nodes;
}

std::vector<GraphNode> computationGraphAt(const TimelineStrategy &s, int layers, int op)
{
    if (!s.problem.empty() || s.ops.empty())
        return {};
    const int nodeCount = layers + 2;
    std::vector<GraphNode> nodes(static_cast<size_t>(nodeCount));
    nodes.front().label = "embedding";
    nodes.back().label = "head";
    for (int i = 1; i <= layers; ++i)
        nodes[size_t(i)].label = "block " + std::to_string(i - 1);
    const std::vector<int> opNodes = nodesOfOps(s.ops, layers);
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
