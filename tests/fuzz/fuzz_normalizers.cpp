// A stranger's tokenizer.json normalizer and pre-tokenizer over a text, as one input: a JSON object
// {"normalizer": …, "pre_tokenizer": …}, a NUL byte, the text. Components that load run over the text (or refuse it
// with an atlas::Error naming the file); what they give stays within the rewriting bound (pipeline.h:
// rewrittenLimit) and is UTF-8, and no piece is empty.
#include "io/jsonread.h"
#include "tokenize/pipeline.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <string>

namespace {

using atlas::pipeline::Json;

bool isUtf8(const std::string &text)
{
    return atlas::unicode::firstInvalidUtf8(text) == std::string::npos;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    namespace pipeline = atlas::pipeline;
    const auto *nul = static_cast<const uint8_t *>(std::memchr(data, 0, size));
    if (!nul)
        return 0;
    const std::string file(reinterpret_cast<const char *>(data), size_t(nul - data));
    std::string text(reinterpret_cast<const char *>(nul + 1), size - size_t(nul - data) - 1);
    if (!isUtf8(text))
        return 0; // the tokenizer refuses such a text before its normalizer runs
    std::unique_ptr<pipeline::Normalizer> normalizer;
    std::unique_ptr<pipeline::PreTokenizer> preTokenizer;
    try {
        const Json root = atlas::parseJson(file, "fuzz.json");
        if (!root.is_object())
            return 0;
        const auto part = [&](const char *key) { return root.contains(key) ? root[key] : Json(); };
        normalizer = pipeline::makeNormalizer(part("normalizer"), {"fuzz.json", "normalizer"});
        preTokenizer = pipeline::makePreTokenizer(part("pre_tokenizer"), {"fuzz.json", "pre_tokenizer"});
    } catch (const atlas::Error &) {
        return 0;
    }
    const size_t limit = pipeline::rewrittenLimit(text.size());
    try {
        if (normalizer)
            normalizer->normalize(text, limit);
        if (text.size() > limit || !isUtf8(text))
            __builtin_trap();
        std::vector<pipeline::Piece> pieces {{text, true}};
        if (preTokenizer && !text.empty()) // the tokenizer pre-tokenizes no empty text
            preTokenizer->preTokenize(pieces, limit);
        size_t bytes = 0;
        for (const pipeline::Piece &p : pieces) {
            if ((p.text.empty() && preTokenizer && !text.empty()) || !isUtf8(p.text))
                __builtin_trap();
            bytes += p.text.size();
        }
        if (bytes > limit)
            __builtin_trap();
    } catch (const atlas::Error &e) {
        if (std::strstr(e.what(), "fuzz.json") == nullptr) // every refusal names the file
            __builtin_trap();
    }
    return 0;
}
