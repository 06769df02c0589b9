#include "tokenize/sentencepiecespec.h"

#include "io/limits.h"
#include "io/modelfile.h"
#include "util/error.h"

#include <cstdint>
#include <string_view>

namespace atlas {

SentencePieceSpec readSentencePieceSpec(const std::string &path)
{
    const std::string bytes = readModelFile(path, limits::kTokenizerBytes);
    const auto fail = [&](const std::string &what) {
        throw Error(path + ": not a SentencePiece model as its protobuf reads (" + what + ")");
    };
    // Calls field(number, wire type, value, bytes) for each field of the message in [begin, end).
    const auto walk = [&](size_t begin, size_t end, const auto &field) {
        const auto varint = [&](size_t &at) {
            uint64_t v = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                if (at >= end)
                    fail("a number runs past the end");
                const auto byte = static_cast<unsigned char>(bytes[at++]);
                v |= uint64_t(byte & 0x7f) << shift;
                if (!(byte & 0x80))
                    return v;
            }
            fail("a number of more than ten bytes");
            return v;
        };
        for (size_t at = begin; at < end;) {
            const uint64_t key = varint(at);
            const int number = int(key >> 3), wire = int(key & 7);
            uint64_t value = 0;
            std::string_view data;
            if (wire == 0) {
                value = varint(at);
            } else if (wire == 1 || wire == 5) {
                const size_t width = wire == 1 ? 8 : 4;
                if (end - at < width)
                    fail("a fixed-width field runs past the end");
                at += width;
            } else if (wire == 2) {
                const uint64_t length = varint(at);
                if (length > end - at)
                    fail(
                        "field " + std::to_string(number) + "'s " + std::to_string(length) + " bytes run past the end");
                data = std::string_view(bytes).substr(at, size_t(length));
                at += size_t(length);
            } else {
                fail("wire type " + std::to_string(wire) + " of field " + std::to_string(number));
            }
            field(number, wire, value, data);
        }
    };
    SentencePieceSpec spec;
    walk(0, bytes.size(), [&](int number, int wire, uint64_t, std::string_view data) {
        if (wire != 2 || (number != 2 && number != 3))
            return;
        const size_t begin = size_t(data.data() - bytes.data());
        walk(begin, begin + data.size(), [&](int inner, int innerWire, uint64_t value, std::string_view innerData) {
            if (number == 2 && inner == 3 && innerWire == 0)
                spec.unigram = value == 1;
            else if (number == 3 && inner == 2 && innerWire == 2)
                spec.charsmap = std::string(innerData);
            else if (number == 3 && inner == 3 && innerWire == 0)
                spec.addDummyPrefix = value != 0;
            else if (number == 3 && inner == 4 && innerWire == 0)
                spec.removeExtraWhitespaces = value != 0;
        });
    });
    return spec;
}

} // namespace atlas
