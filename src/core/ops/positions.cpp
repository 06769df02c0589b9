#include "ops/ops.h"
#include "ops/shapecheck.h"

#include <algorithm>
#include <cmath>

// Positional encodings that act inside attention: RoPE rotates queries and keys, ALiBi, T5 and Shaw et al. add
// a term to each score. docs/models.md states the conventions chosen where papers differ.
namespace atlas::ops {

namespace {

// The (first, second) element of rotation pair p when n pairs turn, in either convention.
std::pair<int64_t, int64_t> ropePair(int64_t p, int64_t n, RopeStyle style)
{
    return style == RopeStyle::Interleaved ? std::pair {2 * p, 2 * p + 1} : std::pair {p, p + n};
}

// y = R(sign · angle) x on every turning pair of every row; row t of each head is the table's position first + t.
void rotate(Tensor &out, const Tensor &in, RopeStyle style, const RopeTable &table, float sign)
{
    const int64_t H = in.dim(0), T = in.dim(1), d = in.dim(2), n = table.n;
    if (2 * n > d)
        throw Error("RoPE: " + std::to_string(n) + " rotated pairs do not fit heads of width " + std::to_string(d));
    if (T > table.T)
        throw Error("RoPE: " + std::to_string(T) + " positions, the table has " + std::to_string(table.T));
    if (&out != &in)
        std::copy(in.data(), in.data() + in.numel(), out.data()); // dimensions past the rotated ones pass through
    for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < T; ++t) {
            const float *x = in.data() + (h * T + t) * d, *c = table.cos.data() + t * n, *s = table.sin.data() + t * n;
            float *y = out.data() + (h * T + t) * d;
            for (int64_t p = 0; p < n; ++p) {
                const auto [a, b] = ropePair(p, n, style);
                const float xa = x[a], xb = x[b], sp = sign * s[p];
                y[a] = xa * c[p] - xb * sp;
                y[b] = xa * sp + xb * c[p];
            }
        }
}

} // namespace

double ropeFrequency(int64_t pair, int64_t d, float base)
{
    return std::pow(double(base), -2.0 * double(pair) / double(d));
}

std::vector<double> ropeFrequencies(int64_t d, float base)
{
    std::vector<double> theta;
    for (int64_t p = 0; p < d / 2; ++p)
        theta.push_back(ropeFrequency(p, d, base));
    return theta;
}

RopeTable rope_table(int64_t firstPosition, int64_t T, const std::vector<double> &theta, double amplitude)
{
    RopeTable table;
    table.T = T;
    table.n = int64_t(theta.size());
    table.cos.resize(size_t(T * table.n));
    table.sin.resize(size_t(T * table.n));
    for (int64_t t = 0; t < T; ++t)
        for (int64_t p = 0; p < table.n; ++p) {
            const double angle = double(firstPosition + t) * theta[size_t(p)];
            table.cos[size_t(t * table.n + p)] = float(amplitude * std::cos(angle));
            table.sin[size_t(t * table.n + p)] = float(amplitude * std::sin(angle));
        }
    return table;
}

void rope_forward(Tensor &out, const Tensor &in, RopeStyle style, const RopeTable &table)
{
    if (in.rank() != 3)
        throw Error("RoPE: expected [H, T, d], got " + in.shapeString());
    requireShape(out, in.shape(), "RoPE output");
    rotate(out, in, style, table, 1.0f);
}

void rope_forward(Tensor &out, const Tensor &in, int64_t firstPosition, RopeStyle style,
    const std::vector<double> &theta, double amplitude)
{
    rope_forward(out, in, style, rope_table(firstPosition, in.rank() == 3 ? in.dim(1) : 0, theta, amplitude));
}

void rope_backward(Tensor &din, const Tensor &dout, RopeStyle style, const std::vector<double> &theta, double amplitude)
{
    requireShape(din, dout.shape(), "RoPE backward");
    // Rᵀ = R(−angle): a rotation's gradient is the inverse rotation (times the amplitude, which scales both)
    Tensor back(dout.shape());
    rotate(back, dout, style, rope_table(0, dout.dim(1), theta, amplitude), -1.0f);
    Eigen::Map<Eigen::ArrayXf>(din.data(), din.numel()) += Eigen::Map<const Eigen::ArrayXf>(back.data(), back.numel());
}

std::vector<float> alibiSlopes(int heads)
{
    // Press et al. 2022: for n a power of two, m_h = 2^(−8h/n), h = 1 … n; otherwise the slopes of the closest
    // smaller power of two, then every other slope of the next power of two.
    const auto powerOfTwo = [](int n) {
        std::vector<float> s;
        for (int h = 1; h <= n; ++h)
            s.push_back(float(std::pow(2.0, -8.0 * h / n)));
        return s;
    };
    int closest = 1;
    while (closest * 2 <= heads)
        closest *= 2;
    std::vector<float> slopes = powerOfTwo(closest);
    const std::vector<float> extra = powerOfTwo(2 * closest);
    for (size_t i = 0; int(slopes.size()) < heads; i += 2)
        slopes.push_back(extra[i]);
    return slopes;
}

