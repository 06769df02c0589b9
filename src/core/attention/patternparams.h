#pragma once

#include "attention/attentionkernel.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

// The integer parameters of the fixed sparse patterns (bigbird, longformer, strided, fixed, swin) as the pattern
// editor edits them: which a kind has, their ranges on T tokens, and the values that show a kind's structure on
// T tokens (the editor's suggestion, and the Pattern view's when the model runs another kernel).
namespace atlas::attention {

// The integer parameters of a kind, in the editor's order; Longformer's global list apart.
std::vector<std::string> patternParamKeys(const std::string &kind);
// The slider range of a kind's parameter on T tokens, given its other values (window_blocks depends on block, Swin's
// shift on its window), never below the kernel's minimum.
std::pair<int, int> patternParamRange(
    const std::string &kind, const std::string &key, int T, const std::map<std::string, int> &values);
// The spec's parameters as integers by key (validated, defaults filled in); Longformer's globals, sorted and
// distinct, in `globals`. Throws atlas::Error for a bad spec.
std::map<std::string, int> patternIntegerParams(const AttentionKernelSpec &spec, std::vector<int> &globals);
// Parameters that show the kind's structure on T tokens: a window of about T/8, l ≈ √T (the paper's choice),
// BigBird blocks of about T/16; at T = 16384 the kernels' defaults.
AttentionKernelSpec suggestedPatternSpec(const std::string &kind, int T);
// A model's own sliding window of W keys (Mistral's, Gemma's local layers': query i sees i − W < j ≤ i) as the
// Longformer kernel writes it: causal, the past w = W − 1 keys and the query itself, no dilation, no global tokens.
AttentionKernelSpec slidingWindowPattern(int window);
// Parameters for any kind that suit T tokens, as the toolbar's chooser fills them in: the fixed patterns as
// suggestedPatternSpec; LSH with about 8 keys per bucket (an even count, at most 64) and chunks of that size;
// Linformer k ≈ T/4 (at most 256); Performer 64 features, or 256 from 1024 tokens. Full attention has none.
AttentionKernelSpec suggestedKernelSpec(const std::string &kind, int T);

} // namespace atlas::attention
