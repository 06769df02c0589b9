#include "model/modeltokenizer.h"

#include "io/limits.h"
#include "io/modelfile.h"
#include "model/ggufmodel.h"
#include "model/model.h"
#include "tokenize/huggingfacetokenizer.h"
#include "tokenize/specialtokenstokenizer.h"
#include "util/error.h"

#include <filesystem>

namespace atlas {

std::unique_ptr<Tokenizer> tokenizerForModel(const Model &model)
{
    std::unique_ptr<Tokenizer> tokenizer;
    if (model.config.tokenizer == "bytes")
        tokenizer = std::make_unique<ByteTokenizer>();
    else if (isGgufFile(model.directory)) {
        try {
            tokenizer = HuggingFaceTokenizer::fromGguf(model.directory);
        } catch (const Error &e) {
            tokenizer = idTokenizer(std::string("its tokenizer could not be read (") + e.what() + ")");
        }
    } else {
        try {
            tokenizer = directoryTokenizer(model.directory);
        } catch (const Error &e) {
            tokenizer = idTokenizer(std::string("its tokenizer could not be read (") + e.what() + ")");
        }
        if (!tokenizer)
            tokenizer = idTokenizer(
                "this model's directory has no tokenizer.json, SentencePiece model, vocab.json and merges.txt, or "
                "vocab.txt");
    }
    // A checkpoint's own tokenizer already knows its special tokens (and adds them around an input); the project's
    // models, in any family's layout, name theirs in config.json.
    if (model.config.specialTokens.empty()
        || (model.config.family != Family::Gpt2 && model.config.tokenizer != "bytes"))
        return tokenizer;
    return std::make_unique<SpecialTokensTokenizer>(std::move(tokenizer), model.config.specialTokens);
}

std::unique_ptr<Tokenizer> tokenizerForDirectory(const std::string &directory)
{
    if (isGgufFile(directory)) // a GGUF file's own tokenizer
        return HuggingFaceTokenizer::fromGguf(directory);
    if (auto tokenizer = directoryTokenizer(directory))
        return tokenizer;
    const std::string config = (std::filesystem::path(directory) / "config.json").string();
    std::error_code ec;
    if (std::filesystem::is_regular_file(config, ec)) {
        Model model; // no weights: tokenizerForModel reads only the config and the directory
        model.config = ModelConfig::fromJson(readModelFile(config, limits::kSpecBytes), config);
        model.directory = directory;
        return tokenizerForModel(model);
    }
    throw Error(directory
        + ": no tokenizer.json, SentencePiece model (spiece.model, tokenizer.model), vocab.json and merges.txt, "
          "vocab.txt or config.json found");
}

} // namespace atlas
