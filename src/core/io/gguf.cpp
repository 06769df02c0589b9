#include "io/gguf.h"

#include "io/atomicfile.h"
#include "io/mappedfile.h"
#include "io/weightvalues.h"
#include "tensor/packedrows.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/text.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace atlas {

static_assert(std::endian::native == std::endian::little, "GGUF files are read as little-endian");

namespace {

constexpr int kMaxDimensions = 4; // GGML_MAX_DIMS
constexpr uint64_t kMaxKeyBytes = 65535;

std::string typeList()
{
    return "it reads " + readGgmlTypeNames();
}

// Reads the header's fields in order, each checked against the bytes left; `what` names the field in a refusal.
class Cursor
{
public:
    Cursor(const std::string &path, const unsigned char *begin, size_t size)
        : m_path(path)
        , m_begin(begin)
        , m_size(size)
    {
    }

    uint64_t offset() const { return m_at; }
    uint64_t left() const { return m_size - m_at; }

    [[noreturn]] void fail(const std::string &what, const std::string &reason) const
    {
        throw Error(m_path + ": " + what + ": " + reason);
    }

    void need(uint64_t bytes, const std::string &what) const
    {
        if (bytes > left())
            fail(what,
                "needs " + std::to_string(bytes) + " bytes at offset " + std::to_string(m_at) + ", but the file ends "
                    + std::to_string(left()) + " bytes later (truncated file?)");
    }

    template <typename T> T scalar(const std::string &what)
    {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, m_begin + m_at, sizeof(T));
        m_at += sizeof(T);
        return v;
    }

    std::string string(const std::string &what, uint64_t maxBytes = std::numeric_limits<uint64_t>::max())
    {
        const uint64_t length = scalar<uint64_t>(what);
        if (length > maxBytes)
            fail(what,
                "a string of " + std::to_string(length) + " bytes, more than the " + std::to_string(maxBytes)
                    + " allowed");
        need(length, what);
        std::string s(reinterpret_cast<const char *>(m_begin + m_at), size_t(length));
        m_at += length;
        return s;
    }

    // An element count of `what`, refused when the bytes left cannot hold that many of at least `minBytes` each.
    uint64_t count(const std::string &what, uint64_t minBytes)
    {
        const uint64_t n = scalar<uint64_t>(what);
        if (n > left() / minBytes)
            fail(what,
                "a count of " + std::to_string(n) + ", more than the " + std::to_string(left())
                    + " bytes left can hold (truncated file?)");
        return n;
    }

private:
    const std::string &m_path;
    const unsigned char *m_begin;
    uint64_t m_size;
    uint64_t m_at = 0;
};

using Type = GgufValue::Type;

// Bytes of a scalar of `type`, or 0 for a string or an array.
uint64_t scalarBytes(Type type)
{
    switch (type) {
    case Type::UInt8:
    case Type::Int8:
    case Type::Bool:
        return 1;
    case Type::UInt16:
    case Type::Int16:
        return 2;
    case Type::UInt32:
    case Type::Int32:
    case Type::Float32:
        return 4;
    case Type::UInt64:
    case Type::Int64:
    case Type::Float64:
        return 8;
    default:
        return 0;
    }
}

bool isKnown(uint32_t type)
{
    return type <= uint32_t(Type::Float64);
}

bool isSigned(Type t)
{
    return t == Type::Int8 || t == Type::Int16 || t == Type::Int32 || t == Type::Int64;
}

bool isFloat(Type t)
{
    return t == Type::Float32 || t == Type::Float64;
}

