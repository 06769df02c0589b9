#pragma once

#include "tensor/tensor.h"

#include <string>
#include <string_view>

namespace atlas {

// Writes a tensor as a NumPy .npy file (version 1.0, '<f4', C order), atomically.
void writeNpy(const std::string &path, const Tensor &tensor);

// Reads a '<f4' C-order .npy file (used by tests and tools); throws atlas::Error on anything else.
Tensor readNpy(const std::string &path);
// The same from the file's bytes; `path` names it in messages ("params.npz: W_enc.npy").
Tensor parseNpy(std::string_view bytes, const std::string &path);

} // namespace atlas
