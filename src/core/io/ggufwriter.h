#pragma once

#include "io/gguf.h"

#include <string>
#include <utility>
#include <vector>

namespace atlas {

// Builds a GGUF file (version 3, little-endian, data aligned to 32 bytes) as llama.cpp's gguf-py writes one: the
// metadata in the order it was set, then the tensor infos and the tensors in the order they were added.
class GgufWriter
{
public:
    void setString(const std::string &key, const std::string &value);
    void setUInt32(const std::string &key, uint32_t value);
    void setInt32(const std::string &key, int32_t value);
    void setFloat32(const std::string &key, float value);
    void setBool(const std::string &key, bool value);
    void setStrings(const std::string &key, const std::vector<std::string> &values);
    void setInt32s(const std::string &key, const std::vector<int32_t> &values);
    void setFloat32s(const std::string &key, const std::vector<float> &values);
    void setBytes(const std::string &key, const std::string &bytes); // an array of uint8
    // A value as a GgufFile read it (a key copied from another file).
    void set(const std::string &key, const GgufValue &value);

    // `bytes` hold the tensor's blocks of `type`; `shape` is row-major ([rows, columns]), as GgufFile::Entry's.
    void addTensor(const std::string &name, const Shape &shape, GgmlType type, std::string bytes);

    // The whole file.
    std::string bytes() const;

private:
    std::vector<std::pair<std::string, GgufValue>> m_metadata;
    struct Stored
    {
        std::string name;
        Shape shape;
        GgmlType type;
        std::string bytes;
    };
    std::vector<Stored> m_tensors;
};

} // namespace atlas
