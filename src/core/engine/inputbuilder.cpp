#include "engine/inputbuilder.h"

#include "tokenize/tokenizer.h"
#include "util/error.h"

namespace atlas {

Input makeInput(const Tokenizer &tokenizer, const std::string &text, const std::vector<int> &tokens,
                const std::vector<int> &padding)
{
    Input input;
    input.tokens = tokens.empty() ? tokenizer.encode(text) : tokens;
    input.padding = padding;
    return input;
}

} // namespace atlas
