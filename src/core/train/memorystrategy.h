#pragma once

#include "model/modelconfig.h"

#include <cstdint>
#include <string>
#include <vector>

namespace atlas {

// How a training step trades memory for computation (docs/models.md, "Memory strategies"):
//   plain       the forward pass keeps every activation the backward pass reads (what autograd saves);
//   checkpoint  it keeps the residual stream only at every k-th block boundary, and the backward pass recomputes
//               each segment of k blocks from its boundary before going back through it (Chen et al. 2016);
//               the gradients are bit-identical to plain's;
//   reversible  a reversible model (atlas_reversible) keeps only the last block's two output streams; the backward
//               pass rebuilds each block's inputs from its outputs, X₂ = Y₂ − G(Y₁), X₁ = Y₁ − F(X₂), recomputing
//               F and G for their gradients (Gomez et al. 2017; Kitaev et al. 2020).
enum class MemoryStrategy { Plain, Checkpoint, Reversible };

struct MemoryOptions
{
    MemoryStrategy strategy = MemoryStrategy::Plain;
    int checkpointEvery = 0; // checkpoint: k, a boundary kept every k blocks; 0 = ⌈√L⌉
    int ffnChunks = 1; // the feed-forward sub-layers in this many chunks of rows (1 = whole)
    bool operator==(const MemoryOptions &) const = default;
};

// How the caller names the options in its errors: the command line's flags, a view spec's keys, the panel's fields.
struct MemoryOptionFields
{
    std::string strategy = "--memory-strategy";
    std::string checkpointEvery = "--checkpoint-every";
    std::string ffnChunks = "--ffn-chunks";
};

const std::vector<std::string> &memoryStrategyNames(); // plain, checkpoint, reversible
std::string memoryStrategyName(MemoryStrategy strategy);
// Throws atlas::Error naming `field` for anything but plain, checkpoint or reversible.
MemoryStrategy parseMemoryStrategy(const std::string &text, const std::string &field = "--memory-strategy");
// k for a model of `layers` blocks: checkpointEvery, or ⌈√L⌉ when it is 0.
int checkpointInterval(const MemoryOptions &options, int layers);
// Throws atlas::Error naming the field and the reason: the reversible strategy on a model with standard blocks,
// k outside 1..L, chunks outside 1..T (T = tokens of the input; 0 skips that check).
void validateMemoryOptions(
    const MemoryOptions &options, const ModelConfig &config, int tokens = 0, const MemoryOptionFields &fields = {});

// The textbook count of the activation memory of one sequence's step: the tensors autograd saves, in float32.
// Per block (T tokens, width D, d_ff F, H heads): the block input, ln_1, Q, K, V, the merged heads, mid (a
// reversible block: Y₁) and ln_2, 8·T·D, plus mlp.up and mlp.act, 2·T·F (0 with chunked FFNs), plus the attention
// probabilities, H·T²: 4·(8TD + 2TF + HT²) bytes; RoPE adds the rotated Q and K (2TD), a gated FFN its gate (TF),
// QK-norm the normalised Q and K (2T·H·d).
// The head keeps ln_f's input, ln_f, the logits and their softmax,
// 4·(2TD + 2TV). Plain keeps every block: L·block + head. Checkpointing keeps ⌈L/k⌉ boundaries of 4TD (a reversible
// model: 8TD) and one segment of k blocks at a time: ⌈L/k⌉·4TD + k·block + head. Reversible keeps the two last
// streams, 8TD, and one block at a time: 8TD + block + head. Workspace (scores, the gradients of activations) is
// not in the formula: the measured peak minus this count is what the textbook leaves out.
// An encoder–decoder on `sourceTokens` source tokens (S) adds its E encoder blocks on S, a cross-attention per decoder
// block, 4·(4TD + 2SD + HTS), and the encoder's last stream and output Z, 4·2SD; checkpointed, each stack keeps its
// own boundaries (k_E = min(k, E) for the encoder) and the larger of the two stacks' segments is counted.
int64_t predictedActivationBytes(
    const ModelConfig &config, int tokens, const MemoryOptions &options, int sourceTokens = 0);

// What one training step of a model of `config` on `tokens` tokens needs at least, before anything is allocated:
// the parameters with their gradients and AdamW's two moments (16 bytes a parameter) plus
// predictedActivationBytes(). In double: huge shapes must not wrap.
double estimatedTrainingStepBytes(
    const ModelConfig &config, int tokens, const MemoryOptions &options, int sourceTokens = 0);

} // namespace atlas