template <typename T> T read(Cursor &c, Type type, const std::string &what)
{
    switch (type) {
    case Type::UInt8:
        return T(c.scalar<uint8_t>(what));
    case Type::Int8:
        return T(c.scalar<int8_t>(what));
    case Type::UInt16:
        return T(c.scalar<uint16_t>(what));
    case Type::Int16:
        return T(c.scalar<int16_t>(what));
    case Type::UInt32:
        return T(c.scalar<uint32_t>(what));
    case Type::Int32:
        return T(c.scalar<int32_t>(what));
    case Type::Float32:
        return T(c.scalar<float>(what));
    case Type::UInt64:
        return T(c.scalar<uint64_t>(what));
    case Type::Int64:
        return T(c.scalar<int64_t>(what));
    case Type::Float64:
        return T(c.scalar<double>(what));
    case Type::Bool: {
        const uint8_t b = c.scalar<uint8_t>(what);
        if (b > 1)
            c.fail(what, "a bool holding " + std::to_string(b) + ", neither 0 nor 1");
        return T(b);
    }
    default:
        c.fail(what, "not a scalar");
    }
}

GgufValue readValue(Cursor &c, const std::string &what)
{
    GgufValue v;
    const uint32_t type = c.scalar<uint32_t>(what + "'s type");
    if (!isKnown(type))
        c.fail(what, "value type " + std::to_string(type) + ", which GGUF does not define (0 to 12)");
    v.type = Type(type);
    if (v.type == Type::String) {
        v.value = c.string(what);
        return v;
    }
    if (v.type != Type::Array) {
        if (isFloat(v.type))
            v.value = read<double>(c, v.type, what);
        else if (isSigned(v.type))
            v.value = read<int64_t>(c, v.type, what);
        else
            v.value = read<uint64_t>(c, v.type, what);
        return v;
    }
    const uint32_t element = c.scalar<uint32_t>(what + "'s element type");
    if (!isKnown(element))
        c.fail(what, "an array of type " + std::to_string(element) + ", which GGUF does not define (0 to 12)");
    v.elementType = Type(element);
    if (v.elementType == Type::Array)
        c.fail(what, "an array of arrays, which llama.cpp does not read either");
    const uint64_t n = c.count(what + "'s length", v.elementType == Type::String ? 8 : scalarBytes(v.elementType));
    if (v.elementType == Type::String) {
        std::vector<std::string> strings(n);
        for (uint64_t i = 0; i < n; ++i)
            strings[i] = c.string(what + "[" + std::to_string(i) + "]");
        v.value = std::move(strings);
    } else if (isFloat(v.elementType)) {
        std::vector<double> numbers(n);
        for (uint64_t i = 0; i < n; ++i)
            numbers[i] = read<double>(c, v.elementType, what);
        v.value = std::move(numbers);
    } else if (isSigned(v.elementType)) {
        std::vector<int64_t> numbers(n);
        for (uint64_t i = 0; i < n; ++i)
            numbers[i] = read<int64_t>(c, v.elementType, what);
        v.value = std::move(numbers);
    } else {
        std::vector<uint64_t> numbers(n);
        for (uint64_t i = 0; i < n; ++i)
            numbers[i] = read<uint64_t>(c, v.elementType, what + "[" + std::to_string(i) + "]");
        v.value = std::move(numbers);
    }
    return v;
}

std::string tensorWhat(uint64_t i, const std::string &name)
{
    return "tensor " + std::to_string(i) + (name.empty() ? "" : " '" + shownText(name) + "'");
}

