#pragma once

#include <string>
#include <string_view>

namespace atlas {

// Writes `bytes` to `path` through a temporary file in the same directory, flushed and renamed over the
// target, so readers see either the old file or the complete new one. Throws atlas::Error on failure.
void writeFileAtomically(const std::string &path, std::string_view bytes);

// Reads a whole file; throws atlas::Error naming the file when it cannot.
std::string readFile(const std::string &path);

} // namespace atlas
