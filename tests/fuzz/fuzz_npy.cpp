// An .npy file from a stranger: read whole, with its shape matching its data, or refused with atlas::Error.
#include "io/npy.h"
#include "memoryfile.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const atlas::fuzz::MemoryFile file(data, size);
    try {
        const atlas::Tensor t = atlas::readNpy(file.path());
        if (atlas::Tensor::count(t.shape()) != t.numel())
            __builtin_trap();
    } catch (const atlas::Error &) {
    }
    return 0;
}