int t5Bucket(int64_t relative, bool bidirectional, int buckets, int maxDistance)
{
    // Raffel et al. 2020, as Hugging Face's T5Attention._relative_position_bucket: relative = key − query.
    int bucket = 0;
    int64_t n = relative;
    if (bidirectional) {
        buckets /= 2;
        bucket += relative > 0 ? buckets : 0;
        n = std::abs(relative);
    } else {
        n = -std::min<int64_t>(relative, 0);
    }
    const int exact = buckets / 2;
    if (n < exact)
        return bucket + int(n);
    const int large
        = exact + int(std::log(double(n) / exact) / std::log(double(maxDistance) / exact) * (buckets - exact));
    return bucket + std::min(large, buckets - 1);
}

void alibi_bias_forward(Tensor &out, int64_t queryOffset)
{
    const int64_t H = out.dim(0), T = out.dim(1), K = out.dim(2);
    const std::vector<float> m = alibiSlopes(int(H));
    for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < K; ++j)
                out.data()[(h * T + i) * K + j] = -m[size_t(h)] * float(std::abs(queryOffset + i - j));
}

void t5_bias_forward(Tensor &out, const Tensor &table, bool bidirectional, int maxDistance, int64_t queryOffset)
{
    const int64_t H = out.dim(0), T = out.dim(1), K = out.dim(2), buckets = table.dim(0);
    requireShape(table, {buckets, H}, "T5 relative bias table");
    for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < K; ++j) {
            const int b = t5Bucket(j - (queryOffset + i), bidirectional, int(buckets), maxDistance);
            for (int64_t h = 0; h < H; ++h)
                out.data()[(h * T + i) * K + j] = table.data()[b * H + h];
        }
}

void t5_bias_backward(Tensor &dtable, const Tensor &dout, bool bidirectional, int maxDistance)
{
    const int64_t H = dout.dim(0), T = dout.dim(1), K = dout.dim(2), buckets = dtable.dim(0);
    requireShape(dtable, {buckets, H}, "T5 relative bias table gradient");
    for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < K; ++j) {
            const int b = t5Bucket(j - i, bidirectional, int(buckets), maxDistance);
            for (int64_t h = 0; h < H; ++h)
                dtable.data()[b * H + h] += dout.data()[(h * T + i) * K + j];
        }
}

void shaw_bias_forward(
    Tensor &out, const Tensor &q, const Tensor &table, int clip, float scale, int64_t queryOffset, int sign)
{
    const int64_t H = q.dim(0), T = q.dim(1), d = q.dim(2), K = out.dim(2);
    requireShape(table, {2 * int64_t(clip) + 1, d}, "Shaw relative key table");
    requireShape(out, {H, T, K}, "Shaw relative term");
    const ConstMatrixMap a(table.data(), table.dim(0), d);
    for (int64_t h = 0; h < H; ++h) {
        // Every query against every distance once, then each score picks its clipped distance.
        const MatrixRM byDistance = ConstMatrixMap(q.data() + h * T * d, T, d) * a.transpose() * scale;
        for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < K; ++j) {
                const int64_t r = std::clamp<int64_t>(sign * (j - (queryOffset + i)), -clip, clip) + clip;
                out.data()[(h * T + i) * K + j] = byDistance(i, r);
            }
    }
}

void shaw_bias_backward(Tensor &dq, Tensor &dtable, const Tensor &dout, const Tensor &q, const Tensor &table, int clip,
    float scale, int sign)
{
    const int64_t H = q.dim(0), T = q.dim(1), d = q.dim(2), R = 2 * int64_t(clip) + 1;
    requireShape(dq, q.shape(), "Shaw backward dq");
    requireShape(dtable, table.shape(), "Shaw backward dtable");
    const ConstMatrixMap a(table.data(), R, d);
    MatrixMap da(dtable.data(), R, d);
    for (int64_t h = 0; h < H; ++h) {
        MatrixRM byDistance = MatrixRM::Zero(T, R); // the gradient of each query's score against each distance
        for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < T; ++j)
                byDistance(i, std::clamp<int64_t>(sign * (j - i), -clip, clip) + clip)
                    += dout.data()[(h * T + i) * T + j];
        byDistance *= scale;
        MatrixMap(dq.data() + h * T * d, T, d) += byDistance * a;
        da += byDistance.transpose() * ConstMatrixMap(q.data() + h * T * d, T, d);
    }
}

} // namespace atlas::ops
