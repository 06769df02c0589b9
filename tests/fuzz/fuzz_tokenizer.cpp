// GPT-2's tokenizer on any bytes: valid UTF-8 round-trips (decode(encode(x)) == x) and every id it produces has a
// piece; anything else is refused with an atlas::Error.
#include "tokenize/huggingfacetokenizer.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const std::unique_ptr<atlas::HuggingFaceTokenizer> tokenizer = atlas::HuggingFaceTokenizer::fromGpt2Files(
        ATLAS_TEST_DATA "/gpt2_bpe/vocab.json", ATLAS_TEST_DATA "/gpt2_bpe/merges.txt");
    const std::string text(reinterpret_cast<const char *>(data), size);
    if (atlas::unicode::firstInvalidUtf8(text) != std::string::npos) {
        try {
            tokenizer->encode(text);
        } catch (const atlas::Error &) {
            return 0;
        }
        __builtin_trap(); // invalid UTF-8 must be refused
    }
    const std::vector<int> ids = tokenizer->encode(text);
    if (tokenizer->decode(ids) != text)
        __builtin_trap();
    for (const int id : ids)
        if (tokenizer->piece(id).empty())
            __builtin_trap();
    return 0;
}
