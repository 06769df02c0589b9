#include "views/lshviewdata.h"

#include "attention/attentionkernel.h"
#include "attention/blockattention.h"
#include "views/heatmapplot.h"

#include <Eigen/Dense>

#include <QObject>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace atlas {

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

// u (2, half): the rotation's directions seen in the plane. Bucket of an in-plane unit direction at each angle:
// argmax([a u; −a u]) with lshattention's tie rule, i.e. the bucket a key lying in the plane would get.
std::vector<int> planeSectors(const MatrixD &u, int buckets)
{
    std::vector<int> sector(size_t(LshHeadData::kSectorSteps), 0);
    if (buckets == 1)
        return sector;
    for (int s = 0; s < LshHeadData::kSectorSteps; ++s) {
        const double phi = 2.0 * M_PI * s / LshHeadData::kSectorSteps;
        const Eigen::RowVectorXd proj = Eigen::RowVector2d(std::cos(phi), std::sin(phi)) * u;
        Eigen::Index up, down;
        const double top = proj.maxCoeff(&up), bottom = proj.minCoeff(&down);
        sector[size_t(s)] = top >= -bottom ? int(up) : int(u.cols() + down);
    }
    return sector;
}

// Full shared-QK attention as lshattention.cpp scores it: s_ij = q_i · k̂_j / √d with k̂_j = q_j/|q_j|, own key
// penalised by kSelfPenalty, causal and padding keys masked. q and keys are (T,d); returns (T,T).
std::vector<double> fullSharedQk(const MatrixD &q, const MatrixD &keys, const LshHeadData &h)
{
    const int T = h.T;
    const MatrixD scores = q * keys.transpose() / std::sqrt(double(h.d));
    std::vector<double> full(size_t(T) * size_t(T), 0.0);
    for (int i = 0; i < T; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        std::vector<double> row(size_t(T), mx);
        for (int j = 0; j < T; ++j) {
            if ((h.causal && j > i) || h.padding[size_t(j)])
                continue;
            row[size_t(j)] = scores(i, j) - (i == j ? double(attention::kSelfPenalty) : 0.0);
            mx = std::max(mx, row[size_t(j)]);
        }
        if (!std::isfinite(mx))
            continue;
        double sum = 0;
        for (int j = 0; j < T; ++j)
            sum += row[size_t(j)] == -std::numeric_limits<double>::infinity() ? 0.0 : std::exp(row[size_t(j)] - mx);
        for (int j = 0; j < T; ++j)
            if (std::isfinite(row[size_t(j)]))
                full[size_t(i) * size_t(T) + size_t(j)] = std::exp(row[size_t(j)] - mx) / sum;
    }
    return full;
}

void findMissed(LshHeadData &h)
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

QString readBuckets(const ViewInput &input, int layer, int head, LshHeadData &h)
{
    const Tensor &buckets = input.trace->tensor(traceName(layer, "lsh.buckets"));
    const Tensor &rotations = input.trace->tensor(traceName(layer, "lsh.rotations"));
    if (buckets.rank() != 3 || rotations.rank() != 4 || head >= buckets.dim(0))
        return QObject::tr("Layer %1 has no head %2.").arg(layer).arg(head);
    h.rounds = int(buckets.dim(1));
    h.T = int(buckets.dim(2));
    h.d = int(rotations.dim(2));
    h.buckets = rotations.dim(3) == 0 ? 1 : int(rotations.dim(3)) * 2;
    h.bucket.assign(size_t(h.rounds), std::vector<int>(size_t(h.T)));
    h.order.clear();
    for (int r = 0; r < h.rounds; ++r) {
        for (int t = 0; t < h.T; ++t)
            h.bucket[size_t(r)][size_t(t)] = int(buckets.data()[(int64_t(head) * h.rounds + r) * h.T + t]);
        h.order.push_back(sortByBucket(h.bucket[size_t(r)]));
    }
    return {};
}

} // namespace

bool LshHeadData::allowedSorted(int round, int a, int b) const
{
    if (a / chunk != b / chunk && a / chunk != b / chunk + 1)
        return false;
    const int i = order[size_t(round)][size_t(a)], j = order[size_t(round)][size_t(b)];
    return !(causal && j > i) && !padding[size_t(j)];
}

std::string layerAttentionKind(const Trace &trace, int layer)
{
    const TraceEntry *context = trace.find(traceName(layer, "attn.context"));
    if (trace.contains(traceName(layer, "lsh.buckets")))
        return "lsh";
    if (context == nullptr)
        return "full";
    const std::string prefix = "C_h = ";
    for (const std::string &kind : attention::attentionKernelKinds())
        if (context->formula.rfind(prefix + kind + " ", 0) == 0)
            return kind;
    return "full";
}

int lshChunkOfLayer(const Trace &trace, int layer, int fallback)
{
    const TraceEntry *context = trace.find(traceName(layer, "attn.context"));
    const size_t at = context ? context->formula.find("chunk=") : std::string::npos;
    if (at == std::string::npos)
        return fallback;
    const int chunk = std::atoi(context->formula.c_str() + at + 6);
    return chunk > 0 ? chunk : fallback;
}

std::vector<int> sortByBucket(const std::vector<int> &bucket)
{
    std::vector<int> order(bucket.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return bucket[size_t(a)] < bucket[size_t(b)]; });
    return order;
}

QString loadLshHead(const ViewInput &input, int layer, int head, int chunk, LshHeadData *out)
{
    LshHeadData h;
    h.chunk = std::max(1, chunk);
    h.causal = input.causal;
    if (QString problem = readBuckets(input, layer, head, h); !problem.isEmpty())
        return problem;
    const Tensor &qt = input.trace->tensor(traceName(layer, "attn.q"));
    const Tensor &probs = input.trace->tensor(traceName(layer, "attn.probs"));
    const Tensor &mask = input.trace->tensor(traceName(layer, "attn.mask"));
    const Tensor &rotations = input.trace->tensor(traceName(layer, "lsh.rotations"));
    h.padding.assign(size_t(h.T), false);
    for (int p : input.padding)
        if (p >= 0 && p < h.T)
            h.padding[size_t(p)] = true;
    const size_t TT = size_t(h.T) * size_t(h.T);
    h.probs.assign(probs.data() + head * int64_t(TT), probs.data() + (head + 1) * int64_t(TT));
    h.mask.assign(mask.data() + head * int64_t(TT), mask.data() + (head + 1) * int64_t(TT));

    const MatrixD q = qt.slice(head).cast<double>();
    MatrixD keys = q;
    for (Eigen::Index t = 0; t < keys.rows(); ++t)
        if (keys.row(t).norm() > 0)
            keys.row(t).normalize(); // shared QK; a zero row stays zero, as in lshattention.cpp
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
            const float *R = rotations.data() + ((int64_t(head) * h.rounds + r) * h.d) * half;
            u = plane.transpose() * Eigen::Map<const MatrixRM>(R, h.d, half).cast<double>();
        }
        h.sector.push_back(planeSectors(u, h.buckets));
    }
    if (h.T <= LshHeadData::kMaxFullTokens) {
        h.full = fullSharedQk(q, keys, h);
        findMissed(h);
    }
    *out = std::move(h);
    return {};
}

} // namespace atlas
