// A .gguf file from a stranger: the header is parsed, every metadata value read, every tensor dequantized, the
// metadata read as a model's config and its tokenizer built and run, or atlas::Error is thrown. Anything else (a
// crash, a sanitizer report, another exception) is a bug.
#include "io/gguf.h"
#include "memoryfile.h"
#include "model/ggufmodel.h"
#include "tokenize/huggingfacetokenizer.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const atlas::fuzz::MemoryFile file(data, size);
    try {
        const atlas::GgufFile f(file.path());
        for (const auto &[key, value] : f.metadata())
            if (value.describe().empty())
                __builtin_trap();
        for (const auto &entry : f.entries()) {
            try {
                const atlas::Tensor t = f.tensor(entry.name);
                if (t.shape() != entry.shape)
                    __builtin_trap();
            } catch (const atlas::Error &) {
            }
        }
        try {
            const atlas::ModelConfig c = atlas::ggufModelConfig(f);
            if (c.layers < 1 || c.dModel < 1)
                __builtin_trap();
        } catch (const atlas::Error &) {
        }
        try {
            const auto tokenizer = atlas::HuggingFaceTokenizer::fromGguf(file.path());
            // Every id names one of the file's tokens (a file may list a token twice, as llama.cpp allows: the
            // vocabulary then holds fewer entries than the file has ids).
            const int64_t tokens = int64_t(f.strings("tokenizer.ggml.tokens").size());
            for (int id : tokenizer->encode("Hello, world! 123 ünïcode"))
                if (id < 0 || id >= tokens)
                    __builtin_trap();
        } catch (const atlas::Error &) {
        }
    } catch (const atlas::Error &) {
    }
    return 0;
}
