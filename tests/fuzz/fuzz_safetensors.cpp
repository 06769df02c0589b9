// A .safetensors file from a stranger: the header is parsed and every tensor read, or atlas::Error is thrown.
// Anything else (a crash, a sanitizer report, another exception) is a bug.
#include "io/safetensors.h"
#include "memoryfile.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const atlas::fuzz::MemoryFile file(data, size);
    try {
        const atlas::SafetensorsFile f(file.path());
        for (const auto &[name, entry] : f.entries()) {
            try {
                const atlas::Tensor t = f.tensor(name);
                if (t.shape() != entry.shape)
                    __builtin_trap();
            } catch (const atlas::Error &) {
            }
        }
    } catch (const atlas::Error &) {
    }
    return 0;
}
