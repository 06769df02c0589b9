#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// Opening the files of a model directory (config.json, model.safetensors, model.safetensors.index.json and its shards):
// every open of a model's file goes through openModelFile, which confines symbolic links (docs/reliability.md,
// "Symbolic links in a model directory").
namespace atlas {

// Opens `path`, a file of a model directory, as openRegularFile does, then checks where the open descriptor leads: a
// file reached through a symbolic link must lie inside the model's directory (the directory `path` names it in), or
// inside the Hugging Face cache tree that holds that directory (ROOT/snapshots/<revision>/ with ROOT/blobs/ beside it,
// whose files link to ../../blobs/<hash>). Any other link is refused with atlas::Error "<path>: a symbolic link to
// '<target>' (<resolved>), outside the model's directory …". Returns the descriptor; the caller closes it.
int openModelFile(const std::string &path);

// The whole file, opened by openModelFile, refused past `maxBytes` as readFile does.
std::string readModelFile(const std::string &path, size_t maxBytes = SIZE_MAX);

// The directory a model directory's links may lead into: the directory itself, resolved, or the root of the Hugging
// Face cache tree holding it.
std::string modelLinkRoot(const std::string &directory);

} // namespace atlas
