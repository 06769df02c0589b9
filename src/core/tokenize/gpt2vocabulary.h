#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace atlas {

// GPT-2's vocab.json (token -> id, each token's bytes spelled with bytes_to_unicode) and merges.txt (one
// "left right" pair per line, best first; the first line may be a "#version" comment), checked line by line,
// as the tokenizer.json Hugging Face's GPT2TokenizerFast reads them into: ByteLevel pre-tokenizer (GPT-2's
// pattern, no prefix space), BPE, ByteLevel decoder, <|endoftext|> as a special added token. Throws
// atlas::Error naming the file, the line or token, and the problem.
nlohmann::json gpt2TokenizerJson(const std::string &vocabPath, const std::string &mergesPath);

} // namespace atlas
