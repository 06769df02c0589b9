// config.json from a stranger: accepted configs pass validate() and survive toJson/fromJson unchanged.
#include "model/modelconfig.h"
#include "util/error.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try {
        const atlas::ModelConfig c
            = atlas::ModelConfig::fromJson(std::string(reinterpret_cast<const char *>(data), size), "config.json");
        c.validate("accepted");
        const std::string once = c.toJson();
        if (atlas::ModelConfig::fromJson(once, "again").toJson() != once)
            __builtin_trap();
    } catch (const atlas::Error &) {
    }
    return 0;
}
