#include "io/safetensors.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/mappedfile.h"
#include "io/modelfile.h"
#include "io/weightvalues.h"
#include "tensor/packedrows.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <set>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace atlas {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull * 1024 * 1024;
const char *const kMetadataKey = "__metadata__";
const std::string kIndexFile = "model.safetensors.index.json";

// Element size in bytes of every dtype the format defines, or 0 for an unknown one.
uint64_t dtypeSize(const std::string &dtype)
{
    static const std::map<std::string, uint64_t, std::less<>> sizes = {
        {"BOOL", 1},
        {"U8", 1},
        {"I8", 1},
        {"F8_E5M2", 1},
        {"F8_E4M3", 1},
        {"I16", 2},
        {"U16", 2},
        {"F16", 2},
        {"BF16", 2},
        {"I32", 4},
        {"U32", 4},
        {"F32", 4},
        {"I64", 8},
        {"U64", 8},
        {"F64", 8},
    };
    const auto it = sizes.find(dtype);
    return it == sizes.end() ? 0 : it->second;
}

std::string fieldError(const std::string &path, const std::string &name, const std::string &reason)
{
    return path + ": tensor '" + shownText(name) + "': " + reason;
}

std::string headerError(const std::string &path, const std::string &reason)
{
    return path + ": header: " + reason;
}

// Parses the header, refusing duplicate top-level keys, which nlohmann would silently merge.
nlohmann::json parseHeader(const std::string &path, const char *begin, const char *end)
{
    std::set<std::string> seen;
    const JsonEventHook noDuplicates = [&](int depth, nlohmann::json::parse_event_t event, const nlohmann::json &key) {
        if (event == nlohmann::json::parse_event_t::key && depth == 1 && !seen.insert(key.get<std::string>()).second)
            throw Error(headerError(path, "duplicate entry '" + shownText(key.get<std::string>()) + "'"));
    };
    const nlohmann::json header = parseJson(begin, end, path + ": header", noDuplicates);
    if (!header.is_object())
        throw Error(headerError(path, "not a JSON object"));
    return header;
}

std::map<std::string, std::string> parseMetadata(const std::string &path, const nlohmann::json &value)
{
    if (!value.is_object())
        throw Error(headerError(path, "__metadata__ is not an object"));
    std::map<std::string, std::string> metadata;
    for (const auto &[key, v] : value.items()) {
        if (!v.is_string())
            throw Error(headerError(path, "__metadata__ value of '" + shownText(key) + "' is not a string"));
        metadata[key] = v.get<std::string>();
    }
    return metadata;
}

uint64_t checkedNumel(const Shape &shape, const std::string &error)
{
    uint64_t numel = 1;
    for (int64_t d : shape) {
        if (__builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel))
            throw Error(error);
    }
    return numel;
}

SafetensorsFile::Entry parseEntry(
    const std::string &path, const std::string &name, const nlohmann::json &value, uint64_t dataSize)
{
    const auto fail = [&](const std::string &reason) { throw Error(fieldError(path, name, reason)); };
    if (!value.is_object())
        fail("entry is not an object");
    SafetensorsFile::Entry entry;

    const auto dtype = value.find("dtype");
    if (dtype == value.end() || !dtype->is_string())
        fail("missing or non-string dtype");
    entry.dtype = dtype->get<std::string>();
    const uint64_t elementSize = dtypeSize(entry.dtype);
    if (elementSize == 0)
        fail("unknown dtype '" + entry.dtype + "'");

    const auto shape = value.find("shape");
    if (shape == value.end() || !shape->is_array())
        fail("missing or non-array shape");
    for (const auto &d : *shape) {
        if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
            fail("shape element " + shownJson(d) + " is not a non-negative integer");
        entry.shape.push_back(d.get<int64_t>());
    }

    const auto offsets = value.find("data_offsets");
    if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned()
        || !(*offsets)[1].is_number_unsigned())
        fail("data_offsets is not a pair of non-negative integers");
    entry.begin = (*offsets)[0].get<uint64_t>();
    entry.end = (*offsets)[1].get<uint64_t>();
    const std::string range = "[" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "]";
    if (entry.begin > entry.end)
        fail("data_offsets " + range + " begin after they end");
    if (entry.end > dataSize)
        fail("data_offsets " + range + " exceed the data section of " + std::to_string(dataSize)
            + " bytes (truncated file?)");

    const std::string sizeError = "shape " + Tensor::shapeString(entry.shape) + " of " + entry.dtype + " needs ";
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(
            checkedNumel(entry.shape, fieldError(path, name, sizeError + "more than 2^64 bytes")), elementSize, &bytes))
        fail(sizeError + "more than 2^64 bytes");
    if (bytes != entry.end - entry.begin)
        fail(sizeError + std::to_string(bytes) + " bytes but data_offsets " + range + " hold "
            + std::to_string(entry.end - entry.begin));
    return entry;
}

