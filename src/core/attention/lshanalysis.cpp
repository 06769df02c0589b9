#include "attention/lshanalysis.h"

#include "util/error.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>

namespace atlas::attention {

namespace {

using MatrixD = Eigen::MatrixXd;

// keys (T,d): the two principal directions (d,2) of the rows, and the share of the variance they hold.
MatrixD principalPlane(const MatrixD &keys, double *explained)
{
    const Eigen::RowVectorXd mean = keys.colwise().mean();
    const MatrixD centred = keys.rowwise() - mean;
    const MatrixD cov = centred.transpose() * centred / double(std::max<Eigen::Index>(1, keys.rows()));
    const Eigen::SelfAdjointEigenSolver<MatrixD> eig(cov);
    const Eigen::Index d = keys.cols();
    MatrixD plane = MatrixD::Zero(d, 2);
    plane.col(0) = eig.eigenvectors().col(d - 1); // eigenvalues ascend
    if (d > 1)
        plane.col(1) = eig.eigenvectors().col(d - 2);
    const double total = eig.eigenvalues().sum();
    *explained = total > 0 ? (eig.eigenvalues()(d - 1) + (d > 1 ? eig.eigenvalues()(d - 2) : 0.0)) / total : 1.0;
    return plane;
}

// The bucket of the in-plane unit direction at each of kSectorSteps angles: the kernel's hash of that direction,
// whose projection on the rotation is (cos φ, sin φ) · u with u (2, b/2) the rotation seen in the plane.
std::vector<int> planeSectors(const MatrixD &u, int buckets)
{
    std::vector<int> sector(size_t(LshHeadAnalysis::kSectorSteps), 0);
    if (buckets == 1)
        return sector;
    for (int s = 0; s < LshHeadAnalysis::kSectorSteps; ++s) {
        const double phi = 2.0 * M_PI * s / LshHeadAnalysis::kSectorSteps;
        sector[size_t(s)] = lshBucketOf(Eigen::RowVectorXd(Eigen::RowVector2d(std::cos(phi), std::sin(phi)) * u));
    }
    return sector;
}

// Full shared-QK attention: the LSH kernel itself with one bucket and one chunk holding every token, so every
// query scores every key by the kernel's own rule (shared QK, own key penalised, causal, padding).
std::vector<double> fullSharedQk(const LshTracedHead &head)
{
    const int64_t T = head.q.rows();
    AttentionOptions options {head.causal, head.padding, true};
    const AttentionResult r = lsh_attention_forward(head.q, head.q, head.q, {1, 1, int(T), 0}, options);
    return std::vector<double>(r.weights.data(), r.weights.data() + r.weights.numel());
}

void findMissed(LshHeadAnalysis &h)
{
    const int T = h.T;
    double outside = 0;
    int rows = 0;
    for (int i = 0; i < T; ++i) {
        double rowOutside = 0, rowTotal = 0;
        for (int j = 0; j < T; ++j) {
            const double w = h.full[size_t(i) * size_t(T) + size_t(j)];
            rowTotal += w;
            if (h.mask[size_t(i) * size_t(T) + size_t(j)] != 0.0f)
                continue;
            rowOutside += w;
            if (w >= 0.1)
                h.missed.push_back({i, j, w});
        }
        if (rowTotal > 0) {
            outside += rowOutside;
            ++rows;
        }
    }
    h.missedFraction = rows > 0 ? outside / rows : 0.0;
    std::stable_sort(h.missed.begin(), h.missed.end(),
        [](const LshMissedPair &a, const LshMissedPair &b) { return a.weight > b.weight; });
}

void project(const LshTracedHead &head, LshHeadAnalysis &h)
{
    MatrixD keys = head.q.cast<double>();
    for (Eigen::Index t = 0; t < keys.rows(); ++t)
        if (keys.row(t).norm() > 0)
            keys.row(t).normalize(); // shared QK; a zero row stays zero, as in the kernel
    const MatrixD plane = principalPlane(keys, &h.explained);
    const MatrixD projected = keys * plane;
    for (Eigen::Index t = 0; t < projected.rows(); ++t) {
        const double n = projected.row(t).norm();
        h.points.push_back(n > 0 ? std::array<double, 2> {projected(t, 0) / n, projected(t, 1) / n}
                                 : std::array<double, 2> {1.0, 0.0});
    }
    const int half = h.buckets / 2;
    for (int r = 0; r < h.rounds; ++r) {
        MatrixD u = MatrixD::Zero(2, half);
        if (half > 0) {
            const float *R = head.rotations + (int64_t(r) * h.d) * half;
            u = plane.transpose() * Eigen::Map<const MatrixRM>(R, h.d, half).cast<double>();
        }
        h.sector.push_back(planeSectors(u, h.buckets));
        std::vector<bool> agrees(size_t(h.T));
        for (int t = 0; t < h.T; ++t) {
            const Eigen::RowVector2d point(h.points[size_t(t)][0], h.points[size_t(t)][1]);
            const int inPlane = h.buckets == 1 ? 0 : lshBucketOf(Eigen::RowVectorXd(point * u));
            agrees[size_t(t)] = inPlane == h.bucket[size_t(r)][size_t(t)];
        }
        h.inOwnSector.push_back(std::move(agrees));
    }
}

} // namespace

bool LshHeadAnalysis::allowedSorted(int round, int a, int b) const
{
    const auto [first, last] = lshChunkKeys(a / chunk, chunk, T);
    if (b < first || b >= last)
        return false;
    const int i = order[size_t(round)][size_t(a)], j = order[size_t(round)][size_t(b)];
    return !(causal && j > i) && !padding[size_t(j)];
}

LshHeadAnalysis analyzeLshHead(const LshTracedHead &head)
{
    checkLshParams(head.params);
    LshHeadAnalysis h;
    h.T = int(head.q.rows());
    h.d = int(head.q.cols());
    h.rounds = head.params.rounds;
    h.buckets = head.params.buckets;
    h.chunk = head.params.chunk;
    h.causal = head.causal;
    if (h.T < 1 || h.d < 1 || !head.buckets || !head.rotations || !head.weights || !head.mask)
        throw Error("LSH analysis: the head's q, buckets, rotations, weights and mask are all needed");
    h.padding.assign(size_t(h.T), false);
    for (int p : head.padding) {
        if (p < 0 || p >= h.T)
            throw Error("LSH analysis: padding position " + std::to_string(p) + " is outside the sequence");
        h.padding[size_t(p)] = true;
    }
    for (int r = 0; r < h.rounds; ++r) {
        std::vector<int> bucket(size_t(h.T));
        for (int t = 0; t < h.T; ++t) {
            bucket[size_t(t)] = int(head.buckets[int64_t(r) * h.T + t]);
            if (bucket[size_t(t)] < 0 || bucket[size_t(t)] >= h.buckets)
                throw Error("LSH analysis: bucket " + std::to_string(bucket[size_t(t)]) + " of token "
                    + std::to_string(t) + " is outside [0, " + std::to_string(h.buckets) + ")");
        }
        h.order.push_back(lshSortByBucket(bucket, h.buckets));
        h.bucket.push_back(std::move(bucket));
    }
    const size_t TT = size_t(h.T) * size_t(h.T);
    h.probs.assign(head.weights, head.weights + TT);
    h.mask.assign(head.mask, head.mask + TT);
    project(head, h);
    if (h.T <= LshHeadAnalysis::kMaxFullTokens) {
        h.full = fullSharedQk(head);
        findMissed(h);
    }
    return h;
}

} // namespace atlas::attention
