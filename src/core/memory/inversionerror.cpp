#include "memory/inversionerror.h"

#include "train/backprop.h"
#include "train/strategyrunner.h"
#include "util/error.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace atlas {

namespace {

using Stream = std::vector<double>; // a (T,D) stream, row-major

// Rounds x to a binary format with `bits` significand bits (the implicit one included) and smallest normal
// exponent `minExponent`, ties to even; values beyond `maxFinite` overflow to ±∞.
double roundToFormat(double x, int bits, int minExponent, double maxFinite)
{
    if (x == 0 || !std::isfinite(x))
        return x;
    int exponent = 0;
    std::frexp(x, &exponent); // x = m·2^exponent, 0.5 ≤ |m| < 1
    const int e = std::max(exponent - 1, minExponent); // subnormals keep the smallest exponent's spacing
    const double ulp = std::ldexp(1.0, e - (bits - 1));
    const double rounded = std::nearbyint(x / ulp) * ulp; // the default rounding mode: to nearest, ties to even
    return std::fabs(rounded) > maxFinite ? std::copysign(std::numeric_limits<double>::infinity(), x) : rounded;
}

Stream toStream(const Tensor &t, StreamPrecision precision)
{
    Stream s(size_t(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i)
        s[size_t(i)] = roundToPrecision(t.data()[i], precision);
    return s;
}

Tensor toTensor(const Stream &s, const Shape &shape)
{
    Tensor t(shape);
    for (size_t i = 0; i < s.size(); ++i)
        t.data()[i] = float(s[i]);
    return t;
}

// a + sign·f, rounded to `precision` (f is float32, from F or G).
Stream combine(const Stream &a, const Tensor &f, double sign, StreamPrecision precision)
{
    Stream out(a.size());
    for (size_t i = 0; i < a.size(); ++i)
        out[i] = precision == StreamPrecision::Float32 ? double(float(a[i]) + float(sign) * f.data()[i])
                                                       : roundToPrecision(a[i] + sign * double(f.data()[i]), precision);
    return out;
}

double maxAbsDifference(const Stream &a, const Stream &b)
{
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i)
        m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

double maxAbs(const Stream &a)
{
    double m = 0;
    for (double x : a)
        m = std::max(m, std::fabs(x));
    return m;
}

} // namespace

const char *streamPrecisionName(StreamPrecision precision)
{
    switch (precision) {
    case StreamPrecision::Double:
        return "float64";
    case StreamPrecision::Float32:
        return "float32";
    case StreamPrecision::Float16:
        return "float16";
    case StreamPrecision::BFloat16:
        return "bfloat16";
    }
    return "float32";
}

double roundToPrecision(double x, StreamPrecision precision)
{
    switch (precision) {
    case StreamPrecision::Double:
        return x;
    case StreamPrecision::Float32:
        return double(float(x));
    case StreamPrecision::Float16:
        return roundToFormat(x, 11, -14, 65504.0);
    case StreamPrecision::BFloat16:
        return roundToFormat(x, 8, -126, 3.3895313892515355e38);
    }
    return x;
}

InversionError measureInversionError(
    const Model &model, const Input &input, const std::vector<int> &targets, StreamPrecision precision)
{
    if (!model.config.reversible)
        throw Error("the inversion error needs a reversible model (such as reverse-rev, or one trained with train "
                    "--reversible); "
            + model.name + " has standard blocks");
    const int L = model.config.layers;
    MemoryOptions options;
    options.strategy = MemoryStrategy::Reversible;
    StrategyRunner runner(model, input, options);
    // The embedding, as the program computes it: run the forward pass far enough to read "input".
    const Tensor x0 = runner.embedding();
    const Shape shape = x0.shape();

    // Forward with the streams in `precision`: stored[i] are block i's inputs (X₁, X₂).
    std::vector<std::array<Stream, 2>> stored(static_cast<size_t>(L));
    Stream s1 = toStream(x0, precision), s2 = s1;
    for (int i = 0; i < L; ++i) {
        stored[size_t(i)] = {s1, s2};
        s1 = combine(s1, runner.attentionSublayer(i, toTensor(s2, shape)), +1, precision);
        s2 = combine(s2, runner.mlpSublayer(i, toTensor(s1, shape)), +1, precision);
    }

    // Inversion from the last outputs: X₂ = Y₂ − G(Y₁), X₁ = Y₁ − F(X₂), block L−1 down to 0.
    InversionError result;
    result.precision = precision;
    result.maxError.assign(size_t(L), 0);
    result.maxStream.assign(size_t(L), 0);
    std::vector<std::array<Tensor, 2>> rebuiltInputs(static_cast<size_t>(L)), storedInputs(static_cast<size_t>(L));
    Stream y1 = s1, y2 = s2;
    for (int i = L - 1; i >= 0; --i) {
        const Stream x2 = combine(y2, runner.mlpSublayer(i, toTensor(y1, shape)), -1, precision);
        const Stream x1 = combine(y1, runner.attentionSublayer(i, toTensor(x2, shape)), -1, precision);
        const auto &[st1, st2] = stored[size_t(i)];
        result.maxError[size_t(i)] = std::max(maxAbsDifference(x1, st1), maxAbsDifference(x2, st2));
        result.maxStream[size_t(i)] = std::max(maxAbs(st1), maxAbs(st2));
        rebuiltInputs[size_t(i)] = {toTensor(x1, shape), toTensor(x2, shape)};
        storedInputs[size_t(i)] = {toTensor(st1, shape), toTensor(st2, shape)};
        y1 = x1;
        y2 = x2;
    }

    // The same backward pass twice, from the same last outputs: once reading the stored inputs, once the rebuilt.
    Gradients fromStored, fromRebuilt;
    runner.startFromStreams(toTensor(s1, shape), toTensor(s2, shape));
    runner.backwardReversible(targets, fromStored, &storedInputs);
    runner.startFromStreams(toTensor(s1, shape), toTensor(s2, shape));
    runner.backwardReversible(targets, fromRebuilt, &rebuiltInputs);
    result.gradientError = gradientDifference(fromRebuilt, fromStored);
    return result;
}

} // namespace atlas
