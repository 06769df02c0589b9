#pragma once

#include "engine/attentiontrace.h"
#include "engine/input.h"
#include "model/model.h"
#include "trace/names.h"
#include "trace/trace.h"

#include <functional>
#include <string>
#include <vector>

namespace atlas {

struct OpOutput
{
    std::string name; // trace name, e.g. "layer.0.attn.scores"
    Shape shape; // known before the op runs, for the memory budget
    std::string formula; // the formula shown with the tensor
    // False in a checkpointed program: the engine frees the tensor once its last reader has run, and recomputes it
    // from what was kept when asked (engine/recompute.h).
    bool kept = true;

    size_t bytes() const { return static_cast<size_t>(Tensor::count(shape)) * sizeof(float); }
};

// What each block of a trace keeps (Program::build). Everything: every output. Checkpoints: the residual stream, what
// its sub-layers add to it, the scored queries and keys and the tensors narrower than the stream; its norms,
// projections, split heads and the feed-forward's [T, F] activations are freed. Input: only its input (the last block's
// output) and the narrow tensors, attn.lse among them; a layer's queries and keys are recomputed when its attention is
// read, a projection and a rotation, with no attention (engine/recompute.h).
enum class BlockKeeping { Everything, Checkpoints, Input };

// One named operation of the forward pass. `run` reads its inputs from the trace and returns its outputs
// in the order of `outputs`.
struct Op
{
    std::string name; // unique: "layer.0.softmax"
    std::string label; // short, for the operation list: "softmax"
    int layer = -1; // -1 outside the blocks
    // The attention kernel its layer runs, as data (kind "full" for exact softmax attention and outside the
    // blocks): views read kernel settings from here, never from formula text.
    attention::AttentionKernelSpec attention;
    std::vector<std::string> inputs;
    std::vector<OpOutput> outputs;
    std::function<std::vector<Tensor>(const Model &, const Input &, const Trace &)> run;
    names::Stack stack = names::kOnlyStack; // an encoder–decoder's ops are the encoder's, then the decoder's
    bool residual = false; // adds a sub-layer's output back to the residual stream (⊕ in the diagram)
    // Set on a dense feed-forward's down projection: ops [fusedFrom, this one] (gate, up, act, down) as one pass over a
    // few hundred rows at a time, giving this op's output with their [T, F] activations never whole
    // (engine/feedforward.h). A run keeping only block inputs, which frees those activations anyway, takes it when it
    // runs past them (Engine::runTo); a step at a time runs each op.
    int fusedFrom = -1;
    std::function<Tensor(const Model &, const Trace &)> fused;
};

// The forward pass of a model on an input as a list of operations (docs/trace-names.md lists them).
struct Program
{
    std::vector<Op> ops;
    BlockKeeping keeping = BlockKeeping::Everything; // what each block keeps (build's `keeping`)

    // `traced`: the run keeps its trace, so efficient kernels also produce their dense weights and mask for
    // display (T x T each); untraced runs stay sparse.
    // `ffnChunks` > 1: each feed-forward sub-layer is one op, "layer.{i}.mlp", computing layer.{i}.mlp.down in that
    // many chunks of rows (Reformer), with no mlp.up / mlp.act in the trace (training's --ffn-chunks).
    // `attention` OnDemand: every layer's exact attention is one tiled op keeping attn.lse instead of its [H, T, T]
    // scores, masked scores and probabilities (engine/attentiontrace.h), and the output head stops at ln_f, its
    // [T, V] logits and probabilities read a few rows at a time (engine/outputhead.h); throws when a layer cannot.
    // `keeping` (anything but Everything: on demand only) says what each block keeps; the rest is freed after its last
    // reader and recomputed from what was kept when asked (engine/recompute.h).
    static Program build(const ModelConfig &config, const Input &input, bool traced = true, int ffnChunks = 1,
        AttentionTrace attention = AttentionTrace::Whole, BlockKeeping keeping = BlockKeeping::Everything);
    // Bytes the trace holds at its fullest as Run to End makes it (the memory budget's check, before anything runs):
    // every output, or in a checkpointed program the most that is alive at once, each op's outputs made beside what
    // a later op still reads. A program keeping block inputs takes each dense feed-forward as one pass of a few
    // hundred rows (Op::fused), its [T, F] activations never whole; stepping through one an op at a time makes them,
    // which the engine checks as it steps (Engine::step).
    size_t tracedBytes() const;
    // For each op k, the outputs nothing keeps that op k is the last to read, or that nothing reads (op k's own):
    // what a run frees once op k has run.
    struct FreedOutput
    {
        std::string name;
        int producer = -1; // the op that made it
        size_t bytes = 0;
    };
    std::vector<std::vector<FreedOutput>> freedAfter() const;
    bool checkpointed() const; // some output is not kept
    int indexOf(const std::string &opName) const; // -1 when absent
    int producerOf(const std::string &tensorName) const; // op index, -1 when absent
    // The kernel layer `layer` runs (the spec of its ops); kind "full" for exact attention or a layer not built.
    const attention::AttentionKernelSpec &attentionOf(int layer) const;
};

} // namespace atlas