void checkNoOverlap(const std::string &path, const std::map<std::string, SafetensorsFile::Entry> &entries)
{
    std::vector<std::pair<const std::string *, const SafetensorsFile::Entry *>> sorted;
    for (const auto &[name, entry] : entries)
        sorted.emplace_back(&name, &entry);
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
        return std::tie(a.second->begin, a.second->end) < std::tie(b.second->begin, b.second->end);
    });
    for (size_t i = 1; i < sorted.size(); ++i) {
        const auto &[prevName, prev] = sorted[i - 1];
        const auto &[name, entry] = sorted[i];
        if (entry->begin < prev->end)
            throw Error(fieldError(path, *name, "data_offsets overlap those of tensor '" + shownText(*prevName) + "'"));
    }
}

} // namespace

SafetensorsFile::SafetensorsFile(const std::string &path)
    : SafetensorsFile(path, openRegularFile(path)) // a FIFO would block in open()
{
}

SafetensorsFile::SafetensorsFile(const std::string &path, int fd)
    : m_path(path)
{
    m_file = std::make_unique<MappedFile>(path, fd);
    m_map = m_file->data();
    const uint64_t fileSize = m_file->size();
    if (fileSize < 8)
        throw Error(
            headerError(path, "file is " + std::to_string(fileSize) + " bytes, shorter than the 8-byte header length"));
    uint64_t headerSize = 0;
    std::memcpy(&headerSize, m_map, 8);
    if (headerSize > fileSize - 8)
        throw Error(headerError(path,
            "length " + std::to_string(headerSize) + " exceeds the " + std::to_string(fileSize - 8)
                + " bytes after it"));
    if (headerSize > kMaxHeaderBytes)
        throw Error(headerError(path, "length " + std::to_string(headerSize) + " exceeds the 100 MB limit"));
    m_dataStart = m_map + 8 + headerSize;
    m_dataSize = fileSize - 8 - headerSize;

    const auto *text = reinterpret_cast<const char *>(m_map + 8);
    const nlohmann::json header = parseHeader(path, text, text + headerSize);
    for (const auto &[name, value] : header.items()) {
        if (name == kMetadataKey)
            m_metadata = parseMetadata(path, value);
        else
            m_entries.emplace(name, parseEntry(path, name, value, m_dataSize));
    }
    checkNoOverlap(path, m_entries);
}

SafetensorsFile::~SafetensorsFile() = default;

