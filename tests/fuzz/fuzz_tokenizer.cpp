// GPT-2's tokenizer on any bytes: decode(encode(x)) == x, and every id it produces has a piece.
#include "tokenize/bpetokenizer.h"
#include "util/error.h"

#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const std::unique_ptr<atlas::BpeTokenizer> tokenizer
        = atlas::BpeTokenizer::fromDirectory(ATLAS_TEST_DATA "/gpt2_bpe");
    const std::string text(reinterpret_cast<const char *>(data), size);
    const std::vector<int> ids = tokenizer->encode(text);
    if (tokenizer->decode(ids) != text)
        __builtin_trap();
    for (const int id : ids)
        if (tokenizer->piece(id).empty())
            __builtin_trap();
    if (tokenizer->cachedWords() > 100000)
        tokenizer->clearCache(); // the cache grows with every new word; a long run must not mistake it for a leak
    return 0;
}
