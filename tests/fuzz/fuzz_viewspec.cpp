// A view spec from a stranger (render --spec, the clipboard, a lesson): accepted specs survive toJson/fromJson in
// full, and as the changed keys only with the keys their view does not read back at their defaults (those
// toJson(true) leaves out: view/viewspec.h).
#include "util/error.h"
#include "view/viewspec.h"

#include <string>
#include <variant>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try {
        const atlas::ViewSpec spec
            = atlas::ViewSpec::fromJson(std::string(reinterpret_cast<const char *>(data), size), "spec.json");
        if (!(atlas::ViewSpec::fromJson(spec.toJson(), "full") == spec))
            __builtin_trap();
        atlas::ViewSpec read = spec;
        const atlas::ViewSpec defaults;
        for (const std::string &name : atlas::unreadKeys(spec))
            for (const atlas::SpecKey &key : atlas::specKeys())
                if (key.name == name)
                    std::visit(
                        [&](const auto &field) { atlas::setField(read, field, atlas::fieldValue(defaults, field)); },
                        key.field);
        if (!(atlas::ViewSpec::fromJson(spec.toJson(true), "changed") == read))
            __builtin_trap();
    } catch (const atlas::Error &) {
    }
    return 0;
}
