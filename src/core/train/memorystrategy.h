#pragma once

#include "model/modelconfig.h"
#include "trace/names.h"

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

// What a training step's backward pass reads of its forward pass (trace names): the plain strategy keeps these, the
// others recompute them, and predictedActivationBytes counts them. Block `layer` of stack `s`: every norm's and
// sub-layer's input (its recipe's readByBackward), the attention's (attentionReadByBackward) and the feed-forward's
// (feedForwardReadByBackward), and a decoder block's cross-attention's q, k, v, probabilities and merged heads.
std::vector<std::string> readByBlockBackward(
    const ModelConfig &c, const MemoryOptions &options, const names::Stack &s, int layer);
// q, k, v, the probabilities, the merged heads; what the scores read when it is not q and k as projected (RoPE's
// turned q and k, QK-norm's normalised ones); adaptive span's mask; the soft-capped scores.
std::vector<std::string> attentionReadByBackward(const ModelConfig &c, const names::Stack &s, int layer);
// mlp.up and mlp.act (and mlp.gate, gated), a mixture's router tensors, or nothing for an FFN run in chunks.
std::vector<std::string> feedForwardReadByBackward(
    const ModelConfig &c, const MemoryOptions &options, const names::Stack &s, int layer);
// The head's: the last stream (a reversible model's mean), ln_f, the logits, their softmax (BERT's transform too).
std::vector<std::string> readByHeadBackward(const ModelConfig &c);
std::vector<std::string> readByEmbeddingBackward(const ModelConfig &c); // BERT's embed.sum; else none
// An encoder–decoder's encoder output Z, which every decoder block's cross-attention reads, and the encoder's last
// stream, which Z's norm reads going back: kept until the encoder's backward pass begins. Else none.
std::vector<std::string> encoderTail(const ModelConfig &c);

// The activation memory of one sequence's step, in float32 bytes: the tensors above at the shapes the model's program
// gives them (T tokens, width D, d_ff F, H heads; a GPT-2 block keeps its input, ln_1, Q, K, V, the merged heads,
// mid and ln_2, 8·T·D, mlp.up and mlp.act, 2·T·F (0 with chunked FFNs), and the probabilities, H·T²: 4·(8TD + 2TF +
// HT²) bytes; RoPE adds the turned Q and K, a gated FFN its gate, QK-norm the normalised Q and K, a soft-cap the
// capped scores, each at its own width and only in the layers that have it). The head's tensors are counted once.
// Plain keeps every block. Checkpointing keeps ⌈L/k⌉ boundaries of 4TD (a reversible model: 8TD) and one segment of k
// blocks at a time (the largest segment). Reversible keeps the two last streams, 8TD, and one block at a time (the
// largest). Workspace (scores, the gradients of activations) is not counted: the measured peak minus this count is
// what a textbook count leaves out. An encoder–decoder on `sourceTokens` source tokens (S) adds its encoder blocks on
// S, each decoder block's cross-attention, and the encoder's last stream and output Z; checkpointed, each stack keeps
// its own boundaries (k_E = min(k, E) for the encoder) and the larger of the two stacks' segments is counted.
int64_t predictedActivationBytes(
    const ModelConfig &config, int tokens, const MemoryOptions &options, int sourceTokens = 0);

// What one training step of a model of `config` on `tokens` tokens needs at least, before anything is allocated:
// the parameters with their gradients and AdamW's two moments (16 bytes a parameter) plus
// predictedActivationBytes(). In double: huge shapes must not wrap.
double estimatedTrainingStepBytes(
    const ModelConfig &config, int tokens, const MemoryOptions &options, int sourceTokens = 0);

// What a trainer's step of `batch` sequences holds at its peak: estimatedTrainingStepBytes's parameters and moments, a
// gradient table per sequence (summed after the step), and for each sequence in flight at once (one a worker thread)
// its activations and attention's backward workspace, the probabilities' and the scores' gradients of one layer
// (2·H·T² floats). On two threads it came 8–10 % under the measured peak at 1024 and 2048 characters, the
// program's own code and libraries (30 MB) uncounted (docs/benchmarks.md).
double estimatedTrainingBatchBytes(
    const ModelConfig &config, int tokens, int batch, const MemoryOptions &options, int sourceTokens = 0);

} // namespace atlas
