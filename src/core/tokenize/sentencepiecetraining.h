#pragma once

#include <string>

namespace atlas {

// Training a SentencePiece tokenizer (Kudo & Richardson 2018) with the reference library's own trainer
// (libsentencepiece_train), so that a model trained here can read words instead of bytes. The result is the
// tokenizer.model file SentencePieceTokenizer and Hugging Face's LlamaTokenizer read.
struct SentencePieceTraining
{
    static constexpr int kMinVocab = 300; // the 256 byte pieces, <unk>, <s>, </s> and a few learned ones
    static constexpr int kMaxVocab = 65536;
    int vocab = 2048;
    std::string kind = "bpe"; // bpe (Sennrich et al.'s merges) or unigram (Kudo 2018)
};

// Trains on `text`, one sentence per non-empty line, and returns the serialized model: NFKC with SentencePiece's
// whitespace rules (nmt_nfkc), pieces never across a space, byte fallback (no character is ever unknown), one thread
// and the input in its order, so the same text and options give the same bytes on every machine. Throws atlas::Error
// for a vocabulary outside [kMinVocab, kMaxVocab], an unknown kind, or a text too small for the vocabulary (the
// library's message, which names the largest size the text allows).
std::string trainSentencePiece(const std::string &text, const SentencePieceTraining &options);

} // namespace atlas
