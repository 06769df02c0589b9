#pragma once

#include "attention/attentionresult.h"

#include <cstdint>

namespace atlas::attention {

struct BigBirdParams
{
    int block = 64; // positions per block (the last block may be shorter)
    int windowBlocks = 3; // odd: a query block attends its own block and (windowBlocks−1)/2 blocks on each side;
                          // 0: no window, not even its own block (random or global blocks alone)
    int globalBlocks = 2; // the first blocks: their queries attend every key, every query attends their keys
    int randomBlocks = 3; // extra key blocks per (non-global) query block, drawn from the seed
    uint64_t seed = 0;
};

// BigBird's block-sparse attention (Zaheer et al. 2020, the ITC layout), for one head. With n = ⌈T/block⌉
// blocks, query block a (not global) attends the key blocks
//   global {0 … globalBlocks−1}  ∪  window {b : |a − b| ≤ (windowBlocks−1)/2}  ∪  random(a),
// where random(a) holds randomBlocks distinct blocks drawn uniformly, without replacement, from the blocks in
// neither of the other two sets (fewer when fewer remain; GaussianStream(seed, 0), drawn for a = 0, 1, … in
// order). A global query block attends every key. The pattern is the same causal or not; when causal it is
// intersected with j <= i (the future random and window blocks then go unused). Padding keys are masked. A query
// left with no key (window_blocks 0, causal, its random blocks all in the future) gets a zero context and zero
// weights, as a query whose keys are all padding.
// The work is O(T · (globalBlocks + windowBlocks + randomBlocks) · block · d) plus O(globalBlocks · block · T · d).
// q, k, v are (T,d); result.context is (T,d); extras "random_blocks" (n, randomBlocks): block ids, −1 where none.
// Throws atlas::Error naming the parameter the kernel cannot run with.
void checkBigBirdParams(const BigBirdParams &params);

AttentionResult bigbird_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const BigBirdParams &params, const AttentionOptions &options);

} // namespace atlas::attention
