#pragma once

#include "tensor/tensor.h"

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace atlas {

class MappedFile;

// Reads and writes the safetensors format (an 8-byte little-endian header length, a JSON header of
// {name: {dtype, shape, data_offsets}}, then the raw data). Reads F32, F16 and BF16 (converted to float32),
// writes F32. The file is memory-mapped; every size, offset, shape and dtype is validated before any read,
// and an invalid file raises atlas::Error naming the file, the tensor and the reason.
class SafetensorsFile
{
public:
    struct Entry
    {
        std::string dtype; // "F32", "F16", "BF16" (others are listed but refused by tensor())
        Shape shape;
        uint64_t begin = 0; // byte offsets into the data section
        uint64_t end = 0;
    };

    explicit SafetensorsFile(const std::string &path);
    // The same from a descriptor opened for `path` (openModelFile's), which it closes.
    SafetensorsFile(const std::string &path, int fd);
    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile &) = delete;
    SafetensorsFile &operator=(const SafetensorsFile &) = delete;

    const std::string &path() const { return m_path; }
    const std::map<std::string, Entry> &entries() const { return m_entries; }
    const std::map<std::string, std::string> &metadata() const { return m_metadata; }
    bool contains(const std::string &name) const { return m_entries.count(name) != 0; }

    // The named tensor converted to float32; throws atlas::Error for an unknown name or unsupported dtype, and with
    // NonFinite::Refuse for a NaN or an infinity ("holds 3 values that are not a finite number, the first element 17
    // of 768 (NaN)…"), checked block by block as it is converted.
    enum class NonFinite { Keep, Refuse };
    Tensor tensor(const std::string &name, NonFinite nonFinite = NonFinite::Keep) const;
    // The raw bytes of a U8 tensor (MXFP4 blocks and scales); throws for any other dtype.
    std::span<const unsigned char> bytes(const std::string &name) const;

private:
    std::string m_path;
    std::map<std::string, Entry> m_entries;
    std::map<std::string, std::string> m_metadata;
    std::unique_ptr<MappedFile> m_file;
    const unsigned char *m_map = nullptr;
    const unsigned char *m_dataStart = nullptr;
    size_t m_dataSize = 0;
};

// A model directory's tensors, from model.safetensors or from the shards that model.safetensors.index.json maps each
// tensor to (its "weight_map"). Every file is opened by openModelFile (a symbolic link must stay within the directory
// or its Hugging Face cache), and a tensor holding NaN or infinity is refused as it is read. Every shard is opened and
// validated, and every mapped tensor found in its shard, before any tensor is read; an index naming a file outside the
// directory, a missing shard or a tensor its shard lacks is refused with the index's path, the tensor and the file.
class SafetensorsCheckpoint
{
public:
    explicit SafetensorsCheckpoint(const std::string &directory);

    bool contains(const std::string &name) const { return m_where.count(name) != 0; }
    const SafetensorsFile::Entry &entry(const std::string &name) const;
    Tensor tensor(const std::string &name) const; // converted to float32, refused when not finite
    // gpt-oss's experts as its MXFP4 checkpoints store them: NAME_blocks [E, R, C/32, 16] (two E2M1 codes a byte, the
    // low nibble first) and NAME_scales [E, R, C/32] (E8M0), read as [E, C, R] (its transpose of each expert's [R, C])
    // and kept packed, 4.25 bits a value, each value decoded as transformers' convert_moe_packed_tensors decodes it.
    // Refused where a scale is E8M0's NaN or makes a value overflow float32.
    bool containsMxfp4(const std::string &name) const;
    Tensor mxfp4Tensor(const std::string &name) const;
    const std::string &pathOf(const std::string &name) const; // the file that holds it
    // "DIR/model.safetensors", or "DIR/model.safetensors.index.json (3 shards)": for messages
    std::string describe() const { return m_description; }
    // The dtype of every floating tensor, or "mixed"; "BF16 with MXFP4 experts" when MXFP4 blocks are stored too.
    std::string dtype() const;

private:
    std::vector<std::unique_ptr<SafetensorsFile>> m_files;
    std::map<std::string, const SafetensorsFile *> m_where;
    std::string m_description;
};

// Writes the tensors as F32 safetensors atomically: a temporary file beside `path`, then a rename, so a
// failure never leaves a half-written file nor destroys the previous one.
void writeSafetensors(const std::string &path, const std::map<std::string, const Tensor *> &tensors,
    const std::map<std::string, std::string> &metadata = {});

} // namespace atlas
