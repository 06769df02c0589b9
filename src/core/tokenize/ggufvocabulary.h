#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include "tokenize/pipeline.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace atlas {

class GgufFile;

// llama.cpp's token types (llama_token_type): the values of tokenizer.ggml.token_type.
namespace gguftoken {
constexpr int64_t kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6;
}

// A GGUF file's own tokenizer (tokenizer.ggml.*) as the tokenizer.json that encodes as llama.cpp does, its
// vocabulary's entries moved into `vocab`. Read: 'gpt2' (byte-level BPE: tokens, merges, and the pre-tokenizer that
// tokenizer.ggml.pre names, with llama.cpp's patterns for it), 'llama' (SentencePiece's BPE), 'bert' (WordPiece) and
// 't5' (SentencePiece's Unigram, whose model is llama.cpp's own and is built into `model`; the JSON's "model" is then
// null). Control and unknown tokens become special added tokens, user-defined ones added tokens; BOS and EOS are put
// around the text for encodeWithSpecialTokens where the file or llama.cpp's default for its kind says so. Throws
// atlas::Error naming the file and the key for a tokenizer it does not read or a malformed one.
nlohmann::json ggufTokenizerJson(
    const GgufFile &file, pipeline::VocabEntries &vocab, std::unique_ptr<pipeline::SubwordModel> &model);

// The pre-tokenizer names tokenizer.ggml.pre may hold that this program reads, for messages and docs.
std::string ggufPreTokenizerNames();

// A tokenizer as the tokenizer.ggml.* keys hold it, for `save` to write.
struct GgufVocabulary
{
    std::string model = "gpt2", pre; // tokenizer.ggml.model and .pre
    std::vector<std::string> tokens; // by id, as many as the model's embedding has rows
    std::vector<int32_t>
        types; // llama.cpp's token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
    std::vector<float> scores; // 'llama': by id
    std::vector<std::string> merges; // 'gpt2': "left right", best first
    int64_t bos = -1, eos = -1, unknown = -1; // −1: none
    bool addBos = false, addEos = false;
    // 't5' (SentencePiece's Unigram): the normaliser's precompiled_charsmap, add_dummy_prefix and
    // remove_extra_whitespaces
    std::string charsmap;
    bool addSpacePrefix = true, removeExtraWhitespaces = true;
};

// A Hugging Face directory's tokenizer as llama.cpp's converter writes it. A byte-level BPE (tokenizer.json, or
// GPT-2's vocab.json and merges.txt) as 'gpt2' (_set_vocab_gpt2): the tokens by id, added tokens as control (special)
// or user-defined ones, ids the tokenizer leaves free as "[PAD{id}]", the merges, and the pre-tokenizer named after
// its pattern (GPT-2's "gpt-2", Llama 3's "llama-bpe", Qwen2's "qwen2"); BOS and EOS from tokenizer_config.json, BOS
// added where it or the post-processor says. Else a SentencePiece model (tokenizer.model, spiece.model) as 'llama'
// (_set_vocab_sentencepiece), or a Unigram one as 't5' with its normaliser (T5Model.set_vocab): its pieces, scores and
// types, rows past them as unused "[PAD{id}]", its BOS, EOS and
// unknown token, BOS and EOS added as the directory's tokenizer adds them. Throws atlas::Error naming the file and
// the key for another tokenizer, pattern or normalizer, or a token whose id the model has no row for.
GgufVocabulary huggingFaceGgufVocabulary(const std::string &directory, int64_t vocabSize);

} // namespace atlas