GgufFile::Entry readEntry(Cursor &c, uint64_t index)
{
    GgufFile::Entry e;
    e.name = c.string(tensorWhat(index, "") + "'s name", kMaxKeyBytes);
    const std::string what = tensorWhat(index, e.name);
    const uint32_t dims = c.scalar<uint32_t>(what + "'s dimension count");
    if (dims == 0 || dims > kMaxDimensions)
        c.fail(what, std::to_string(dims) + " dimensions (ggml's tensors have 1 to 4)");
    std::vector<uint64_t> ne(dims);
    for (uint32_t d = 0; d < dims; ++d) {
        ne[d] = c.scalar<uint64_t>(what + "'s dimensions");
        if (ne[d] > uint64_t(std::numeric_limits<int64_t>::max()))
            c.fail(what, "dimension " + std::to_string(d) + " is " + std::to_string(ne[d]) + ", beyond 2^63");
    }
    const uint32_t type = c.scalar<uint32_t>(what + "'s type");
    const GgmlTypeInfo *info = ggmlTypeInfo(type);
    if (!info)
        c.fail(what, "type " + std::to_string(type) + ", which ggml does not define (" + typeList() + ")");
    if (!info->read())
        c.fail(what, "type " + std::string(info->name) + ", which this program does not read (" + typeList() + ")");
    e.type = GgmlType(type);
    e.offset = c.scalar<uint64_t>(what + "'s offset");
    if (ne[0] % uint64_t(info->blockElements) != 0)
        c.fail(what,
            "its rows of " + std::to_string(ne[0]) + " elements are not whole blocks of "
                + std::to_string(info->blockElements) + " (" + info->name + ")");
    uint64_t numel = 1;
    for (uint64_t n : ne)
        if (__builtin_mul_overflow(numel, n, &numel) || numel > uint64_t(std::numeric_limits<int64_t>::max()))
            c.fail(what, "its dimensions' product overflows");
    if (__builtin_mul_overflow(numel / uint64_t(info->blockElements), uint64_t(info->blockBytes), &e.bytes))
        c.fail(what, "its size overflows");
    for (auto d = ne.rbegin(); d != ne.rend(); ++d)
        e.shape.push_back(int64_t(*d));
    return e;
}

} // namespace

const char *GgufValue::typeName(Type type)
{
    static const char *const names[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool",
        "string", "array", "uint64", "int64", "float64"};
    return names[size_t(type)];
}

std::string GgufValue::describe() const
{
    if (type != Type::Array)
        return typeName(type);
    const size_t n = std::visit(
        [](const auto &v) -> size_t {
            if constexpr (requires { v.size(); } && !std::is_same_v<std::decay_t<decltype(v)>, std::string>)
                return v.size();
            else
                return 0;
        },
        value);
    return "array of " + std::to_string(n) + " " + typeName(elementType);
}

GgufFile::GgufFile(const std::string &path)
    : GgufFile(path, openRegularFile(path))
{
}

