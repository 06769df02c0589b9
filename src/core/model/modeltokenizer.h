#pragma once

#include "tokenize/tokenizer.h"

#include <memory>
#include <string>

namespace atlas {

class Model;

// The tokenizer a model declares in its config (atlas_tokenizer): bytes for the built-in models, else its directory's
// own (tokenize/tokenizer.h, directoryTokenizer), or ids only, saying why, when there is none this program reads.
// The project's models name their special tokens in config.json, and get them around the tokenizer.
std::unique_ptr<Tokenizer> tokenizerForModel(const Model &model);
// The same from a directory without loading its weights: config.json decides as in tokenizerForModel; a directory
// with only vocab.json and merges.txt gives GPT-2's BPE; a GGUF file gives its own tokenizer (tokenizer.ggml.*).
// Throws atlas::Error when neither is there.
std::unique_ptr<Tokenizer> tokenizerForDirectory(const std::string &directory);

} // namespace atlas
