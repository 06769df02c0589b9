#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace atlas::ops {

namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();
constexpr int kBisections = 60; // τ's bracket is at most 1 wide: 2⁻⁶⁰ is past double's resolution

int64_t rowLength(const Tensor &t)
{
    return t.rank() == 0 ? 1 : t.shape().back();
}

// The α of row r: one for every row, or one per leading slice (an attention head's rows).
double alphaOfRow(const std::vector<float> &alpha, int64_t r, int64_t rowsPerSlice)
{
    return alpha.size() == 1 ? double(alpha[0]) : double(alpha[size_t(r / rowsPerSlice)]);
}

void checkAlphas(const Tensor &t, const std::vector<float> &alpha, const char *what)
{
    if (alpha.size() != 1 && (t.rank() < 2 || int64_t(alpha.size()) != t.dim(0)))
        throw Error(std::string(what) + ": " + std::to_string(alpha.size()) + " values of α for a tensor "
            + t.shapeString() + " (give one, or one per leading slice)");
    for (float a : alpha)
        if (!(a > 1.0f && a <= 2.0f))
            throw Error(std::string(what) + ": α = " + std::to_string(a) + " is outside (1, 2]");
}

// Sparsemax of one row (Martins & Astudillo 2016, Algorithm 1): sort z descending, k(z) = max{k : 1 + k z₍ₖ₎ >
// Σ_{j≤k} z₍ⱼ₎}, τ = (Σ_{j≤k(z)} z₍ⱼ₎ − 1) / k(z), p = [z − τ]₊. Masked entries are left out and get 0.
void sparsemaxRow(const float *z, float *p, int64_t n, std::vector<double> &sorted)
{
    sorted.clear();
    for (int64_t i = 0; i < n; ++i)
        if (z[i] != kMasked)
            sorted.push_back(double(z[i]));
    if (sorted.empty()) {
        std::fill(p, p + n, 0.0f);
        return;
    }
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    double cumulative = 0, tau = 0;
    for (size_t k = 0; k < sorted.size(); ++k) {
        cumulative += sorted[k];
        if (1.0 + double(k + 1) * sorted[k] > cumulative)
            tau = (cumulative - 1.0) / double(k + 1);
    }
    for (int64_t i = 0; i < n; ++i)
        p[i] = z[i] == kMasked ? 0.0f : float(std::max(double(z[i]) - tau, 0.0));
}

// α-entmax of one row by bisection (Peters, Niculae & Martins 2019, §3): p_i = [(α−1) z_i − τ]₊^{1/(α−1)} with τ
// such that Σ p = 1. With m = max (α−1) z, τ lies in [m − 1, m − n^{1−α}]; the result is divided by its sum, as the
// entmax package's entmax_bisect does, so that it sums to 1 to float precision.
void entmaxRow(const float *z, float *p, int64_t n, double alpha)
{
    const double a1 = alpha - 1.0, power = 1.0 / a1;
    double top = -std::numeric_limits<double>::infinity();
    int64_t allowed = 0;
    for (int64_t i = 0; i < n; ++i)
        if (z[i] != kMasked) {
            top = std::max(top, a1 * double(z[i]));
            ++allowed;
        }
    if (allowed == 0) {
        std::fill(p, p + n, 0.0f);
        return;
    }
    const auto mass = [&](double tau) {
        double s = 0;
        for (int64_t i = 0; i < n; ++i)
            if (z[i] != kMasked)
                s += std::pow(std::max(a1 * double(z[i]) - tau, 0.0), power);
        return s;
    };
    double lo = top - 1.0, width = (top - std::pow(double(allowed), -a1)) - lo;
    for (int it = 0; it < kBisections; ++it) { // mass(lo) ≥ 1 throughout
        width /= 2;
        if (mass(lo + width) >= 1.0)
            lo += width;
    }
    double sum = 0;
    std::vector<double> q(size_t(n), 0.0);
    for (int64_t i = 0; i < n; ++i)
        if (z[i] != kMasked)
            sum += q[size_t(i)] = std::pow(std::max(a1 * double(z[i]) - lo, 0.0), power);
    for (int64_t i = 0; i < n; ++i)
        p[i] = float(q[size_t(i)] / sum);
}

} // namespace

void sparsemax_forward(Tensor &out, const Tensor &inp)
{
    requireShape(out, inp.shape(), "sparsemax output");
    const int64_t N = rowLength(inp), rows = inp.numel() / std::max<int64_t>(N, 1);
    parallelFor(rows, 16384 / std::max<int64_t>(N, 1), [&](int64_t begin, int64_t end) {
        std::vector<double> sorted;
        for (int64_t r = begin; r < end; ++r)
            sparsemaxRow(inp.data() + r * N, out.data() + r * N, N, sorted);
    });
}