Tensor SafetensorsFile::tensor(const std::string &name, NonFinite nonFinite) const
{
    const auto it = m_entries.find(name);
    if (it == m_entries.end())
        throw Error(fieldError(m_path, name, "no such tensor in the file"));
    const Entry &entry = it->second;
    if (entry.dtype != "F32" && entry.dtype != "F16" && entry.dtype != "BF16")
        throw Error(fieldError(m_path, name, "dtype " + entry.dtype + " is not supported (only F32, F16 and BF16)"));
    if (Tensor::count(entry.shape) > int64_t(std::numeric_limits<size_t>::max() / sizeof(float)))
        throw Error(fieldError(m_path, name, "too large to load"));

    Tensor out = Tensor::uninitialized(entry.shape);
    const unsigned char *src = m_dataStart + entry.begin;
    float *dst = out.data();
    const size_t n = static_cast<size_t>(out.numel());
    if (n == 0) // a zero-element tensor has no data pointer, and memcpy to null is undefined
        return out;
    // Both cores: the copy's first touch of the new pages is most of a large checkpoint's reading time. Each block is
    // checked for NaN and infinity, when asked, while it is in the cache.
    const bool f32 = entry.dtype == "F32", half = entry.dtype == "F16";
    std::atomic<bool> refused = false;
    parallelFor(int64_t(n), int64_t(1) << 20, [&](int64_t begin, int64_t end) {
        // The data may sit at any alignment in the mapping, so it is read with memcpy, a block at a time.
        constexpr int64_t kBlock = 4096;
        uint16_t block[kBlock];
        bool bad = false;
        for (int64_t b = begin; b < end; b += kBlock) {
            const int64_t m = std::min(kBlock, end - b);
            if (f32) {
                std::memcpy(dst + b, src + 4 * b, size_t(m) * sizeof(float));
            } else {
                std::memcpy(block, src + 2 * b, size_t(m) * 2);
                if (half)
                    for (int64_t i = 0; i < m; ++i)
                        dst[b + i] = halfToFloat(block[i]);
                else
                    for (int64_t i = 0; i < m; ++i)
                        dst[b + i] = bf16ToFloat(block[i]);
            }
            if (nonFinite == NonFinite::Refuse)
                bad |= !allFinite(dst + b, m);
        }
        if (bad)
            refused = true;
    });
    if (refused)
        throw Error(fieldError(m_path, name, nonFiniteReason(dst, int64_t(n))));
    MappedFile::releasePages(src, entry.end - entry.begin);
    return out;
}

std::span<const unsigned char> SafetensorsFile::bytes(const std::string &name) const
{
    const auto it = m_entries.find(name);
    if (it == m_entries.end())
        throw Error(fieldError(m_path, name, "no such tensor in the file"));
    if (it->second.dtype != "U8")
        throw Error(fieldError(m_path, name, "dtype " + it->second.dtype + " where bytes (U8) are expected"));
    return {m_dataStart + it->second.begin, size_t(it->second.end - it->second.begin)};
}

namespace {

nlohmann::json headerFor(const std::string &path, const std::map<std::string, const Tensor *> &tensors,
    const std::map<std::string, std::string> &metadata, uint64_t &dataBytes)
{
    nlohmann::json header = nlohmann::json::object();
    if (!metadata.empty())
        header[kMetadataKey] = metadata;
    dataBytes = 0;
    for (const auto &[name, tensor] : tensors) {
        if (name == kMetadataKey)
            throw Error(fieldError(path, name, "the name is reserved for metadata"));
        if (!tensor)
            throw Error(fieldError(path, name, "null tensor"));
        if (Tensor::count(tensor->shape()) != tensor->numel())
            throw Error(fieldError(path, name, "shape " + tensor->shapeString() + " does not match its data"));
        header[name] = {
            {"dtype", "F32"}, {"shape", tensor->shape()}, {"data_offsets", {dataBytes, dataBytes + tensor->bytes()}}};
        dataBytes += tensor->bytes();
    }
    return header;
}

} // namespace

void writeSafetensors(const std::string &path, const std::map<std::string, const Tensor *> &tensors,
    const std::map<std::string, std::string> &metadata)
{
    uint64_t dataBytes = 0;
    std::string headerText;
    try {
        headerText = headerFor(path, tensors, metadata, dataBytes).dump();
    } catch (const nlohmann::json::exception &e) {
        throw Error(headerError(path, std::string("cannot encode (") + e.what() + ")"));
    }
    // Padding the header to 8 bytes puts the data section, and so every F32 tensor, at an aligned offset.
    headerText.append((8 - headerText.size() % 8) % 8, ' ');

    std::string file;
    file.reserve(8 + headerText.size() + dataBytes);
    const uint64_t headerSize = headerText.size();
    file.append(reinterpret_cast<const char *>(&headerSize), 8);
    file += headerText;
    for (const auto &[name, tensor] : tensors)
        if (tensor->bytes() > 0)
            file.append(reinterpret_cast<const char *>(tensor->data()), tensor->bytes());
    writeFileAtomically(path, file);
}

