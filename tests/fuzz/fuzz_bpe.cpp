// vocab.json and merges.txt from a stranger, as one input: vocab.json, a NUL byte, merges.txt. An accepted pair
// encodes and decodes text without failing; ids it produces decode.
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
    const atlas::fuzz::MemoryFile vocab(data, size_t(nul - data));
    const atlas::fuzz::MemoryFile merges(nul + 1, size - size_t(nul - data) - 1);
    try {
        const auto tokenizer = atlas::HuggingFaceTokenizer::fromGpt2Files(vocab.path(), merges.path());
        const std::string text = "Hello world, it's 2024!\n\tnaïve café";
        const std::vector<int> ids = tokenizer->encode(text);
        tokenizer->decode(ids); // every id encoding produced is in the vocabulary
        for (const int id : ids)
            if (tokenizer->piece(id).empty())
                __builtin_trap();
    } catch (const atlas::Error &) {
    }
    return 0;
}
