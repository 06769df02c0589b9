#include "attention/performerattention.h"

#include "attention/gaussianstream.h"
#include "util/error.h"

#include <Eigen/QR>

#include <algorithm>
#include <cmath>

namespace atlas::attention {

namespace {

constexpr int64_t kChunk = 64; // positions per step of the causal prefix sums

// phi (T,m) = exp(x' ωᵀ − |x'|²/2 − shift) / √m for x' (T,d), omega (m,d); shift per row (queries) or global.
MatrixRM positiveFeatures(const MatrixRM &x, const MatrixRM &omega, bool perRowShift)
{
    const int64_t T = x.rows(), m = omega.rows();
    MatrixRM phi = x * omega.transpose();
    const float globalShift = perRowShift ? 0.0f : phi.maxCoeff();
    const float norm = 1.0f / std::sqrt(float(m));
    for (int64_t t = 0; t < T; ++t) { // on this thread: OpenBLAS's threads still spin after the product
        auto row = phi.row(t).array();
        const float shift = (perRowShift ? row.maxCoeff() : globalShift) + 0.5f * x.row(t).squaredNorm();
        row = (row - shift).exp() * norm;
    }
    return phi;
}

// context rows / den, 0 where nothing was attended
void normalise(MatrixMap context, const Eigen::VectorXf &den)
{
    for (int64_t i = 0; i < context.rows(); ++i)
        if (den[i] > 0.0f)
            context.row(i) /= den[i];
        else
            context.row(i).setZero();
}

// The causal estimate, 64 positions at a time: within a chunk the (64,64) lower triangle, before it the
// prefix sums S = Σ φ(k_j) v_jᵀ (m,d) and s = Σ φ(k_j) (m).
void causalContext(
    const MatrixRM &phiQ, const MatrixRM &phiK, ConstMatrixMap v, MatrixMap context, Eigen::VectorXf &den)
{
    const int64_t T = phiQ.rows(), m = phiQ.cols();
    MatrixRM S = MatrixRM::Zero(m, v.cols());
    Eigen::VectorXf s = Eigen::VectorXf::Zero(m);
    for (int64_t s0 = 0; s0 < T; s0 += kChunk) {
        const int64_t n = std::min(kChunk, T - s0);
        const auto qc = phiQ.middleRows(s0, n), kc = phiK.middleRows(s0, n);
        MatrixRM a = qc * kc.transpose(); // (n,n)
        a.triangularView<Eigen::StrictlyUpper>().setZero();
        context.middleRows(s0, n).noalias() = qc * S + a * v.middleRows(s0, n);
        den.segment(s0, n) = qc * s + a.rowwise().sum();
        S.noalias() += kc.transpose() * v.middleRows(s0, n);
        s += kc.colwise().sum().transpose();
    }
}

} // namespace

MatrixRM performer_random_features(int64_t m, int64_t d, uint64_t seed)
{
    MatrixRM omega(m, d);
    const int64_t blocks = (m + d - 1) / d;
    for (int64_t b = 0; b < blocks; ++b) {
        const Eigen::MatrixXd gaussian = GaussianStream(seed, uint64_t(b)).matrix(d, d).cast<double>();
        const Eigen::HouseholderQR<Eigen::MatrixXd> qr(gaussian);
        const Eigen::MatrixXd orthogonal = qr.householderQ();
        // Column r times sign(R_rr) makes Q uniform (Haar) over the orthogonal matrices; without it Householder's
        // sign convention fixes the sign of each column's leading entry, and the estimate is biased.
        for (int64_t r = 0; r < std::min(d, m - b * d); ++r)
            omega.row(b * d + r)
                = (orthogonal.col(r) * (qr.matrixQR()(r, r) < 0 ? -1.0 : 1.0)).transpose().cast<float>();
    }
    GaussianStream lengths(seed, uint64_t(blocks));
    for (int64_t r = 0; r < m; ++r)
        omega.row(r) *= lengths.matrix(1, d).cast<double>().norm();
    return omega;
}

AttentionResult performer_attention_forward(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
    const PerformerParams &params, const AttentionOptions &options)
{
    if (params.features < 1)
        throw Error(
            "attention kernel 'performer': features must be at least 1, got " + std::to_string(params.features));
    checkHeadInputs("performer", q, k, v, options);
    const int64_t T = q.rows(), d = q.cols(), m = params.features;
    const float scale = 1.0f / std::pow(float(d), 0.25f);
    const MatrixRM omega = performer_random_features(m, d, params.seed);
    const MatrixRM phiQ = positiveFeatures(q * scale, omega, true);
    MatrixRM phiK = positiveFeatures(k * scale, omega, false);
    for (int j : options.padding)
        phiK.row(j).setZero();

    AttentionResult result;
    result.context = Tensor({T, d});
    MatrixMap context = result.context.matrix();
    Eigen::VectorXf den(T);
    if (options.causal) {
        causalContext(phiQ, phiK, v, context, den);
    } else {
        context.noalias() = phiQ * (phiK.transpose() * v);
        den.noalias() = phiQ * phiK.colwise().sum().transpose();
    }
    normalise(context, den);
    result.extras["features"] = Tensor({m, d});
    result.extras["features"].matrix() = omega;
    if (options.dense) {
        result.weights = Tensor({T, T});
        result.mask = Tensor({T, T});
        MatrixMap w = result.weights.matrix(), mask = result.mask.matrix();
        w.noalias() = phiQ * phiK.transpose();
        const std::vector<unsigned char> ok = allowedKeys(T, options.padding);
        for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < T; ++j) {
                mask(i, j) = (ok[size_t(j)] && (!options.causal || j <= i)) ? 1.0f : 0.0f;
                w(i, j) = (mask(i, j) != 0.0f && den[i] > 0.0f) ? w(i, j) / den[i] : 0.0f;
            }
    }
    return result;
}

} // namespace atlas::attention
