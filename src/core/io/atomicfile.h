#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace atlas {

// Writes `bytes` to `path` through a temporary file in the same directory, flushed and renamed over the
// target, so readers see either the old file or the complete new one. Throws atlas::Error on failure.
void writeFileAtomically(const std::string &path, std::string_view bytes);

// Reads a whole file; throws atlas::Error naming the file when it cannot, or when it holds more than `maxBytes`
// (checked before reading a regular file, and while reading a pipe or a device such as /dev/zero).
std::string readFile(const std::string &path, size_t maxBytes = SIZE_MAX);

} // namespace atlas
