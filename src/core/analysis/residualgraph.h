#pragma once

#include "model/model.h"
#include "model/parameternames.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

// The residual stream as a graph (Elhage et al. 2021): what writes into the stream (the embedding, each head, each
// feed-forward) and what reads it later (each head's queries, keys and values, each feed-forward, the logits), an edge
// from each writer to each reader whose stream holds its output. Made from the blocks' recipes (model/blockrecipe.h),
// so pre-norm and parallel blocks get the edges they have; circuit analysis (analysis/circuits.h) measures them.
namespace atlas {

struct CircuitNode
{
    enum class Kind { Embedding, Head, Mlp };
    Kind kind = Kind::Embedding;
    int layer = -1;
    int head = -1;
    std::string name() const; // "embed", "a2.1" (layer 2, head 1), "m2"
};

// What a receiver reads: a query head's queries, a K/V head's keys or values, a feed-forward's input, or the stream
// the output head reads.
enum class ReadPort { Query, Key, Value, Mlp, Logits };

struct CircuitReceiver
{
    ReadPort port = ReadPort::Logits;
    int layer = -1;
    int head = -1; // the query head (Query) or K/V head (Key, Value)
    std::string name() const; // "a2.1.q", "a2.0.k", "m2", "logits"
};

struct CircuitEdge
{
    int sender = 0;
    int receiver = 0;
};

struct CircuitGraph
{
    std::vector<CircuitNode> senders; // in the order they write: the embedding, then each layer's heads and MLP
    std::vector<CircuitReceiver> receivers; // in the order they read
    std::vector<CircuitEdge> edges; // receiver by receiver, each sender whose output the receiver's stream holds
    std::vector<std::pair<int, int>> edgesOf; // per receiver, its range [first, last) of `edges`

    int findSender(CircuitNode::Kind kind, int layer, int head) const; // −1 when absent
    int findReceiver(ReadPort port, int layer, int head) const;
    int findEdge(int sender, int receiver) const;
    int senderNamed(const std::string &name) const; // by CircuitNode::name(): "a0.1"; −1 when absent
    int receiverNamed(const std::string &name) const; // by CircuitReceiver::name(): "a1.2.q"
    std::string edgeName(int edge) const; // "a0.1 → a1.2.q"
};

// Why the graph cannot be drawn for this model ("" when it can): the blocks must add sub-layer outputs into one stream
// that their sub-layers read, through a norm or not (pre-norm, parallel like GPT-NeoX, OLMo 2's sub-layers reading the
// stream itself, Gemma 2/3's sandwich), their outputs passing through a norm on their way in or not; post-norm blocks
// (BERT), whose norms rescale the stream itself, reversible blocks, Funnel's pooling and an encoder–decoder are
// refused, as are attention kernels without per-head queries, keys and values.
std::string circuitProblem(const Model &model);
CircuitGraph circuitGraph(const Model &model); // throws atlas::Error with circuitProblem's text

// Where each receiver reads the stream: the trace's name of the stream and the norm in front of the sub-layer, none
// when it reads the stream itself (OLMo 2); for a feed-forward, the tensor its reading is written into: that norm's
// output, or without a norm its activations (the stream itself also goes on to the residual add). The logits' is the
// last block's output, the final norm apart.
struct ResidualReadPoint
{
    std::string stream;
    std::optional<BlockPart> norm;
    std::string edited;
};

// A norm the heads' summed output passes through before it is added to the stream (Gemma's sandwich): its weights
// (BlockPart) and the trace's name of the sum it reads. With the sum's scale taken from the run, the norm is linear in
// each head's share, and the shares add up to its output: that is what a head writes (normShare).
struct SenderNorm
{
    BlockPart norm = BlockPart::NormAttentionOut;
    std::string sum;
};

// The graph, each receiver's read point, and each sender's traced tensor (a head's: its layer's attn.context; a
// feed-forward's: its output, normed when a norm follows it).
struct ResidualGraphLayout
{
    CircuitGraph graph;
    std::vector<ResidualReadPoint> reads; // per receiver
    std::vector<std::string> written; // per sender
    std::vector<std::optional<SenderNorm>> writeNorms; // per sender: a head's norm after the attention
    std::string problem; // circuitProblem's text; the rest is empty then
};
ResidualGraphLayout residualGraphLayout(const Model &model);

} // namespace atlas
