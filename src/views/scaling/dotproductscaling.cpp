#include "scaling/dotproductscaling.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace atlas::attention {

namespace {

// Welford's running mean and variance, in double.
struct Moments
{
    long long n = 0;
    double mean = 0, m2 = 0;
    void add(double x)
    {
        ++n;
        const double delta = x - mean;
        mean += delta / double(n);
        m2 += delta * (x - mean);
    }
    double variance() const { return n > 1 ? m2 / double(n - 1) : 0.0; }
};

// Softmax over the allowed entries of `row` (others 0); an all-masked row stays 0.
std::vector<double> maskedSoftmax(const std::vector<double> &row, const std::vector<char> &allowed)
{
    double top = -std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < row.size(); ++j)
        if (allowed[j])
            top = std::max(top, row[j]);
    std::vector<double> out(row.size(), 0.0);
    if (!std::isfinite(top))
        return out;
    double sum = 0;
    for (size_t j = 0; j < row.size(); ++j)
        if (allowed[j])
            sum += out[j] = std::exp(row[j] - top);
    for (double &w : out)
        w /= sum;
    return out;
}

} // namespace

std::vector<DotProductVariance> randomDotProductVariance(const std::vector<int> &dims, int samples, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<DotProductVariance> out;
    for (int d : dims) {
        if (d < 1 || samples < 2)
            throw Error("dot-product variance: d must be at least 1 and samples at least 2");
        Moments raw, scaled;
        for (int s = 0; s < samples; ++s) {
            double dot = 0;
            for (int i = 0; i < d; ++i)
                dot += normal(rng) * normal(rng);
            raw.add(dot);
            scaled.add(dot / std::sqrt(double(d)));
        }
        out.push_back({d, raw.variance(), scaled.variance()});
    }
    return out;
}

HeadScaling headScaling(ConstMatrixMap q, ConstMatrixMap k, bool causal, const std::vector<int> &padding, int query)
{
    const int T = int(q.rows()), d = int(q.cols());
    if (k.rows() != T || k.cols() != d || T < 1 || d < 1)
        throw Error("head scaling: q and k must both be (T, d) with T, d ≥ 1");
    if (query < 0)
        query = T - 1;
    if (query >= T)
        throw Error("head scaling: query " + std::to_string(query) + " is outside the input (" + std::to_string(T)
            + " tokens)");
    std::vector<char> padded(size_t(T), 0);
    for (int p : padding)
        if (p >= 0 && p < T)
            padded[size_t(p)] = 1;

    HeadScaling out;
    out.dim = d;
    out.query = query;
    Moments components;
    for (int i = 0; i < d; ++i) {
        Moments qi, ki;
        for (int t = 0; t < T; ++t) {
            qi.add(q(t, i));
            ki.add(k(t, i));
        }
        components.add(qi.variance());
        components.add(ki.variance());
    }
    out.componentVariance = components.mean;

    const double scale = 1.0 / std::sqrt(double(d));
    Moments raw, scaled;
    double maxScaled = 0, maxUnscaled = 0;
    int rows = 0;
    std::vector<double> dots(static_cast<size_t>(T)), dotsScaled(static_cast<size_t>(T));
    std::vector<char> allowed(static_cast<size_t>(T));
    for (int i = 0; i < T; ++i) {
        bool any = false;
        for (int j = 0; j < T; ++j) {
            allowed[size_t(j)] = !padded[size_t(j)] && (!causal || j <= i);
            if (!allowed[size_t(j)])
                continue;
            any = true;
            double dot = 0;
            for (int c = 0; c < d; ++c)
                dot += double(q(i, c)) * double(k(j, c));
            dots[size_t(j)] = dot;
            dotsScaled[size_t(j)] = dot * scale;
            raw.add(dot);
            scaled.add(dot * scale);
        }
        if (!any)
            continue;
        const std::vector<double> withDivision = maskedSoftmax(dotsScaled, allowed);
        const std::vector<double> without = maskedSoftmax(dots, allowed);
        maxScaled += *std::max_element(withDivision.begin(), withDivision.end());
        maxUnscaled += *std::max_element(without.begin(), without.end());
        ++rows;
        if (i == query) {
            out.scaled = withDivision;
            out.unscaled = without;
        }
    }
    if (out.scaled.empty()) { // every key of the query is masked
        out.scaled.assign(size_t(T), 0.0);
        out.unscaled.assign(size_t(T), 0.0);
    }
    out.pairs = int(raw.n);
    out.variance = raw.variance();
    out.scaledVariance = scaled.variance();
    out.meanMaxScaled = rows > 0 ? maxScaled / rows : 0;
    out.meanMaxUnscaled = rows > 0 ? maxUnscaled / rows : 0;
    return out;
}

} // namespace atlas::attention
