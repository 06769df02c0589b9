#pragma once

#include "model/modelconfig.h"

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

} // namespace atlas
