#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include "tokenize/pipeline.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace atlas {

// A GGUF file's 't5' vocabulary (SentencePiece's Unigram, as llama.cpp's converter writes T5's spiece.model).
struct LlamaCppUnigramVocabulary
{
    std::string file; // for messages: the GGUF file
    std::vector<std::string> tokens;
    std::vector<double> scores; // by id, as stored (float32)
    std::vector<int64_t> types; // llama.cpp's token types (ggufvocabulary.h)
    std::string charsmap; // tokenizer.ggml.precompiled_charsmap's bytes; empty for none
    bool addSpacePrefix = false, removeExtraWhitespaces = false;
    int unknownId = 2;
};

// llama.cpp's Unigram tokenizer (llm_tokenizer_ugm) as a subword model of the tokenizer pipeline, which splits off the
// special and user-defined tokens before it. A text is normalized first: at each place the longest prefix the
// precompiled charsmap rewrites (SentencePiece's XOR-compressed double array and its replacement strings),
// else one character as it is; spaces become "▁", with one in front of the text (add_space_prefix), or one in front
// of each run of other characters and none elsewhere (remove_extra_whitespaces). Then the Viterbi path over the
// normal, user-defined (scored 0) and unused tokens, a character no token covers being the unknown token scored as
// the lowest normal token's score less 10, runs of them one token. Throws atlas::Error naming the file and the key
// for a charsmap whose header or entries point outside it, and for a text its replacements grow without bound.
std::unique_ptr<pipeline::SubwordModel> makeLlamaCppUnigram(LlamaCppUnigramVocabulary vocabulary);

} // namespace atlas
