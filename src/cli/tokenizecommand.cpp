#include "arguments.h"
#include "commands.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "util/text.h"

#include <cstdio>
#include <string>

namespace atlas {

// Prints the ids comma-separated; with --special the model's own special tokens are added as its post-processor
// adds them ([CLS] … [SEP], <s> …); with --pieces also each id and its readable piece on a line of its own.
// Only the tokenizer's files (and config.json) are read, never the weights.
int tokenizeCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "tokenize");
    const std::unique_ptr<Tokenizer> tokenizer = tokenizerForDirectory(resolveTokenizer(args.required("model")));
    const std::string &text = args.required("text");
    const std::vector<int> ids
        = args.flag("special") ? tokenizer->encodeWithSpecialTokens(text) : tokenizer->encode(text);
    std::printf("%s\n", shownNumbers(ids, ",").c_str());
    if (args.flag("pieces"))
        for (int id : ids)
            std::printf("%6d  %s\n", id, tokenizer->piece(id).c_str());
    return 0;
}

} // namespace atlas
