#pragma once

#include "analysis/activationpatching.h"
#include "view/viewspec.h"

#include <string>
#include <vector>

// The corrupted run of the Patching and Circuit views, chosen the same way in both and shared between them: another
// input of as many tokens (`corrupted_text`, read as the Input box reads it), or the input with noise on its embedding
// at `noise_positions` (drawn from `seed`); and the metric's second token, `contrast`, which each view keeps its own of
// as it does `target`. Documented with the shared keys (view/speckeys.cpp).
namespace atlas::corruptionkeys {

inline const OwnKey<std::string> kCorruptedText {"corrupted_text", ""};
inline const OwnKey<std::vector<int>> kNoisePositions {"noise_positions", {}};
inline const OwnKey<std::string> kContrast {"contrast", ""};

} // namespace atlas::corruptionkeys

namespace atlas {

class Tokenizer;

// Why the spec gives no corrupted run ("" when it gives one): the views' message, naming the boxes.
std::string corruptionMissing(const ViewSpec &spec, const std::string &method);
// The corrupted run the spec describes for an input of `tokens` tokens; throws atlas::Error when the corrupted text
// is not as many tokens.
Corruption corruptionOf(const ViewSpec &spec, const Tokenizer &tokenizer, size_t tokens);

} // namespace atlas
