// A .gguf file from a stranger: the header is parsed, every metadata value read, and every tensor dequantized, or
// atlas::Error is thrown. Anything else (a crash, a sanitizer report, another exception) is a bug.
#include "io/gguf.h"
#include "memoryfile.h"
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
    } catch (const atlas::Error &) {
    }
    return 0;
}
