#pragma once

#include "io/ggmltypes.h"
#include "io/safetensors.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace atlas {

class MappedFile;

// A metadata value of a GGUF file: one of GGUF's scalar types, a string, or an array of one of those.
struct GgufValue
{
    // GGUF's gguf_type numbers.
    enum class Type : uint32_t {
        UInt8 = 0,
        Int8 = 1,
        UInt16 = 2,
        Int16 = 3,
        UInt32 = 4,
        Int32 = 5,
        Float32 = 6,
        Bool = 7,
        String = 8,
        Array = 9,
        UInt64 = 10,
        Int64 = 11,
        Float64 = 12,
    };
    Type type = Type::UInt8;
    Type elementType = Type::UInt8; // an array's
    // A scalar in its widest kind (an unsigned type in uint64_t, a signed one in int64_t, a float in double, a bool in
    // uint64_t), a string, or an array's elements.
    std::variant<uint64_t, int64_t, double, std::string, std::vector<uint64_t>, std::vector<int64_t>,
        std::vector<double>, std::vector<std::string>>
        value;

    static const char *typeName(Type type); // "uint32", "string", "array"
    std::string describe() const; // "uint32", "array of 32000 string"
};

// A GGUF file (llama.cpp's model format, versions 2 and 3): typed key/value metadata, then tensor infos, then the
// aligned data section. The file is memory-mapped; every count, length, shape, type and offset is checked against the
// file before it is used, and a file that fails any check is refused whole with atlas::Error naming the file and the
// key or tensor. Version 1 and big-endian files are refused by name.
class GgufFile
{
public:
    struct Entry
    {
        std::string name;
        Shape shape; // row-major, outermost first: GGUF's ne[] reversed ([rows, columns] of a matrix)
        GgmlType type = GgmlType::F32;
        uint64_t offset = 0; // into the data section
        uint64_t bytes = 0;
    };

    explicit GgufFile(const std::string &path);
    // The same from a descriptor opened for `path`, which it closes.
    GgufFile(const std::string &path, int fd);
    ~GgufFile();
    GgufFile(const GgufFile &) = delete;
    GgufFile &operator=(const GgufFile &) = delete;

    const std::string &path() const { return m_path; }
    uint32_t version() const { return m_version; }
    uint64_t alignment() const { return m_alignment; }
    const std::map<std::string, GgufValue> &metadata() const { return m_metadata; }
    // The tensors in the file's order, and by name.
    const std::vector<Entry> &entries() const { return m_entries; }
    const Entry *find(const std::string &name) const;

    // Typed reads of metadata: a missing key or another type throws atlas::Error naming the file and the key. An
    // integer of any width and signedness is accepted where it fits.
    bool has(const std::string &key) const { return m_metadata.count(key) != 0; }
    uint64_t unsignedValue(const std::string &key) const;
    double number(const std::string &key) const; // a float or an integer
    bool boolean(const std::string &key) const;
    const std::string &string(const std::string &key) const;
    const std::vector<std::string> &strings(const std::string &key) const;
    std::vector<double> numbers(const std::string &key) const;
    std::vector<int64_t> integers(const std::string &key) const;
    std::string byteArray(const std::string &key) const; // an array of uint8 or int8, as bytes

    // The tensor's raw blocks, as the file holds them.
    const unsigned char *data(const Entry &entry) const;
    // The named tensor dequantized to float32; throws atlas::Error for an unknown name, and with NonFinite::Refuse for
    // a NaN or an infinity, naming the element.
    Tensor tensor(
        const std::string &name, SafetensorsFile::NonFinite nonFinite = SafetensorsFile::NonFinite::Keep) const;

    // The named tensor, [rows, columns] with every outer dimension in its rows, kept in the file's encoding
    // (Tensor::packed; a copy, so the file may change or go afterwards). Its values are checked as by tensor() with
    // NonFinite::Refuse, a few rows at a time.
    Tensor packedTensor(const std::string &name) const;

private:
    std::string m_path;
    std::unique_ptr<MappedFile> m_file;
    uint32_t m_version = 0;
    uint64_t m_alignment = 32;
    std::map<std::string, GgufValue> m_metadata;
    std::vector<Entry> m_entries;
    std::map<std::string, size_t> m_byName;
    const unsigned char *m_dataStart = nullptr;
};

} // namespace atlas