void entmax_forward(Tensor &out, const Tensor &inp, const std::vector<float> &alpha)
{
    requireShape(out, inp.shape(), "entmax output");
    checkAlphas(inp, alpha, "entmax");
    const int64_t N = rowLength(inp), rows = inp.numel() / std::max<int64_t>(N, 1);
    const int64_t perSlice = inp.rank() >= 2 ? rows / inp.dim(0) : rows;
    parallelFor(rows, 2048 / std::max<int64_t>(N, 1), [&](int64_t begin, int64_t end) {
        std::vector<double> sorted;
        for (int64_t r = begin; r < end; ++r) {
            const double a = alphaOfRow(alpha, r, perSlice);
            if (a == 2.0) // sparsemax, exactly
                sparsemaxRow(inp.data() + r * N, out.data() + r * N, N, sorted);
            else
                entmaxRow(inp.data() + r * N, out.data() + r * N, N, a);
        }
    });
}

void entmax_backward(
    Tensor &dinp, std::vector<float> *dalpha, const Tensor &dout, const Tensor &out, const std::vector<float> &alpha)
{
    requireShape(dinp, out.shape(), "entmax backward dinp");
    requireShape(dout, out.shape(), "entmax backward dout");
    checkAlphas(out, alpha, "entmax backward");
    const int64_t N = rowLength(out), rows = out.numel() / std::max<int64_t>(N, 1);
    const int64_t perSlice = out.rank() >= 2 ? rows / out.dim(0) : rows;
    if (dalpha && dalpha->size() != alpha.size())
        throw Error("entmax backward: " + std::to_string(dalpha->size()) + " gradients of α for "
            + std::to_string(alpha.size()) + " values");
    // Rows of one slice share an α: each chunk sums its rows' dα, then the chunks are added in order.
    std::vector<std::vector<double>> partial;
    const int64_t grain = 2048 / std::max<int64_t>(N, 1) + 1;
    const int64_t chunks = (rows + grain - 1) / grain;
    partial.assign(size_t(chunks), std::vector<double>(alpha.size(), 0.0));
    parallelFor(chunks, 1, [&](int64_t cbegin, int64_t cend) {
        for (int64_t c = cbegin; c < cend; ++c)
            for (int64_t r = c * grain; r < std::min(rows, (c + 1) * grain); ++r) {
                const double a = alphaOfRow(alpha, r, perSlice);
                const float *p = out.data() + r * N, *g = dout.data() + r * N;
                float *d = dinp.data() + r * N;
                // ∂p/∂z = diag(s) − s sᵀ / Σ s with s_i = p_i^{2−α} on the support (Peters et al. 2019, Prop. 1).
                double sumS = 0, sumSG = 0;
                for (int64_t i = 0; i < N; ++i)
                    if (p[i] > 0) {
                        const double s = std::pow(double(p[i]), 2.0 - a);
                        sumS += s;
                        sumSG += s * double(g[i]);
                    }
                if (sumS == 0)
                    continue; // a row with no key: no gradient
                const double q = sumSG / sumS;
                for (int64_t i = 0; i < N; ++i)
                    if (p[i] > 0)
                        d[i] += float(std::pow(double(p[i]), 2.0 - a) * (double(g[i]) - q));
                if (!dalpha)
                    continue;
                // ∂p/∂α (the entmax package's EntmaxBisectFunction): with S_i = p_i log p_i, H = Σ S_i and
                // p̃ = s / Σ s, ∂p_i/∂α = (p_i − p̃_i)/(α−1)² − (S_i − p̃_i H)/(α−1).
                double entropy = 0, sumPG = 0, sumPlogPG = 0;
                for (int64_t i = 0; i < N; ++i)
                    if (p[i] > 0)
                        entropy += double(p[i]) * std::log(double(p[i]));
                for (int64_t i = 0; i < N; ++i)
                    if (p[i] > 0) {
                        const double pi = p[i], skew = std::pow(pi, 2.0 - a) / sumS, gi = g[i];
                        sumPG += (pi - skew) * gi;
                        sumPlogPG += (pi * std::log(pi) - skew * entropy) * gi;
                    }
                partial[size_t(c)][alpha.size() == 1 ? 0 : size_t(r / perSlice)]
                    += sumPG / ((a - 1) * (a - 1)) - sumPlogPG / (a - 1);
            }
    });
    if (dalpha)
        for (const std::vector<double> &chunk : partial)
            for (size_t h = 0; h < alpha.size(); ++h)
                (*dalpha)[h] += float(chunk[h]);
}

} // namespace atlas::ops
