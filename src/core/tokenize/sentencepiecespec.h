#pragma once

#include <string>

namespace atlas {

// What a SentencePiece model's ModelProto (sentencepiece_model.proto) says besides its pieces: trainer_spec (field 2)
// .model_type (3: 1 Unigram, 2 BPE) and normalizer_spec (3) .precompiled_charsmap (2), .add_dummy_prefix (3) and
// .remove_extra_whitespaces (4), with the proto's defaults (Unigram, both true). Read with a small walk of protobuf's
// wire format: the library loads these fields but gives no way to read them.
struct SentencePieceSpec
{
    bool unigram = true;
    std::string charsmap;
    bool addDummyPrefix = true, removeExtraWhitespaces = true;
};

// The spec of the SentencePiece model file at `path`; throws atlas::Error naming the file for bytes protobuf's wire
// format does not read.
SentencePieceSpec readSentencePieceSpec(const std::string &path);

} // namespace atlas