SafetensorsCheckpoint::SafetensorsCheckpoint(const std::string &directory)
{
    namespace fs = std::filesystem;
    const fs::path dir(directory);
    const std::string single = (dir / "model.safetensors").string(), index = (dir / kIndexFile).string();
    std::error_code ec;
    if (fs::exists(single, ec) || !fs::exists(index, ec)) {
        if (!fs::exists(single, ec))
            throw Error(single + ": missing (a model directory needs config.json and model.safetensors, or "
                + kIndexFile + " and its shards)");
        m_files.push_back(std::make_unique<SafetensorsFile>(single, openModelFile(single)));
        for (const auto &[name, entry] : m_files.back()->entries())
            m_where[name] = m_files.back().get();
        m_description = single;
        return;
    }
    const nlohmann::json j = parseJson(readModelFile(index, kMaxHeaderBytes), index);
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
        throw Error(index + ": expected an object with a \"weight_map\" of tensor names to shard files");
    std::map<std::string, const SafetensorsFile *> shards;
    for (const auto &[name, file] : j["weight_map"].items()) {
        if (!file.is_string())
            throw Error(index + ": weight_map: tensor '" + shownText(name) + "' must map to a file name, is "
                + shownJson(file));
        const std::string shard = file.get<std::string>();
        if (shard.empty() || shard.size() > 255 || shard == "." || shard == ".." || shard.find('/') != std::string::npos
            || shard.find('\0') != std::string::npos)
            throw Error(index + ": weight_map: tensor '" + shownText(name) + "' maps to '" + shownText(shard)
                + "', which is not a file name in the model's directory");
        auto it = shards.find(shard);
        if (it == shards.end()) {
            const std::string path = (dir / shard).string();
            if (!fs::exists(path, ec))
                throw Error(index + ": weight_map: tensor '" + shownText(name) + "' is in shard '" + shownText(shard)
                    + "', which is missing (" + path + ")");
            m_files.push_back(std::make_unique<SafetensorsFile>(path, openModelFile(path)));
            it = shards.emplace(shard, m_files.back().get()).first;
        }
        if (!it->second->contains(name))
            throw Error(index + ": weight_map: tensor '" + shownText(name) + "' is said to be in '" + shownText(shard)
                + "', which has no such tensor");
        m_where[name] = it->second;
    }
    m_description = index + " (" + std::to_string(m_files.size()) + (m_files.size() == 1 ? " shard)" : " shards)");
}

const SafetensorsFile::Entry &SafetensorsCheckpoint::entry(const std::string &name) const
{
    const auto it = m_where.find(name);
    if (it == m_where.end())
        throw Error(m_description + ": no tensor '" + shownText(name) + "'");
    return it->second->entries().at(name);
}

Tensor SafetensorsCheckpoint::tensor(const std::string &name) const
{
    entry(name);
    return m_where.at(name)->tensor(name, SafetensorsFile::NonFinite::Refuse);
}

bool SafetensorsCheckpoint::containsMxfp4(const std::string &name) const
{
    return contains(name + "_blocks") && contains(name + "_scales");
}

