#pragma once

#include "engine/input.h"
#include "model/model.h"

#include <string>
#include <vector>

// How exact is a reversible model's inversion? X₂ = Y₂ − G(Y₁), X₁ = Y₁ − F(X₂) rebuild a block's inputs only up to
// the rounding of the additions that made its outputs: Y₁ = X₁ + F(X₂) keeps X₁ only to an ulp of the larger
// term, and every rebuilt input is the next rebuild's output, so the error grows block by block going down.
//
// The measurement holds the two streams in a chosen precision and runs F and G as the engine does, in float32:
// each stream is rounded to that precision after every addition and subtraction (float16: 11-bit significand,
// exponents 2⁻¹⁴ … 2¹⁵ with subnormals, overflow to ∞; bfloat16: 8-bit significand, float32's exponents; both
// round to nearest, ties to even), and F and G read the stream rounded to float32. In double precision the only
// errors left are double's, ~1e-16 of the stream; in float32 the streams are exactly the engine's.
namespace atlas {

enum class StreamPrecision { Double, Float32, Float16, BFloat16 };

const char *streamPrecisionName(StreamPrecision precision); // "float64", "float32", "float16", "bfloat16"
// x rounded to the nearest value of `precision` (ties to even); Double returns x.
double roundToPrecision(double x, StreamPrecision precision);

struct InversionError
{
    StreamPrecision precision = StreamPrecision::Float32;
    // Per block i (0 … L−1): max |X_rebuilt − X_stored| over both input streams of block i, and max |X_stored|.
    std::vector<double> maxError, maxStream;
    // The gradients from the rebuilt streams against those from the stored streams (both through the engine's
    // float32 backward pass): max over the parameters of max |g_rebuilt − g_stored| / max |g_stored|.
    double gradientError = 0;
};

// Runs `input` forward with the streams in `precision`, rebuilds every block's inputs by inversion from the last
// block's outputs, and compares. `targets` are as backprop.h's (for the gradient error). Throws atlas::Error for a
// model without reversible blocks (atlas_reversible).
InversionError measureInversionError(
    const Model &model, const Input &input, const std::vector<int> &targets, StreamPrecision precision);

} // namespace atlas
