#include "recurrence/rnnreach.h"

#include "engine/attentiontrace.h"
#include "model/blockrecipe.h"
#include "util/error.h"
#include "view/viewanalysis.h"

#include <Eigen/QR>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace atlas {

RnnWeights drawRnn(int width, double radius, uint64_t seed)
{
    const int n = std::min(width, kMaxRnnWidth);
    std::mt19937_64 random(seed);
    std::normal_distribution<double> normal;
    RnnMatrix gaussian(n, n);
    for (double &v : gaussian.reshaped())
        v = normal(random);
    // Q of the QR of a Gaussian matrix, each column's sign that of R's diagonal: a uniformly drawn orthogonal matrix.
    const Eigen::HouseholderQR<RnnMatrix> qr(gaussian);
    RnnMatrix q = qr.householderQ();
    for (int k = 0; k < n; ++k)
        if (qr.matrixQR()(k, k) < 0)
            q.col(k) *= -1;
    RnnWeights w;
    w.recurrent = radius * q;
    w.input.resize(n, width);
    for (double &v : w.input.reshaped())
        v = normal(random) / std::sqrt(double(width));
    return w;
}

RnnReach rnnReach(const RnnWeights &weights, const RnnMatrix &x, int query, const std::atomic<bool> *cancel,
    AnalysisProgress *progress)
{
    const RnnMatrix &W = weights.recurrent, &U = weights.input;
    const int T = int(x.rows()), d = int(x.cols()), n = int(W.rows());
    if (W.cols() != n || U.rows() != n || U.cols() != d)
        throw Error("the RNN's weights are W [" + std::to_string(W.rows()) + ", " + std::to_string(W.cols())
            + "] and U [" + std::to_string(U.rows()) + ", " + std::to_string(U.cols()) + "]; with inputs of width "
            + std::to_string(d) + " they must be [n, n] and [n, " + std::to_string(d) + "]");
    if (query < 0 || query >= T)
        throw Error("query position " + std::to_string(query) + " is outside the " + std::to_string(T) + " tokens");
    RnnReach r;
    r.tokens = T;
    r.width = d;
    r.hidden = n;
    r.query = query;
    r.radius = n > 0 ? Eigen::JacobiSVD<RnnMatrix>(W).singularValues()(0) : 0.0; // ‖W‖₂
    r.states.resize(T, n);
    Eigen::VectorXd h = Eigen::VectorXd::Zero(n);
    for (int t = 0; t < T; ++t) {
        h = (W * h + U * x.row(t).transpose()).array().tanh();
        r.states.row(t) = h.transpose();
    }
    const RnnMatrix slope = 1.0 - r.states.topRows(query + 1).array().square(); // D_t's diagonals
    r.meanSlope = slope.mean();

    // P_j = D_i W D_{i−1} ⋯ W D_j, kept as 10^scale · P with P's largest entry 1, so that it never leaves double's
    // range; ‖∂h_i/∂x_j‖_F² = ‖P_j U‖_F² = Σ (P_j G) ∘ P_j with G = U Uᵀ.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    r.log10Reach.assign(T, nan);
    r.log10Bound.assign(T, nan);
    const RnnMatrix gram = U * U.transpose();
    const double log10U = std::log10(U.norm()), log10Radius = std::log10(r.radius);
    RnnMatrix p = slope.row(query).asDiagonal();
    double scale = 0;
    if (progress) {
        progress->done = 0;
        progress->total = query + 1;
    }
    for (int j = query; j >= 0; --j) {
        if (cancel && cancel->load())
            throw Error("cancelled");
        if (progress)
            progress->done = query - j;
        if (j < query)
            p = (p * W) * slope.row(j).asDiagonal();
        const double largest = p.cwiseAbs().maxCoeff();
        if (!(largest > 0)) { // every unit saturated: exactly no reach from here back
            std::fill(r.log10Reach.begin(), r.log10Reach.begin() + j + 1, -std::numeric_limits<double>::infinity());
            for (int k = j; k >= 0; --k)
                r.log10Bound[k] = (query - k) * log10Radius + log10U;
            break;
        }
        p /= largest;
        scale += std::log10(largest);
        r.log10Reach[j] = scale + 0.5 * std::log10(((p * gram).array() * p.array()).sum());
        r.log10Bound[j] = (query - j) * log10Radius + log10U;
    }
    if (progress)
        progress->done = query + 1;
    return r;
}

RecurrenceComparison compareRecurrence(const Model &model, const Trace &trace, int layer, int head, int query,
    double radius, const std::vector<int> &padding, const std::atomic<bool> *cancel, AnalysisProgress *progress)
{
    if (model.config.isEncoderDecoder())
        throw Error("the RNN is set beside one stack of blocks, and this model has two (an encoder–decoder)");
    if (!(radius > 0 && radius <= kMaxRnnRadius))
        throw Error("the RNN's \u03C1 must be in (0, " + std::to_string(int(kMaxRnnRadius)) + "], not "
            + std::to_string(radius));
    RecurrenceComparison c;
    c.layer = layer;
    c.blocks = model.config.layers;
    c.input = attentionInput(model.config, names::kOnlyStack, layer);
    const Tensor &x = trace.tensor(c.input);
    if (x.rank() != 2)
        throw Error(c.input + ": expected [T, d], got " + x.shapeString());
    const RnnMatrix inputs = x.matrix().cast<double>();
    const int T = int(inputs.rows()), d = int(inputs.cols());
    const int i = query < 0 ? T - 1 : query;
    c.rnn = rnnReach(drawRnn(d, radius), inputs, i, cancel, progress);
    const std::optional<LayerAttention> attention = LayerAttention::find(&model, padding, trace, {}, layer);
    if (!attention)
        throw Error(names::attentionTensor({}, layer, "probs") + " is not in this run");
    c.head = std::clamp(head, 0, int(attention->heads()) - 1);
    std::vector<float> buffer;
    const float *row = attention->rows(ops::ScoreStage::Probs, c.head, i, i + 1, buffer);
    c.attention.assign(row, row + attention->keys());
    c.strongestKey = int(std::max_element(c.attention.begin(), c.attention.end()) - c.attention.begin());
    const double n = c.rnn.hidden;
    c.rnnWork = T * (n * n + n * d);
    c.attentionWork = 4.0 * T * double(d) * d + 2.0 * double(T) * T * d;
    return c;
}

} // namespace atlas
