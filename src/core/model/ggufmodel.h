#pragma once

#include "model/model.h"

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

// llama.cpp's name of a file's general.file_type (llama_ftype): "Q4_K_M", "F16" …; "" for a number it does not name.
std::string ggufFileTypeName(uint64_t fileType);

} // namespace atlas
