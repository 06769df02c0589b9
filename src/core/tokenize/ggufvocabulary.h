#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include "tokenize/pipeline.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace atlas {

class GgufFile;

// A GGUF file's own tokenizer (tokenizer.ggml.*) as the tokenizer.json that encodes as llama.cpp does, its
// vocabulary's entries moved into `vocab`. Read: the 'gpt2' model (byte-level BPE: tokens, merges, and the
// pre-tokenizer that tokenizer.ggml.pre names, with llama.cpp's patterns for it). Control tokens become special added
// tokens, user-defined ones added tokens; add_bos_token puts the BOS token in front for encodeWithSpecialTokens.
// Throws atlas::Error naming the file and the key for a tokenizer it does not read or a malformed one.
nlohmann::json ggufTokenizerJson(const GgufFile &file, pipeline::VocabEntries &vocab);

// The pre-tokenizer names tokenizer.ggml.pre may hold that this program reads, for messages and docs.
std::string ggufPreTokenizerNames();

} // namespace atlas
