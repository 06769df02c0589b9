#pragma once

#include <vector>

namespace atlas {

// The pattern editor's label and tooltip of each parameter of a fixed pattern (attention/patternparams.h has
// the parameters themselves).
struct PatternParamInfo
{
    const char *key; // as in attention_params
    const char *label; // untranslated: tr() in PatternEditorView's context
    const char *tip;
};

// Every parameter a fixed pattern has (window, dilation, block, window_blocks, global_blocks, random_blocks, seed,
// stride, summary), in the order the editor lists them.
const std::vector<PatternParamInfo> &patternParamInfo();

} // namespace atlas
