#pragma once

#include "attention/attentionresult.h"
#include "attention/bigbirdattention.h"
#include "attention/fixedattention.h"
#include "attention/linformerattention.h"
#include "attention/longformerattention.h"
#include "attention/lshattention.h"
#include "attention/performerattention.h"
#include "attention/stridedattention.h"

#include <map>
#include <string>
#include <vector>

// One entry point for every attention kernel: a kind and its key=value parameters, validated with errors that
// name the kind and the key, and one dispatch function that attends one head.
//
//   kind        parameters (defaults)
//   full        —
//   lsh         rounds=4 buckets=32 chunk=64 seed=0
//   bigbird     block=64 window_blocks=3 global_blocks=2 random_blocks=3 seed=0
//   longformer  window=512 dilation=1 global=0,5,9 (none by default)
//   strided     stride=128
//   fixed       stride=128 summary=1
//   linformer   k=256 seed=0 projection=random|identity   (not causal)
//   performer   features=256 seed=0
namespace atlas::attention {

struct AttentionKernelSpec
{
    std::string kind = "full";
    std::map<std::string, std::string> params; // key -> value, as typed
};

// The kinds, in the order above.
const std::vector<std::string> &attentionKernelKinds();

// kind plus "key=value" strings -> a validated spec; throws atlas::Error naming the kind and the key.
AttentionKernelSpec parseAttentionKernelSpec(const std::string &kind, const std::vector<std::string> &keyValues);
// Throws atlas::Error for an unknown kind, an unknown key or a bad value (a check that needs T waits for the call).
void validateAttentionKernelSpec(const AttentionKernelSpec &spec);
// "lsh (rounds=4, buckets=32, chunk=64, seed=0)": every parameter, defaults filled in, for labels and formulas.
std::string describeAttentionKernel(const AttentionKernelSpec &spec);

// The kernel's time complexity in N as Tay et al. ("Efficient Transformers: A Survey", 2020, Table 1) give it for
// the model that introduced it: "O(N²)" full; "O(N log N)" lsh (Reformer); "O(N√N)" strided and fixed (Sparse
// Transformer); "O(N)" bigbird, longformer, linformer, performer.
std::string timeComplexity(const std::string &kind);

// The typed parameters of a spec of that kind (validated; defaults filled in).
LshParams lshParams(const AttentionKernelSpec &spec);
BigBirdParams bigBirdParams(const AttentionKernelSpec &spec);
LongformerParams longformerParams(const AttentionKernelSpec &spec);
StridedParams stridedParams(const AttentionKernelSpec &spec);
FixedParams fixedParams(const AttentionKernelSpec &spec);
LinformerParams linformerParams(const AttentionKernelSpec &spec);
PerformerParams performerParams(const AttentionKernelSpec &spec);

// Attends one head with the spec's kernel. q, k, v are (T,d); result.context is (T,d); weights and mask (T,T)
// when options.dense; extras as the kernel documents. Throws atlas::Error for a bad spec or input, and for a
// causal request to linformer.
AttentionResult attention_kernel_forward(const AttentionKernelSpec &spec, ConstMatrixMap q, ConstMatrixMap k,
    ConstMatrixMap v, const AttentionOptions &options);

} // namespace atlas::attention
