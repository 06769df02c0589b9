#include "view/corruptionkeys.h"

#include "engine/inputbuilder.h"
#include "util/error.h"
#include "util/text.h"

namespace atlas {

std::string corruptionMissing(const ViewSpec &spec, const std::string &method)
{
    if (!spec.get(corruptionkeys::kCorruptedText).empty() || !spec.get(corruptionkeys::kNoisePositions).empty())
        return {};
    return method
        + " compares the input with a corrupted one: type it in the Corrupted box (as many tokens as the input; text, "
          "or #ids), or list positions in the Noise box to corrupt them with noise.";
}

Corruption corruptionOf(const ViewSpec &spec, const Tokenizer &tokenizer, size_t tokens)
{
    Corruption corruption;
    const std::string &text = spec.get(corruptionkeys::kCorruptedText);
    if (!text.empty()) { // as the Input box reads it: text, or #ids
        corruption.tokens = boxTokens(tokenizer, readBoxInput(text));
        if (corruption.tokens.size() != tokens)
            throw Error("The corrupted input \"" + shownText(text) + "\" is "
                + countOf(corruption.tokens.size(), "token") + " and the input " + countOf(tokens, "token")
                + ": patching compares the same positions, so give a corrupted input of as many tokens");
    }
    corruption.noisePositions = spec.get(corruptionkeys::kNoisePositions);
    corruption.seed = uint64_t(spec.seed);
    return corruption;
}

} // namespace atlas
