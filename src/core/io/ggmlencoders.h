#pragma once

// Internal to io/: the quantizers save writes GGUF files with, ggml-quants.c's reference quantizers operation for
// operation (their rounding is part of the format people compare files by; tests/tst_ggufsave.cpp checks the bytes
// against ggml's own). Each encodes one block: F32 and F16 one value, Q4_0 and Q8_0 32, Q4_K 256. io/ggmltypes.cpp's
// table of types names them.
namespace atlas {

void encodeF32(const float *x, unsigned char *b);
void encodeF16(const float *x, unsigned char *b);
void encodeQ4_0(const float *x, unsigned char *b);
void encodeQ8_0(const float *x, unsigned char *b);
void encodeQ4_K(const float *x, unsigned char *b);

} // namespace atlas