Tensor SafetensorsCheckpoint::mxfp4Tensor(const std::string &name) const
{
    const std::string blocksName = name + "_blocks", scalesName = name + "_scales";
    const Shape &b = entry(blocksName).shape, &s = entry(scalesName).shape;
    const auto fail
        = [&](const std::string &reason) { throw Error(fieldError(pathOf(blocksName), blocksName, reason)); };
    if (b.size() != 4 || b[3] != 16)
        fail("has shape " + Tensor::shapeString(b) + ", not [experts, rows, blocks, 16] (32 four-bit codes a block)");
    if (s != Shape {b[0], b[1], b[2]})
        fail("has shape " + Tensor::shapeString(b) + " but '" + scalesName + "' has " + Tensor::shapeString(s)
            + ": one scale a block");
    const std::span<const unsigned char> codes = m_where.at(blocksName)->bytes(blocksName),
                                         scales = m_where.at(scalesName)->bytes(scalesName);
    const int64_t experts = b[0], rows = experts * b[1], blocks = b[2];
    // Kept as the file holds them, a block at a time: its scale byte, then its 16 code bytes. A value is
    // FP4_VALUES[code] · 2^(e − 127), transformers' decoding (code 8 is −0).
    std::vector<unsigned char> packed(size_t(rows * blocks) * 17);
    for (int64_t k = 0; k < rows * blocks; ++k) {
        const unsigned char scale = scales[size_t(k)];
        const unsigned char *q = codes.data() + k * 16;
        // 2^(e − 127) · |v| overflows float32 from e = 253 (|v| ≥ 4) and e = 254 (|v| ≥ 2): level 6 is 4, level 4 is 2.
        // Only those scales need the block's largest level.
        const auto largest = [q] {
            return std::accumulate(q, q + 16, 0, [](int m, unsigned char c) {
                return std::max({m, int(c & 0x07), int((c >> 4) & 0x07)});
            });
        };
        if (scale == 255 || (scale == 254 && largest() >= 4) || (scale == 253 && largest() >= 6)) {
            const int64_t r = k / blocks;
            throw Error(fieldError(pathOf(scalesName), scalesName,
                "scale [" + std::to_string(r / b[1]) + ", " + std::to_string(r % b[1]) + ", "
                    + std::to_string(k % blocks) + "] is " + std::to_string(scale)
                    + (scale == 255 ? ", E8M0's NaN" : ": 2^" + std::to_string(scale - 127) + " overflows float32")));
        }
        packed[size_t(k) * 17] = scale;
        std::copy_n(q, 16, packed.data() + size_t(k) * 17 + 1);
    }
    MappedFile::releasePages(codes.data(), codes.size()); // copied: the file's pages need not stay resident
    MappedFile::releasePages(scales.data(), scales.size());
    const auto decode = [](const unsigned char *encoded, int64_t elements, float *out) {
        for (int64_t k = 0; k < elements / 32; ++k, encoded += 17, out += 32) {
            const float scale = 2.0f * mxfp4HalfScale(encoded[0]); // 2^(e − 127)
            for (int j = 0; j < 16; ++j) {
                out[2 * j] = kMxfp4Values[encoded[1 + j] & 0x0F] * scale;
                out[2 * j + 1] = kMxfp4Values[encoded[1 + j] >> 4] * scale;
            }
        }
    };
    const auto matrix = std::make_shared<const PackedRows>(
        rows, 32 * blocks, size_t(blocks) * 17, "MXFP4", decode, std::move(packed));
    return Tensor::packed(matrix->asTransposedStacks(experts));
}

const std::string &SafetensorsCheckpoint::pathOf(const std::string &name) const
{
    entry(name);
    return m_where.at(name)->path();
}

std::string SafetensorsCheckpoint::dtype() const
{
    std::set<std::string> kinds;
    bool mxfp4 = false;
    for (const auto &[name, file] : m_where) {
        const std::string &d = file->entries().at(name).dtype;
        if (d == "F32" || d == "F16" || d == "BF16")
            kinds.insert(d);
        else if (name.ends_with("_blocks") && containsMxfp4(name.substr(0, name.size() - 7)))
            mxfp4 = true;
    }
    const std::string floating = kinds.size() == 1 ? *kinds.begin() : kinds.empty() ? "none" : "mixed";
    return mxfp4 ? floating + " with MXFP4 experts" : floating;
}

} // namespace atlas