GgufFile::GgufFile(const std::string &path, int fd)
    : m_path(path)
    , m_file(std::make_unique<MappedFile>(path, fd))
{
    Cursor c(m_path, m_file->data(), m_file->size());
    c.scalar<uint32_t>("header (the magic GGUF)"); // four bytes there, or the file is refused as truncated
    if (std::memcmp(m_file->data(), "GGUF", 4) != 0) {
        std::string shown;
        for (int i = 0; i < 4; ++i) {
            const unsigned char b = m_file->data()[i];
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02X", b);
            shown += b >= 0x20 && b < 0x7F ? std::string(1, char(b)) : std::string(hex);
        }
        c.fail("header", "not a GGUF file: it begins with '" + shown + "', not 'GGUF'");
    }
    m_version = c.scalar<uint32_t>("header (version)");
    if (m_version != 0 && (m_version & 0xFFFF) == 0)
        c.fail("header",
            "a big-endian GGUF file (version field " + std::to_string(m_version)
                + "), which this program does not read: convert the model again on a little-endian machine");
    if (m_version == 1)
        c.fail("header",
            "GGUF version 1 (a 2023 file), which this program does not read: convert the model again "
            "with a current llama.cpp");
    if (m_version != 2 && m_version != 3)
        c.fail("header", "GGUF version " + std::to_string(m_version) + "; this program reads versions 2 and 3");
    const uint64_t tensorCount = c.scalar<uint64_t>("header (tensor count)");
    const uint64_t keyCount = c.count("header (metadata count)", 8 + 4 + 1);
    if (tensorCount > c.left() / 24)
        c.fail("header (tensor count)",
            "a count of " + std::to_string(tensorCount) + ", more than the " + std::to_string(c.left())
                + " bytes left can hold (truncated file?)");

    for (uint64_t i = 0; i < keyCount; ++i) {
        std::string key = c.string("metadata entry " + std::to_string(i) + "'s key", kMaxKeyBytes);
        const std::string what = "metadata key '" + shownText(key) + "'";
        GgufValue value = readValue(c, what);
        if (!m_metadata.emplace(std::move(key), std::move(value)).second)
            c.fail(what, "appears twice");
    }
    if (const auto it = m_metadata.find("general.alignment"); it != m_metadata.end()) {
        const auto *a = std::get_if<uint64_t>(&it->second.value);
        if (!a || it->second.type == Type::Bool || *a == 0 || (*a & (*a - 1)) != 0 || *a > (uint64_t(1) << 30))
            c.fail("metadata key 'general.alignment'",
                "must be a power of two up to 2^30, not a " + it->second.describe());
        m_alignment = *a;
    }

    for (uint64_t i = 0; i < tensorCount; ++i) {
        Entry e = readEntry(c, i);
        if (!m_byName.emplace(e.name, m_entries.size()).second)
            c.fail(tensorWhat(i, e.name), "a second tensor of that name");
        m_entries.push_back(std::move(e));
    }

    const uint64_t dataStart = (c.offset() + m_alignment - 1) / m_alignment * m_alignment;
    const uint64_t fileSize = m_file->size();
    if (dataStart > fileSize && !m_entries.empty())
        c.fail("data section",
            "begins at offset " + std::to_string(dataStart) + ", past the end of the " + std::to_string(fileSize)
                + "-byte file (truncated file?)");
    const uint64_t dataSize = dataStart < fileSize ? fileSize - dataStart : 0;
    m_dataStart = m_file->data() + std::min(dataStart, fileSize);

    std::vector<const Entry *> byOffset;
    for (const Entry &e : m_entries) {
        const std::string what = tensorWhat(m_byName[e.name], e.name);
        if (e.offset % m_alignment != 0)
            c.fail(what,
                "offset " + std::to_string(e.offset) + " is not a multiple of the alignment "
                    + std::to_string(m_alignment));
        if (e.offset > dataSize || e.bytes > dataSize - e.offset)
            c.fail(what,
                "its " + std::to_string(e.bytes) + " bytes at offset " + std::to_string(e.offset)
                    + " lie outside the data section of " + std::to_string(dataSize) + " bytes (truncated file?)");
        byOffset.push_back(&e);
    }
    std::sort(byOffset.begin(), byOffset.end(), [](const Entry *a, const Entry *b) { return a->offset < b->offset; });
    for (size_t i = 1; i < byOffset.size(); ++i)
        if (byOffset[i]->offset < byOffset[i - 1]->offset + byOffset[i - 1]->bytes)
            c.fail(tensorWhat(m_byName[byOffset[i]->name], byOffset[i]->name),
                "its data overlaps that of tensor '" + shownText(byOffset[i - 1]->name) + "'");
}

GgufFile::~GgufFile() = default;

const GgufFile::Entry *GgufFile::find(const std::string &name) const
{
    const auto it = m_byName.find(name);
    return it == m_byName.end() ? nullptr : &m_entries[it->second];
}

namespace {

[[noreturn]] void keyError(const std::string &path, const std::string &key, const std::string &reason)
{
    throw Error(path + ": metadata key '" + shownText(key) + "': " + reason);
}

const GgufValue &valueOf(
    const std::string &path, const std::map<std::string, GgufValue> &metadata, const std::string &key)
{
    const auto it = metadata.find(key);
    if (it == metadata.end())
        keyError(path, key, "missing");
    return it->second;
}

} // namespace

