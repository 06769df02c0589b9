// Headers and indexes of many tensors (issue 66: work that grows with their count). The input is a recipe: its first
// two bytes give a count n, each later byte the kind of one entry in turn (cycling), and the bytes
// after a NUL, when there is one, a JSON value written in place of the entries the recipe marks. The harness writes a
// safetensors header of n entries (in order, or overlapping, duplicated, reversed, or the raw value), copies it into
// two shards, and an index mapping the n names to them (some to a missing or foreign shard); the file and the
// checkpoint are read, every named tensor found. Anything but a result or atlas::Error (a crash, a sanitizer report, a
// shard outside the directory, libFuzzer's -timeout) is a bug. Run with -use_counters=0 (./atlas fuzz does): the
// loops' hit counts would reward ever longer headers, each a slower input.
#include "io/safetensors.h"
#include "util/error.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct TemporaryDirectory
{
    fs::path path;
    TemporaryDirectory()
    {
        // In memory where there is a tmpfs: on a disk, truncating and rewriting the three files is most of the time.
        char shared[] = "/dev/shm/atlas-fuzz-many-XXXXXX", disk[] = "/tmp/atlas-fuzz-many-XXXXXX";
        char *pattern = ::mkdtemp(shared) ? shared : ::mkdtemp(disk);
        if (!pattern)
            std::abort();
        path = pattern;
    }
    ~TemporaryDirectory()
    {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

const fs::path &directory()
{
    static const TemporaryDirectory dir;
    return dir.path;
}

void write(const fs::path &path, const std::string &bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out)
        std::abort();
}

std::string safetensors(std::string header, size_t dataBytes)
{
    std::string file(8, '\0');
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i)
        file[size_t(i)] = char((n >> (8 * i)) & 0xff);
    return file + header + std::string(dataBytes, '\0');
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    // Up to 7 entries unless the second byte is 0xFF (then up to 255): every kind of entry and their mixtures at a cost
    // that lets the harness run millions of times (each entry is read three times, about 0.1 ms under the sanitizers).
    // tst_modelfiles measures 100,000 entries, in one header and in an index.
    const size_t n = data[1] == 0xFF ? size_t(data[0]) : size_t(data[0] & 7);
    const auto *begin = reinterpret_cast<const char *>(data) + 2, *end = reinterpret_cast<const char *>(data) + size;
    const char *nul = std::find(begin, end, '\0');
    const std::string kinds(begin, nul), raw = nul == end ? "null" : std::string(nul + 1, end);
    const auto kind = [&](size_t i) { return kinds.empty() ? 0 : uint8_t(kinds[i % kinds.size()]); };

    std::string header = "{", index = "{\"weight_map\":{";
    for (size_t i = 0; i < n; ++i) {
        const uint8_t k = kind(i);
        const size_t at = (k & 3) == 1 && i > 0 ? i - 1 : (k & 3) == 2 ? n - 1 - i : i; // overlap, reversed
        const std::string name = "\"t" + std::to_string((k & 0x30) == 0x10 && i > 0 ? i - 1 : i) + "\"";
        const std::string value = (k & 0xC0) == 0xC0 ? raw
                                                     : "{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":["
                + std::to_string(4 * at) + "," + std::to_string(4 * at + 4) + "]}";
        header += (i ? "," : "") + name + ":" + value;
        const char *shard = (k & 0x0C) == 0x04 ? "missing.safetensors"
            : (k & 0x0C) == 0x08               ? "../a.safetensors"
            : i % 2                            ? "b.safetensors"
                                               : "a.safetensors";
        index += std::string(i ? "," : "") + name + ":\"" + shard + "\"";
    }
    const std::string file = safetensors(header + "}", 4 * n);
    write(directory() / "a.safetensors", file);
    write(directory() / "b.safetensors", file);
    write(directory() / "model.safetensors.index.json", index + "}}");
    try {
        const atlas::SafetensorsFile single((directory() / "a.safetensors").string());
        if (single.entries().size() > n)
            __builtin_trap();
    } catch (const atlas::Error &) {
    }
    try {
        const atlas::SafetensorsCheckpoint checkpoint(directory().string());
        for (size_t i = 0; i < n; i += std::max<size_t>(1, n / 8)) {
            const std::string name = "t" + std::to_string(i);
            if (checkpoint.contains(name) && fs::path(checkpoint.pathOf(name)).parent_path() != directory())
                __builtin_trap(); // a shard outside the model's directory
        }
    } catch (const atlas::Error &) {
    }
    return 0;
}
