#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace atlas {

// Writes `bytes` to `path` through a temporary file in the same directory, flushed and renamed over the
// target, so readers see either the old file or the complete new one. Throws atlas::Error on failure.
void writeFileAtomically(const std::string &path, std::string_view bytes);

// Reads a whole regular file; throws atlas::Error naming the file when it cannot, when it holds more than
// `maxBytes`, or when it is a FIFO, a device, a socket or a directory (checked on the open descriptor, opened
// without blocking: a FIFO with no writer would hang the program).
std::string readFile(const std::string &path, size_t maxBytes = SIZE_MAX);

// Opens a regular file for reading as readFile does, refusing every other kind of file with its kind named;
// returns the descriptor (the caller closes it).
int openRegularFile(const std::string &path);

// readFile's reading of a descriptor opened for `path` (by openRegularFile, or openModelFile); closes it.
std::string readDescriptor(int fd, const std::string &path, size_t maxBytes = SIZE_MAX);

// "a named pipe (FIFO)", "a character device" …: what a stat mode says a path is, for messages.
std::string fileKind(unsigned mode);

// A file's size and time of writing ("1234@1733312345000000000"), "" when they cannot be read: part of a cache's key,
// so that what was computed from a file is computed again once the file changes.
std::string fileStamp(const std::string &path);

} // namespace atlas
