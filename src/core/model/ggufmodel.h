#pragma once

#include "io/ggmltypes.h"
#include "model/model.h"

#include <map>

#include <string>

// Models from GGUF files, llama.cpp's format (io/gguf.h): the metadata read as the family's config.json, every
// tensor found by the family's GGUF names (model/parameternames.h) and brought to the Hugging Face layout the engine
// runs, so that nothing downstream asks where a model came from.
namespace atlas {

class GgufFile;

// Whether `path` names a GGUF file: a regular file ending in .gguf, or one whose first bytes are "GGUF".
bool isGgufFile(const std::string &path);

// The config of the model in `file`: general.architecture and its keys ({arch}.block_count,
// {arch}.attention.head_count_kv, {arch}.rope.freq_base …) read as the family's config.json would give them. An
// architecture this program does not read, a missing key, or one of the wrong type, is refused with the file and the
// key.
ModelConfig ggufModelConfig(const GgufFile &file);

// The whole model, dequantized to float32. Refuses, naming the file and the tensor, a tensor missing, of the wrong
// shape, not finite, or one the architecture has no place for (as llama.cpp does).
Model loadGgufModel(const std::string &path);

// The key `save` writes into a gptneox file for the GELU its model computes, "tanh" or "erf". llama.cpp's gptneox has
// no such key (it computes the tanh GELU, through a table of half-precision values); a file without it is read with
// GPT-NeoX's erf GELU, as Hugging Face's checkpoints (Pythia) have it. A GPT-2 layout with RoPE, saved as gptneox, so
// reads back as the model saved.
inline constexpr const char *kGgufGeluKey = "transformer_atlas.gelu";

// What saveGgufModel wrote.
struct GgufSaveReport
{
    std::string architecture; // general.architecture
    uint64_t bytes = 0; // the file's size
    std::map<std::string, int> tensorsByType; // "Q8_0" -> how many tensors are stored as Q8_0
    // Matrices whose rows are not a whole number of the type's blocks, by the type they were stored as instead.
    std::map<std::string, int> fellBack;
};

// Writes `m` as a GGUF file llama.cpp runs (`save`): its config as llama.cpp's architecture keys, its tensors by
// their GGUF names in the file's layout (model/gguflayout.h), matrices as `type` (F32, F16, Q8_0, Q4_0 or Q4_K;
// 1-D tensors, biases, positions and routers in F32), and its tokenizer (a GGUF file's own, or the project's byte-level
// one). Before writing, the file is read back and must describe the model saved: what the architecture cannot hold (a
// window llama's has not, another positional encoding …) is refused, naming the property. An existing `path` is
// replaced only when save wrote it. Throws atlas::Error. A non-empty `description` becomes general.description (a
// built-in model's description, when the file is one).
GgufSaveReport saveGgufModel(
    const Model &m, const std::string &path, GgmlType type, const std::string &description = {});

// The type `save` stores tensor `key` (a GGUF or a parameter name) of `shape` as, asked for `wanted`: 1-D tensors
// (norms, biases), biases of every shape (gpt-oss's experts'), positions, routers and rope_freqs in F32, as
// llama-quantize keeps them; a matrix whose rows are not a whole number of the type's blocks falls back (Q4_K to Q4_0,
// then to F16), as llama-quantize falls back to another type for such rows.
GgmlType ggufStoredType(const std::string &key, const Shape &shape, GgmlType wanted);

// llama.cpp's name of a file's general.file_type (llama_ftype): "Q4_K_M", "F16" …; "" for a number it does not name.
std::string ggufFileTypeName(uint64_t fileType);

} // namespace atlas
