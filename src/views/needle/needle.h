#pragma once

#include "needle/haystack.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// A needle in a haystack (needle/haystack.h) on the spec's model: the test at each context length of its grid,
// shortest first, the last at needle_tokens.
struct NeedleAnalysis : ViewAnalysis
{
    std::vector<NeedleResult> runs;
    std::string haystack; // "novel" or "input": where the document came from
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::needle {

inline const OwnKey<int> kNeedleTokens {"needle_tokens", 1024};
inline const OwnKey<int> kNeedleDepths {"needle_depths", 11};
inline const OwnKey<int> kNeedleLengths {"needle_lengths", 1};
inline const OwnKey<std::string> kHaystack {"haystack", "novel"};
inline const OwnKey<std::string> kNeedle {"needle", " The secret number is 4821."};
inline constexpr const char *kDefaultQuestion = " What is the secret number? The secret number is";
inline const OwnKey<std::string> kNeedleQuestion {"needle_question", kDefaultQuestion};
inline const OwnKey<std::string> kNeedleAnswer {"needle_answer", " 4821"};

// The test the spec describes; the document is the novel's held-out text or the spec's input text. Without
// needle_tokens the context is 1024 tokens, or the model's `context` when that is shorter.
NeedleTest needleTest(const ViewSpec &spec, int context);

} // namespace atlas::views::needle
