#pragma once

#include <memory>
#include <string>
#include <vector>

namespace atlas {

class Model;

struct BuiltinModel
{
    std::string name; // directory name under resources/models, or a GGUF file's name without .gguf
    std::string directory; // the directory, or the GGUF file
    std::string description; // atlas_description from its config.json, or a GGUF file's general.description
};

// Where built-in models are looked for, first match wins: $ATLAS_MODELS_DIR, then
// <exe dir>/../share/transformer-atlas/models (io/resourcepaths.h).
std::vector<std::string> builtinModelSearchPath();
std::vector<BuiltinModel> builtinModels();
// A built-in model's name or a directory path -> the directory; throws atlas::Error listing the names.
std::string resolveModel(const std::string &nameOrDirectory);
// Resolves and loads; a built-in model keeps its built-in name.
std::shared_ptr<const Model> loadModel(const std::string &nameOrDirectory);

// The tokenizers that ship with the app (resources/tokenizers/<name>: GPT-2's byte-level BPE, Mistral 7B's
// byte-fallback BPE, BERT's WordPiece), found like the models ($ATLAS_TOKENIZERS_DIR, then
// share/transformer-atlas/tokenizers).
std::vector<std::string> builtinTokenizerNames();
// A directory or a GGUF file (itself), a built-in tokenizer's name or a built-in model's name -> where the tokenizer to
// read is; throws atlas::Error listing the names.
std::string resolveTokenizer(const std::string &nameOrDirectory);

} // namespace atlas
