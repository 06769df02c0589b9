// A view spec from a stranger (render --spec, the clipboard, a lesson): accepted specs survive toJson/fromJson, both
// in full and as the changed keys only.
#include "util/error.h"
#include "view/viewspec.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try {
        const atlas::ViewSpec spec
            = atlas::ViewSpec::fromJson(std::string(reinterpret_cast<const char *>(data), size), "spec.json");
        if (!(atlas::ViewSpec::fromJson(spec.toJson(), "full") == spec))
            __builtin_trap();
        if (!(atlas::ViewSpec::fromJson(spec.toJson(true), "changed") == spec))
            __builtin_trap();
    } catch (const atlas::Error &) {
    }
    return 0;
}
