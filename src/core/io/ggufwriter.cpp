#include "io/ggufwriter.h"

#include "util/error.h"

#include <cstring>

namespace atlas {

namespace {

constexpr uint64_t kAlignment = 32; // general.alignment's default: the key is not written

template <typename T> void put(std::string &out, T value)
{
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.append(bytes, sizeof(T));
}

void putString(std::string &out, const std::string &s)
{
    put<uint64_t>(out, s.size());
    out += s;
}

using Type = GgufValue::Type;

// One scalar of `type` whose value a GgufValue holds in its widest kind.
void putScalar(std::string &out, Type type, uint64_t u, int64_t i, double f)
{
    switch (type) {
    case Type::UInt8:
        put<uint8_t>(out, uint8_t(u));
        break;
    case Type::Int8:
        put<int8_t>(out, int8_t(i));
        break;
    case Type::UInt16:
        put<uint16_t>(out, uint16_t(u));
        break;
    case Type::Int16:
        put<int16_t>(out, int16_t(i));
        break;
    case Type::UInt32:
        put<uint32_t>(out, uint32_t(u));
        break;
    case Type::Int32:
        put<int32_t>(out, int32_t(i));
        break;
    case Type::Float32:
        put<float>(out, float(f));
        break;
    case Type::Bool:
        put<uint8_t>(out, u ? 1 : 0);
        break;
    case Type::UInt64:
        put<uint64_t>(out, u);
        break;
    case Type::Int64:
        put<int64_t>(out, i);
        break;
    case Type::Float64:
        put<double>(out, f);
        break;
    case Type::String:
    case Type::Array:
        throw Error("GGUF writer: not a scalar type");
    }
}

void putValue(std::string &out, const GgufValue &v)
{
    put<uint32_t>(out, uint32_t(v.type));
    if (v.type == Type::String) {
        putString(out, std::get<std::string>(v.value));
        return;
    }
    if (v.type != Type::Array) {
        if (const auto *u = std::get_if<uint64_t>(&v.value))
            putScalar(out, v.type, *u, 0, 0);
        else if (const auto *i = std::get_if<int64_t>(&v.value))
            putScalar(out, v.type, 0, *i, 0);
        else
            putScalar(out, v.type, 0, 0, std::get<double>(v.value));
        return;
    }
    put<uint32_t>(out, uint32_t(v.elementType));
    std::visit(
        [&](const auto &values) {
            using V = std::decay_t<decltype(values)>;
            if constexpr (std::is_same_v<V, std::vector<std::string>>) {
                put<uint64_t>(out, values.size());
                for (const std::string &s : values)
                    putString(out, s);
            } else if constexpr (std::is_same_v<V, std::vector<uint64_t>>) {
                put<uint64_t>(out, values.size());
                for (uint64_t u : values)
                    putScalar(out, v.elementType, u, 0, 0);
            } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
                put<uint64_t>(out, values.size());
                for (int64_t i : values)
                    putScalar(out, v.elementType, 0, i, 0);
            } else if constexpr (std::is_same_v<V, std::vector<double>>) {
                put<uint64_t>(out, values.size());
                for (double f : values)
                    putScalar(out, v.elementType, 0, 0, f);
            } else {
                throw Error("GGUF writer: an array without elements of a known kind");
            }
        },
        v.value);
}

GgufValue scalar(Type type, decltype(GgufValue::value) value)
{
    GgufValue v;
    v.type = type;
    v.value = std::move(value);
    return v;
}

GgufValue array(Type elementType, decltype(GgufValue::value) values)
{
    GgufValue v;
    v.type = Type::Array;
    v.elementType = elementType;
    v.value = std::move(values);
    return v;
}

void pad(std::string &out)
{
    out.append(size_t((kAlignment - out.size() % kAlignment) % kAlignment), '\0');
}

} // namespace

void GgufWriter::set(const std::string &key, const GgufValue &value)
{
    for (auto &[k, v] : m_metadata)
        if (k == key) {
            v = value;
            return;
        }
    m_metadata.emplace_back(key, value);
}

void GgufWriter::setString(const std::string &key, const std::string &value)
{
    set(key, scalar(Type::String, value));
}

void GgufWriter::setUInt32(const std::string &key, uint32_t value)
{
    set(key, scalar(Type::UInt32, uint64_t(value)));
}

void GgufWriter::setInt32(const std::string &key, int32_t value)
{
    set(key, scalar(Type::Int32, int64_t(value)));
}

void GgufWriter::setFloat32(const std::string &key, float value)
{
    set(key, scalar(Type::Float32, double(value)));
}

void GgufWriter::setBool(const std::string &key, bool value)
{
    set(key, scalar(Type::Bool, uint64_t(value)));
}

void GgufWriter::setStrings(const std::string &key, const std::vector<std::string> &values)
{
    set(key, array(Type::String, values));
}

void GgufWriter::setInt32s(const std::string &key, const std::vector<int32_t> &values)
{
    set(key, array(Type::Int32, std::vector<int64_t>(values.begin(), values.end())));
}

void GgufWriter::setFloat32s(const std::string &key, const std::vector<float> &values)
{
    set(key, array(Type::Float32, std::vector<double>(values.begin(), values.end())));
}

void GgufWriter::setBytes(const std::string &key, const std::string &bytes)
{
    std::vector<uint64_t> values;
    values.reserve(bytes.size());
    for (const unsigned char b : bytes)
        values.push_back(b);
    set(key, array(Type::UInt8, std::move(values)));
}

void GgufWriter::addTensor(const std::string &name, const Shape &shape, GgmlType type, std::string bytes)
{
    const GgmlTypeInfo &info = ggmlTypeInfo(type);
    const int64_t elements = Tensor::count(shape);
    if (shape.empty() || shape.back() % info.blockElements != 0
        || uint64_t(bytes.size()) != uint64_t(elements / info.blockElements * info.blockBytes))
        throw Error("GGUF writer: tensor '" + name + "' of shape " + Tensor::shapeString(shape) + " does not hold "
            + std::to_string(bytes.size()) + " bytes of " + info.name);
    m_tensors.push_back({name, shape, type, std::move(bytes)});
}

std::string GgufWriter::bytes() const
{
    std::string out = "GGUF";
    put<uint32_t>(out, 3);
    put<uint64_t>(out, m_tensors.size());
    put<uint64_t>(out, m_metadata.size());
    for (const auto &[key, value] : m_metadata) {
        putString(out, key);
        putValue(out, value);
    }
    uint64_t offset = 0;
    for (const Stored &t : m_tensors) {
        putString(out, t.name);
        put<uint32_t>(out, uint32_t(t.shape.size()));
        for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) // ne[0] is the innermost dimension
            put<uint64_t>(out, uint64_t(*d));
        put<uint32_t>(out, uint32_t(t.type));
        put<uint64_t>(out, offset);
        offset += (t.bytes.size() + kAlignment - 1) / kAlignment * kAlignment;
    }
    pad(out);
    for (const Stored &t : m_tensors) {
        out += t.bytes;
        pad(out);
    }
    return out;
}

} // namespace atlas
