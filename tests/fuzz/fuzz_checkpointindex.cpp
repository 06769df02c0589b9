// A sharded checkpoint's model.safetensors.index.json from a stranger, beside two real shards (qwen2_tiny's): the
// index is read, every shard it names opened and every mapped tensor read, or atlas::Error is thrown. A tensor read
// must have the shape its shard's header gives it. Anything else (a crash, a sanitizer report, a file opened outside
// the directory, another exception) is a bug.
#include "io/safetensors.h"
#include "util/error.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

// A directory of this process's own, holding the real shards, removed at exit; the index is written into it for
// each input.
struct ShardDirectory
{
    std::filesystem::path path;
    ShardDirectory()
    {
        char pattern[] = "/tmp/atlas-fuzz-index-XXXXXX";
        if (!::mkdtemp(pattern))
            std::abort();
        path = pattern;
        for (const char *shard : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"})
            std::filesystem::copy_file(std::filesystem::path(ATLAS_TEST_DATA "/qwen2_tiny") / shard, path / shard);
    }
    ~ShardDirectory()
    {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

const std::filesystem::path &directory()
{
    static const ShardDirectory dir;
    return dir.path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    {
        std::ofstream index(directory() / "model.safetensors.index.json", std::ios::binary | std::ios::trunc);
        index.write(reinterpret_cast<const char *>(data), std::streamsize(size));
        if (!index)
            std::abort();
    }
    try {
        const atlas::SafetensorsCheckpoint checkpoint(directory().string());
        for (const char *name :
            {"model.embed_tokens.weight", "model.layers.1.self_attn.q_proj.weight", "lm_head.weight"})
            if (checkpoint.contains(name)) {
                const std::filesystem::path where = checkpoint.pathOf(name);
                if (where.parent_path() != directory())
                    __builtin_trap(); // a shard outside the model's directory
                try {
                    if (checkpoint.tensor(name).shape() != checkpoint.entry(name).shape)
                        __builtin_trap();
                } catch (const atlas::Error &) {
                }
            }
        (void)checkpoint.dtype();
    } catch (const atlas::Error &) {
    }
    return 0;
}