uint64_t GgufFile::unsignedValue(const std::string &key) const
{
    const GgufValue &v = valueOf(m_path, m_metadata, key);
    if (v.type != Type::Bool)
        if (const auto *u = std::get_if<uint64_t>(&v.value))
            return *u;
    if (const auto *i = std::get_if<int64_t>(&v.value); i && *i >= 0)
        return uint64_t(*i);
    keyError(m_path, key, "expected a non-negative integer, found a " + v.describe());
}

double GgufFile::number(const std::string &key) const
{
    const GgufValue &v = valueOf(m_path, m_metadata, key);
    if (const auto *d = std::get_if<double>(&v.value))
        return *d;
    if (v.type != Type::Bool) {
        if (const auto *u = std::get_if<uint64_t>(&v.value))
            return double(*u);
        if (const auto *i = std::get_if<int64_t>(&v.value))
            return double(*i);
    }
    keyError(m_path, key, "expected a number, found a " + v.describe());
}

bool GgufFile::boolean(const std::string &key) const
{
    const GgufValue &v = valueOf(m_path, m_metadata, key);
    if (v.type != Type::Bool)
        keyError(m_path, key, "expected a bool, found a " + v.describe());
    return std::get<uint64_t>(v.value) != 0;
}

const std::string &GgufFile::string(const std::string &key) const
{
    const GgufValue &v = valueOf(m_path, m_metadata, key);
    if (v.type != Type::String)
        keyError(m_path, key, "expected a string, found a " + v.describe());
    return std::get<std::string>(v.value);
}

const std::vector<std::string> &GgufFile::strings(const std::string &key) const
{
    const GgufValue &v = valueOf(m_path, m_metadata, key);
    if (v.type != Type::Array || v.elementType != Type::String)
        keyError(m_path, key, "expected an array of strings, found a " + v.describe());
    return std::get<std::vector<std::string>>(v.value);
}

std::vector<double> GgufFile::numbers(const std::string &key) const
{
    const GgufValue &v = valueOf(m_path, m_metadata, key);
    if (v.type == Type::Array && v.elementType != Type::Bool) {
        if (const auto *d = std::get_if<std::vector<double>>(&v.value))
            return *d;
        if (const auto *u = std::get_if<std::vector<uint64_t>>(&v.value))
            return {u->begin(), u->end()};
        if (const auto *i = std::get_if<std::vector<int64_t>>(&v.value))
            return {i->begin(), i->end()};
    }
    keyError(m_path, key, "expected an array of numbers, found a " + v.describe());
}

std::vector<int64_t> GgufFile::integers(const std::string &key) const
{
    const GgufValue &v = valueOf(m_path, m_metadata, key);
    if (v.type == Type::Array && v.elementType != Type::Bool) {
        if (const auto *i = std::get_if<std::vector<int64_t>>(&v.value))
            return *i;
        if (const auto *u = std::get_if<std::vector<uint64_t>>(&v.value)) {
            std::vector<int64_t> out;
            out.reserve(u->size());
            for (uint64_t x : *u) {
                if (x > uint64_t(std::numeric_limits<int64_t>::max()))
                    keyError(m_path, key, "holds " + std::to_string(x) + ", beyond 2^63");
                out.push_back(int64_t(x));
            }
            return out;
        }
    }
    keyError(m_path, key, "expected an array of integers, found a " + v.describe());
}

std::string GgufFile::byteArray(const std::string &key) const
{
    const GgufValue &v = valueOf(m_path, m_metadata, key);
    if (v.type != Type::Array || (v.elementType != Type::UInt8 && v.elementType != Type::Int8))
        keyError(m_path, key, "expected an array of uint8 or int8, found a " + v.describe());
    std::string out;
    if (const auto *u = std::get_if<std::vector<uint64_t>>(&v.value))
        for (uint64_t x : *u)
            out.push_back(static_cast<char>(x));
    else
        for (int64_t x : std::get<std::vector<int64_t>>(v.value))
            out.push_back(static_cast<char>(x));
    return out;
}

const unsigned char *GgufFile::data(const Entry &entry) const
{
    return m_dataStart + entry.offset;
}

