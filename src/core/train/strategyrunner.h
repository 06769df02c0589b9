#pragma once

#include "engine/input.h"
#include "engine/program.h"
#include "model/model.h"
#include "trace/allocationrecorder.h"
#include "trace/names.h"
#include "trace/trace.h"
#include "train/backprop.h"
#include "train/memorystrategy.h"

#include <array>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace atlas {

class BackwardPass;

// One input's training pass under a memory strategy (train/memorystrategy.h). The forward pass runs the model's
// Program op by op, as the engine does, but keeps only what the strategy keeps and frees every other tensor as
// soon as no later op reads it; the backward pass (train/backwardpass.h) then recomputes or rebuilds the rest:
//
//   plain       keeps what the backward pass reads ("saved tensors"): block i's input, ln_1, Q, K, V, the
//               attention probabilities, the merged heads, mid, ln_2, mlp.up and mlp.act; the head's ln_f input,
//               ln_f, logits and next_probs. Not the QKV product, scores, masked scores, context, sub-layer outputs.
//   checkpoint  keeps the block inputs at boundaries 0, k, 2k, … and the head's tensors; going back, each segment
//               [b, b + k) is recomputed from its boundary (keeping its saved tensors), then backpropagated.
//   reversible  keeps the last block's Y₁, Y₂ and the head's tensors; going back through block i it recomputes
//               G(Y₁), rebuilds X₂ = Y₂ − G(Y₁), backpropagates through G, recomputes F(X₂), rebuilds
//               X₁ = Y₁ − F(X₂), backpropagates through F.
//
// An encoder–decoder runs both stacks, the encoder first; going back, the decoder first, each of its blocks also
// keeping its cross-attention's Q, K, V, probabilities and merged heads, ln_cross and mid_cross, and the encoder
// output Z kept until the encoder's turn. Checkpointing keeps each stack's boundaries, k per stack (at most its
// depth). Reversible blocks are one stack's.
//
// Every op runs in a MemoryScope (trace/allocationrecorder.h) saying its phase and whether its outputs are
// stored, recomputed or transient, so a recording of the step is its real memory timeline. The same operations
// in the same order make checkpointing's gradients bit-identical to plain's.
class StrategyRunner
{
public:
    // Throws atlas::Error for options the model cannot use (validateMemoryOptions) or an efficient attention kernel.
    StrategyRunner(const Model &model, Input input, MemoryOptions options);

    void forward();
    // After forward(): the loss and gradients of `targets` (as backprop.h's), added into `g`.
    void backward(const std::vector<int> &targets, Gradients &g);

    const Trace &store() const { return m_store; } // what is kept now
    const Program &program() const { return m_program; }
    const MemoryOptions &options() const { return m_options; }

    // For the inversion analysis (memory/inversionerror.h), on a reversible model:
    // the embedding X₀ = "input" (T,D), as the program computes it.
    Tensor embedding() const;
    // F(X₂) = Attn(LN₁(X₂)) and G(Y₁) = FFN(LN₂(Y₁)) of block `layer` as the program computes them; (T,D) each.
    Tensor attentionSublayer(int layer, const Tensor &x2) const;
    Tensor mlpSublayer(int layer, const Tensor &y1) const;
    // Instead of forward(): the last block's output streams are given, the head runs on them.
    void startFromStreams(const Tensor &y1, const Tensor &y2);
    // backward() of a reversible model taking each block's input streams from `inputs` ((X₁, X₂) of block i,
    // i = 0 … L−1) instead of rebuilding them, or rebuilding them when `inputs` is null; `rebuilt`, when given,
    // receives the streams the pass used.
    void backwardReversible(const std::vector<int> &targets, Gradients &g,
        const std::vector<std::array<Tensor, 2>> *inputs, std::vector<std::array<Tensor, 2>> *rebuilt = nullptr);

private:
    using NameSet = std::unordered_set<std::string>;
    // One stack of blocks: a model's only one, or an encoder–decoder's decoder and encoder, in the order the
    // backward pass goes through them (the decoder first: its cross-attention sends the encoder its gradient).
    struct StackPart
    {
        names::Stack stack;
        int layers = 0;
    };
    int segmentLength(const StackPart &part) const; // checkpointing's k for this stack
    // Runs ops [first, last) on `trace`: skips an op whose outputs nobody needs, keeps the outputs in `keep`, drops
    // every other tensor once no later op in the range reads it.
    void runOps(Trace &trace, int first, int last, MemoryPhase phase, const NameSet &keep) const;
    int opIndex(const std::string &name) const;
    int blockBegin(const names::Stack &s, int layer) const; // index of block `layer`'s first op
    std::vector<std::string> boundary(const names::Stack &s, int layer) const; // the stream(s) entering it
    void dropAll(const std::vector<std::string> &names);
    Tensor headBackward(const std::vector<int> &targets, BackwardPass &pass);
    void backwardBlocks(const names::Stack &s, int first, int last, BackwardPass &pass, Tensor &d1, Tensor &d2);
    void backwardCheckpoint(const StackPart &part, BackwardPass &pass, Tensor &d1, Tensor &d2);
    void reversibleLayer(int i, BackwardPass &pass, Tensor &dy1, Tensor &dy2, const std::array<Tensor, 2> *given,
        std::array<Tensor, 2> *used);

    const Model &m_model;
    Input m_input;
    MemoryOptions m_options;
    std::vector<StackPart> m_stacks;
    Program m_program;
    std::unordered_map<std::string, int> m_opIndex;
    Trace m_store;
    int64_t T = 0;
};

} // namespace atlas
