#pragma once

#include "engine/input.h"

#include <string>
#include <vector>

namespace atlas {


class Tokenizer;

// The engine input for a model from either explicit ids or text (encoded with the model's tokenizer),
// plus padding positions. Throws atlas::Error when the text cannot be encoded.
Input makeInput(const Tokenizer &tokenizer, const std::string &text, const std::vector<int> &tokens,
                const std::vector<int> &padding);

} // namespace atlas
