#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace atlas {

// What a BERT WordPiece tokenizer.json says beside its vocabulary: BertNormalizer, BertPreTokenizer, WordPiece with
// "##" continuations, [CLS] … [SEP] and the WordPiece decoder. BERT's vocab.txt
// (HuggingFaceTokenizer::fromWordPieceVocab) and a GGUF file's 'bert' vocabulary (ggufTokenizerJson) are both read as
// this.
struct BertTokenizerOptions
{
    nlohmann::json addedTokens = nlohmann::json::array();
    std::string unknown = "[UNK]";
    bool lowercase = true;
    nlohmann::json stripAccents = nullptr; // null: as lowercase
    int64_t maxInputCharsPerWord = 100; // a longer word is one unknown token
    std::pair<std::string, int64_t> cls, sep; // no post-processor when cls's name is empty
};

inline nlohmann::json bertTokenizerJson(const BertTokenizerOptions &o)
{
    nlohmann::json root = {
        {"added_tokens", o.addedTokens},
        {"normalizer",
            {{"type", "BertNormalizer"}, {"clean_text", true}, {"handle_chinese_chars", true},
                {"strip_accents", o.stripAccents}, {"lowercase", o.lowercase}}},
        {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
        {"model",
            {{"type", "WordPiece"}, {"unk_token", o.unknown}, {"continuing_subword_prefix", "##"},
                {"max_input_chars_per_word", o.maxInputCharsPerWord}}},
        {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
    };
    if (!o.cls.first.empty())
        root["post_processor"]
            = {{"type", "BertProcessing"}, {"cls", {o.cls.first, o.cls.second}}, {"sep", {o.sep.first, o.sep.second}}};
    return root;
}

} // namespace atlas
