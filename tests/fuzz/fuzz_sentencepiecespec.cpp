// A SentencePiece model file from a stranger, as `save --format gguf` reads its normaliser and model type (the walk of
// protobuf's wire format in tokenize/sentencepiecespec.cpp): read, or refused with atlas::Error naming the file.
#include "memoryfile.h"
#include "tokenize/sentencepiecespec.h"
#include "util/error.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const atlas::fuzz::MemoryFile file(data, size);
    try {
        const atlas::SentencePieceSpec spec = atlas::readSentencePieceSpec(file.path());
        if (spec.charsmap.size() > size) // a field's bytes lie inside the file
            __builtin_trap();
    } catch (const atlas::Error &e) {
        if (std::string(e.what()).rfind(file.path(), 0) != 0)
            __builtin_trap();
    }
    return 0;
}
