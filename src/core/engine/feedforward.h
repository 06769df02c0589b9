#pragma once

#include "model/model.h"

#include <string>

namespace atlas {

// A block's dense feed-forward sub-layer in any of the layouts the models use, on a block of rows: GPT-2's Conv1D
// (U = X W_fc + b_fc), nn.Linear (BERT, GPT-Neo, GPT-NeoX, T5 v1.0: U = X W_upᵀ + b_up), and gated (Llama, Qwen2,
// Mistral, T5 v1.1: G = X W_gateᵀ, U = X W_upᵀ, A = act(G) ⊙ U). The program's unchunked ops compute the same
// (ProgramBuilder::mlp and gatedMlp), one traced op per step.

// What the down projection reads and the backward pass needs: gate (gated only), up, and A = act(U) or act(G) ⊙ U.
struct FeedForwardActivations
{
    Tensor gate, up, act;
};
FeedForwardActivations feedForwardActivations(const ModelConfig &c, const BlockWeights &b, const Tensor &x);

// out (rows, D) = A W_down + b_down in the block's layout.
void feedForwardDown(Tensor &out, const ModelConfig &c, const BlockWeights &b, const Tensor &act);

// Reformer's chunked feed-forward (Kitaev et al. 2020): out (T,D) from x (T,D), ⌈T/chunks⌉ rows at a time, so
// that no (T, d_ff) intermediate exists whole. Each output row is the unchunked one's (rows are independent).
void feedForwardInChunks(Tensor &out, const Tensor &x, const ModelConfig &c, const BlockWeights &b, int chunks);

// A mixture-of-experts layer's output for rows x (T,D) routed to `choice` with weights `gate` (T,K):
// out_t = Σ_r gate[t,r] · FFN_choice[t,r](x_t) over the kept choices, each expert in the layer's layout: gpt-oss's
// stacked experts, gated experts (Mixtral, Qwen3-MoE) or Switch's dense ones. The traced op, the generator's
// single-token step and direct logit attribution's per-expert parts all run this.
void expertsForward(Tensor &out, const Tensor &x, const Tensor &choice, const Tensor &gate, const ModelConfig &c,
    const BlockWeights &b);

// "ReLU(u) = max(0, u)" and the like, and "ReLU": as the program's formulas show them.
std::string activationFormula(Activation act);
const char *activationLabel(Activation act);

// Rows [begin, end) of a (T,C) tensor as a tensor of their own.
Tensor copyRows(const Tensor &t, int64_t begin, int64_t end);

// The formula the program shows for the chunked op, "M_c = … for each of c chunks X_c of r rows".
std::string chunkedFeedForwardFormula(const ModelConfig &c, int chunks, int64_t tokens);

} // namespace atlas
