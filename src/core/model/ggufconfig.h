#pragma once

#include "io/gguf.h"

#include <string>

// What reading a GGUF file's metadata as its family's config.json (ggufModelConfig, model/ggufconfig.cpp) shares with
// reading its tensors (loadGgufModel, model/ggufmodel.cpp).
namespace atlas {

// Phi-3's LongRoPE factors, one tensor each for the whole model (llama.cpp's ROPE_FACTORS_LONG and _SHORT): read into
// the config, not into a parameter.
inline constexpr const char *kPhi3LongFactors = "rope_factors_long.weight";
inline constexpr const char *kPhi3ShortFactors = "rope_factors_short.weight";

// The entry of tensor `name`, or the error that it is missing, saying `why` it should be there.
const GgufFile::Entry &ggufRequiredTensor(const GgufFile &f, const std::string &name, const std::string &why);

} // namespace atlas
