#pragma once

#include "memory/memorytimeline.h"

#include <cstdint>
#include <string>
#include <vector>

// The computation graph as a training step runs it (view kind "memory-graph", the classic checkpointing
// animation): the model as a chain of nodes, the embedding, each block and the head, and at one op of a recorded
// step what each node's activations are doing. Read from the recording, not modelled: a node is "kept" while a
// stored activation it allocated is live, "recomputed" while a recomputed one is, "freed" once it ran forward and
// holds nothing, "done" once its backward pass finished.
namespace atlas {

enum class NodeState {
    Waiting, // its forward has not run yet
    Computing, // the op at the cursor is its forward
    Kept, // holds stored activations for the backward pass
    Dropped, // ran forward, holds nothing: the backward pass will have to recompute it (or rebuild it)
    Recomputing, // the op at the cursor recomputes it
    Recomputed, // holds recomputed activations, waiting for its backward pass
    Backward, // its backward pass is running (or paused between its parts)
    Done, // its backward pass finished
};
constexpr int kNodeStates = 8;
const char *nodeStateName(NodeState state); // "not yet", "computing", "kept", "freed", …

struct GraphNode
{
    std::string label; // "embedding", "block 3", "encoder block 1", "decoder block 0", "head"
    std::string tag; // what fits in the node's box: "emb", "3", "e1", "d0", "head"
    NodeState state = NodeState::Waiting;
    int64_t storedBytes = 0, recomputedBytes = 0; // live at the op, allocated by this node's ops
};

// The node each op of a recording belongs to: 0 the embedding, 1 … L the blocks, L + 1 the head (final LayerNorm,
// logits, loss), −1 none (setup, the optimizer, the backward pass's own bookkeeping). An encoder–decoder
// (encoderLayers E > 0) is one chain too: 0 the embeddings of both stacks, 1 … E the encoder's blocks (the last one
// with the encoder's final norm, whose output Z every cross-attention reads), E + 1 … E + L the decoder's,
// E + L + 1 the head.
std::vector<int> nodesOfOps(const std::vector<MemoryOp> &ops, int layers, int encoderLayers = 0);

// Every node's state after the events of op `op` of strategy `s` (a model of `layers` blocks, after
// `encoderLayers` encoder blocks for an encoder–decoder); op < 0: before the step. Empty for a strategy that did
// not run.
std::vector<GraphNode> computationGraphAt(const TimelineStrategy &s, int layers, int op, int encoderLayers = 0);

} // namespace atlas
