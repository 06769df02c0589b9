#pragma once

#include "attention/attentionkernel.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

// The pattern editor's parameters: which a kind has, their labels and tooltips, slider ranges on T tokens, and
// the starting values it suggests for a kind on T tokens.
namespace atlas {

struct PatternParamInfo
{
    const char *key; // as in attention_params
    const char *label; // untranslated: tr() in PatternEditorView's context
    const char *tip;
};

// Every parameter a fixed pattern has (window, dilation, block, window_blocks, global_blocks, random_blocks, seed,
// stride, summary), in the order the editor lists them.
const std::vector<PatternParamInfo> &patternParamInfo();
// The integer parameters of a kind (bigbird, longformer, strided, fixed); Longformer's global list apart.
std::vector<std::string> patternParamKeys(const std::string &kind);
// The slider range of a parameter on T tokens, given the kind's other values (window_blocks depends on block).
std::pair<int, int> patternParamRange(const std::string &key, int T, const std::map<std::string, int> &values);
// The spec's parameters as integers by key (validated, defaults filled in); Longformer's globals, sorted and
// distinct, in `globals`. Throws atlas::Error for a bad spec.
std::map<std::string, int> patternIntegerParams(const attention::AttentionKernelSpec &spec, std::vector<int> &globals);
// Parameters that show the kind's structure on T tokens: a window of about T/8, l ≈ √T (the paper's choice),
// BigBird blocks of about T/16; at T = 16384 the kernels' defaults.
attention::AttentionKernelSpec suggestedPatternSpec(const std::string &kind, int T);

} // namespace atlas
