// A stranger's tokenizer.json and a text, as one input: tokenizer.json, a NUL byte, the text. A file that loads
// encodes the text (or refuses it with an atlas::Error), every id it produces decodes and has a piece, and the
// special tokens' ids decode too.
#include "memoryfile.h"
#include "tokenize/huggingfacetokenizer.h"
#include "util/error.h"

#include <cstring>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const auto *nul = static_cast<const uint8_t *>(std::memchr(data, 0, size));
    if (!nul)
        return 0;
    const atlas::fuzz::MemoryFile file(data, size_t(nul - data));
    const std::string text(reinterpret_cast<const char *>(nul + 1), size - size_t(nul - data) - 1);
    std::unique_ptr<atlas::HuggingFaceTokenizer> tokenizer;
    try {
        tokenizer = atlas::HuggingFaceTokenizer::fromFile(file.path());
    } catch (const atlas::Error &) {
        return 0;
    }
    std::vector<int> ids;
    try {
        ids = tokenizer->encodeWithSpecialTokens(text);
    } catch (const atlas::Error &) {
        return 0; // text that is not UTF-8, an unknown character without an unknown token, a regex past its limit
    }
    for (const int id : ids)
        if (tokenizer->piece(id).empty())
            __builtin_trap();
    try {
        tokenizer->decode(ids); // a post-processor's ids may name no token: refused, never undefined
    } catch (const atlas::Error &) {
    }
    return 0;
}
