#pragma once

#include "tensor/tensor.h"

#include <map>
#include <string>
#include <vector>

// The types every attention kernel shares. A kernel attends ONE head: q, k, v are (T,d) row-major (a rank-2
// tensor's matrix() or a slice(h) of the engine's (H,T,d) tensors), and it returns the context (T,d).
namespace atlas::attention {

class PatternVisitor; // blockattention.h

// How one head is attended, besides the kernel's own parameters.
struct AttentionOptions
{
    bool causal = false; // query i may attend key j only when j <= i
    std::vector<int> padding; // key positions no query may attend (as Input::padding), each in [0, T)
    bool dense = false; // also produce weights and mask (T,T): for display and dump at small T only
    // When set, the block-sparse kernels (bigbird, longformer, strided, fixed) hand every block to it instead of
    // attending it, and return a zero context: their pattern without its cost (see attentionpattern.h). The
    // other kernels ignore it.
    PatternVisitor *patternVisitor = nullptr;
};

struct AttentionResult
{
    Tensor context; // (T,d)
    // (T,T), only when options.dense: the effective weight of value j in query i's context. Rows sum to 1 for
    // every kernel but linformer (whose weights are P E, see linformerattention.h); a row with no key is 0.
    Tensor weights;
    Tensor mask; // (T,T), only when options.dense: 1 where query i may attend key j, else 0
    std::map<std::string, Tensor> extras; // kernel-specific tensors for display and dump (see each kernel)
};

// Throws atlas::Error naming the kernel unless q, k, v are (T,d) with one T >= 1 and one d >= 1, and every
// padding position is in [0, T).
void checkHeadInputs(
    const char *kernel, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const AttentionOptions &options);

// (T): 1 where key j may be attended at all, 0 for padding.
std::vector<unsigned char> allowedKeys(int64_t T, const std::vector<int> &padding);

} // namespace atlas::attention
