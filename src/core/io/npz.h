#pragma once

#include "tensor/tensor.h"

#include <map>
#include <string>

// A NumPy .npz archive as np.savez writes it: a zip file (zip64 included) of NAME.npy members, each stored without
// compression. Every offset and size is checked against the file before it is read; a compressed member
// (np.savez_compressed), an encrypted or split archive, or a member that is not a float32 array is refused with the
// archive's path, the member and the reason. The file is opened by openModelFile (symbolic links confined).
namespace atlas {

std::map<std::string, Tensor> readNpz(const std::string &path); // keyed by the member's name without ".npy"

} // namespace atlas