Tensor GgufFile::tensor(const std::string &name, SafetensorsFile::NonFinite nonFinite) const
{
    const Entry *entry = find(name);
    const std::string what = m_path + ": tensor '" + shownText(name) + "': ";
    if (!entry)
        throw Error(what + "no such tensor in the file");
    const int64_t n = Tensor::count(entry->shape);
    if (n > int64_t(std::numeric_limits<size_t>::max() / sizeof(float)))
        throw Error(what + "too large to load");
    Tensor out = Tensor::uninitialized(entry->shape);
    if (n == 0)
        return out;
    const GgmlTypeInfo &t = ggmlTypeInfo(entry->type);
    const unsigned char *src = data(*entry);
    float *dst = out.data();
    std::atomic<bool> refused = false;
    // Whole rows of blocks to each core; a block's values are checked while they are in the cache.
    const int64_t blocks = n / t.blockElements;
    parallelFor(blocks, std::max<int64_t>(1, (int64_t(1) << 18) / t.blockElements), [&](int64_t begin, int64_t end) {
        dequantizeGgml(
            entry->type, src + begin * t.blockBytes, (end - begin) * t.blockElements, dst + begin * t.blockElements);
        if (nonFinite == SafetensorsFile::NonFinite::Refuse
            && !allFinite(dst + begin * t.blockElements, (end - begin) * t.blockElements))
            refused = true;
    });
    if (refused)
        throw Error(what + nonFiniteReason(dst, n));
    return out;
}

Tensor GgufFile::packedTensor(const std::string &name) const
{
    const Entry *entry = find(name);
    const std::string what = m_path + ": tensor '" + shownText(name) + "': ";
    if (!entry)
        throw Error(what + "no such tensor in the file");
    if (entry->shape.size() < 2)
        throw Error(what + "a vector is not kept packed");
    const GgmlTypeInfo &t = ggmlTypeInfo(entry->type);
    const int64_t columns = entry->shape.back(), rows = Tensor::count(entry->shape) / std::max<int64_t>(1, columns);
    const size_t rowBytes = size_t(columns / t.blockElements) * t.blockBytes;
    const unsigned char *src = data(*entry);
    // Checked a piece at a time on every core: a row's values are looked at while they are in the cache.
    std::atomic<int64_t> firstRefused = rows;
    const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(1, columns));
    parallelFor(rows, grain, [&](int64_t begin, int64_t end) {
        std::vector<float> values(size_t(std::min(grain, end - begin) * columns));
        for (int64_t r = begin; r < end; r += grain) {
            const int64_t n = std::min(grain, end - r);
            dequantizeGgml(entry->type, src + size_t(r) * rowBytes, n * columns, values.data());
            if (!allFinite(values.data(), n * columns)) {
                const int64_t bad = r
                    + (std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); })
                          - values.begin())
                        / columns;
                int64_t seen = firstRefused.load();
                while (bad < seen && !firstRefused.compare_exchange_weak(seen, bad)) { }
                return;
            }
        }
    });
    if (firstRefused < rows) {
        const int64_t r = firstRefused;
        std::vector<float> row(static_cast<size_t>(columns));
        dequantizeGgml(entry->type, src + size_t(r) * rowBytes, columns, row.data());
        throw Error(what + "row " + std::to_string(r) + " " + nonFiniteReason(row.data(), columns));
    }
    const GgmlType type = entry->type;
    return Tensor::packed(std::make_shared<const PackedRows>(
        rows, columns, rowBytes, t.name,
        [type](const unsigned char *encoded, int64_t n, float *out) { dequantizeGgml(type, encoded, n, out); },
        std::vector<unsigned char>(src, src + size_t(rows) * rowBytes),
        [type](const unsigned char *encoded, int64_t count, int64_t columns, const float *x, float *out,
            bool accumulate) { return dotGgmlRows(type, encoded, count, columns, x, out, accumulate); }));
}

} // namespace atlas
