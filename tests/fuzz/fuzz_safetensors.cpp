// A .safetensors file from a stranger: the header is parsed and every tensor read (as float32, and a U8 one as its
// bytes), or atlas::Error is thrown.
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
            try { // U8 tensors (gpt-oss's MXFP4 blocks and scales) as their bytes
                const std::span<const unsigned char> bytes = f.bytes(name);
                if (bytes.size() != entry.end - entry.begin)
                    __builtin_trap();
                volatile unsigned char sum = 0;
                for (unsigned char b : bytes)
                    sum = static_cast<unsigned char>(sum + b);
            } catch (const atlas::Error &) {
            }
        }
    } catch (const atlas::Error &) {
    }
    return 0;
}
