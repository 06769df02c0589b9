#include "attention/lshattention.h"

#include "attention/blockattention.h"
#include "attention/gaussianstream.h"
#include "tensor/transposerows.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace atlas::attention {

namespace {

// q is (T,d); rotation is (d,b/2): bucket of row t = argmax over [q_t R, −q_t R] (the first on a tie).
// By blockProduct, not the BLAS: OpenBLAS's threads spin for a while after each call and would slow the block
// passes that follow on the same cores.
std::vector<int> hashRound(ConstMatrixMap q, const MatrixRM &rotation, int buckets)
{
    const int64_t T = q.rows(), d = q.cols(), half = rotation.cols(), width = (half + 15) / 16 * 16;
    std::vector<int> bucket(size_t(T), 0);
    if (buckets == 1)
        return bucket;
    MatrixRM padded = MatrixRM::Zero(d, width);
    padded.leftCols(half) = rotation;
    parallelFor((T + 63) / 64, 4, [&](int64_t begin, int64_t end) {
        MatrixRM rows(64, d), projected(64, width);
        for (int64_t b = begin; b < end; ++b) {
            const int64_t first = b * 64, n = std::min<int64_t>(64, T - first);
            rows.setZero();
            rows.topRows(n) = q.middleRows(first, n);
            blockProduct(projected.data(), rows.data(), padded.data(), 64, d, width);
            for (int64_t t = 0; t < n; ++t)
                bucket[size_t(first + t)] = lshBucketOf(projected.row(t).head(half));
        }
    });
    return bucket;
}

// 1/|q_t|, or 0 for a zero row: the shared keys are k_t = q_t/|q_t| (a zero query's key stays zero).
std::vector<float> keyScales(ConstMatrixMap q)
{
    std::vector<float> scale(size_t(q.rows()));
    for (int64_t t = 0; t < q.rows(); ++t) {
        const float norm = q.row(t).norm();
        scale[size_t(t)] = norm > 0.0f ? 1.0f / norm : 0.0f;
    }
    return scale;
}

// Asks for the cache lines of n floats from p, for rows read in a scattered order.
void prefetchRow(const float *p, int64_t n)
{
    for (int64_t k = 0; k < n; k += 16)
        __builtin_prefetch(p + k);
}

// One round in sorted order, read by the chunk windows of every thread.
struct SortedRound
{
    ConstMatrixMap q, v;
    const std::vector<float> &keyScale; // 1/|q_j| (keyScales)
    const BlockAttention &attention; // which keys are padding
    std::vector<int> order; // the positions sorted by (bucket, position)
    int64_t chunk;
    bool causal;
};

// A thread's window on a round's sorted order when only the context is asked for: the queries of the current
// chunk and the keys and values of it and of the chunk before, gathered as the chunks come, so that a chunk's
// keys are contiguous columns that blockProduct reads in place and the sorted sequence is never written out
// whole. BlockAttention's generic pass gathers and transposes every key twice per round and asks the rule per
// pair; at 16384 tokens that was two thirds of the kernel's time. Each half of the window is `width` columns,
// the chunk rounded up to blockProduct's tile; columns past a chunk's keys are masked.
class ChunkWindow
{
public:
    explicit ChunkWindow(const SortedRound &round)
        : m_round(round)
        , m_T(round.q.rows())
        , m_d(round.q.cols())
        , m_dp(roundUp(m_d, kBlockCols))
        , m_width(roundUp(round.chunk, kBlockCols))
        , m_queries(MatrixRM::Zero(roundUp(round.chunk, kBlockRows), m_d))
        , m_keys(MatrixRM::Zero(m_d, 2 * m_width))
        , m_values(MatrixRM::Zero(2 * m_width, m_dp))
        , m_position(size_t(2 * m_width), 0)
        , m_scale(size_t(2 * m_width), 0.0f)
        , m_bias(size_t(2 * m_width), kMaskedScore)
        , m_zeros(size_t(m_d), 0.0f)
    {
    }

    // Attends the queries of chunk a (sorted [a·c, (a+1)·c)) to the keys of chunks a − 1 and a, and folds them
    // into state. Chunks must come in increasing order; the window loads what it lacks.
    void attend(RowState &state, int64_t a)
    {
        if (m_loaded != a - 1)
            load(a - 1, 0);
        load(a, 1);
        const int64_t c = m_round.chunk, nq = std::min(m_T, (a + 1) * c) - a * c, mp = roundUp(nq, kBlockRows);
        const int64_t first = a == 0 ? m_width : 0, np = 2 * m_width - first; // the first chunk has none before it
        m_score.resize(mp, np);
        // q_i · q_j, then scaled by 1/√d and 1/|q_j|: the query against the shared key k_j = q_j/|q_j|.
        blockProduct(m_score.data(), np, m_queries.data(), m_d, m_keys.data() + first, 2 * m_width, mp, m_d, np);
        const int *position = m_position.data() + first;
        const float *scale = m_scale.data() + first, *bias = m_bias.data() + first;
        const bool causal = m_round.causal;
        m_max.assign(size_t(nq), kMaskedScore);
        m_sum.assign(size_t(nq), 0.0f);
        for (int64_t r = 0; r < nq; ++r) {
            float *row = &m_score(r, 0);
            const int i = m_position[size_t(m_width + r)];
            for (int64_t j = 0; j < np;
                 ++j) // scale · score, or kMaskedScore for a masked key (finite · 0 + kMaskedScore)
                row[j] = row[j] * scale[j] + bias[j];
            if (causal)
                for (int64_t j = 0; j < np; ++j)
                    row[j] = position[j] > i ? kMaskedScore : row[j];
            row[m_width - first + r] -= kSelfPenalty; // the query's own key
            auto scores = m_score.row(r).array();
            const float mx = scores.maxCoeff();
            if (mx <= kMaskedScore / 2) { // every key masked: the row adds nothing
                scores.setZero();
                continue;
            }
            scores = (scores - mx).exp();
            m_max[size_t(r)] = mx;
            m_sum[size_t(r)] = scores.sum();
        }
        m_score.bottomRows(mp - nq).setZero();
        m_out.resize(mp, m_dp);
        blockProduct(m_out.data(), m_dp, m_score.data(), np, m_values.data() + first * m_dp, m_dp, mp, np, m_dp);
        for (int64_t r = 0; r < nq; ++r) {
            const int i = m_position[size_t(m_width + r)];
            if (r + kAhead < nq) // the state's rows are scattered: ask for them early
                prefetchRow(state.acc.row(m_position[size_t(m_width + r + kAhead)]).data(), m_d);
            if (m_max[size_t(r)] > kMaskedScore / 2)
                state.merge(i, m_max[size_t(r)], m_sum[size_t(r)], m_out.row(r).data());
        }
    }

private:
    static constexpr int64_t kAhead = 4;

    // Gathers chunk b's keys and values into half h (0: the chunk before, 1: the current one), and for the
    // current one its queries. Moves the current half to the first when the next chunk comes.
    void load(int64_t b, int h)
    {
        if (h == 1 && m_loaded == b - 1 && b > 0)
            shift();
        if (b < 0)
            return;
        const int64_t c = m_round.chunk, begin = b * c, n = std::min(m_T, begin + c) - begin, col = h * m_width;
        const int *order = m_round.order.data() + begin;
        const float scale = 1.0f / std::sqrt(float(m_d));
        float *keys = m_keys.data();
        for (int64_t t = 0; t < n; ++t) {
            if (t + kAhead < n) {
                prefetchRow(m_round.q.row(order[t + kAhead]).data(), m_d);
                prefetchRow(m_round.v.row(order[t + kAhead]).data(), m_d);
            }
            const int i = order[t];
            const auto qi = m_round.q.row(i);
            if (h == 1)
                m_queries.row(t) = qi;
            m_values.row(col + t).head(m_d) = m_round.v.row(i);
            m_position[size_t(col + t)] = i;
            const bool allowed = m_round.attention.keyAllowed(i);
            m_scale[size_t(col + t)] = allowed ? scale * m_round.keyScale[size_t(i)] : 0.0f;
            m_bias[size_t(col + t)] = allowed ? 0.0f : kMaskedScore;
        }
        for (int64_t t0 = 0; t0 < m_width; t0 += 8) { // the keys, 8 at a time into columns
            const float *src[8];
            for (int64_t c = 0; c < 8; ++c)
                src[c] = t0 + c < n ? m_round.q.row(order[t0 + c]).data() : m_zeros.data();
            transposeRows8(src, m_d, keys + col + t0, 2 * m_width);
        }
        for (int64_t t = n; t < m_width; ++t) { // a short last chunk
            m_values.row(col + t).setZero();
            m_scale[size_t(col + t)] = 0.0f;
            m_bias[size_t(col + t)] = kMaskedScore;
            if (h == 1 && t < m_queries.rows())
                m_queries.row(t).setZero();
        }
        m_loaded = h == 1 ? b : m_loaded;
    }

    void shift()
    {
        for (int64_t j = 0; j < m_d; ++j)
            std::copy_n(m_keys.row(j).data() + m_width, m_width, m_keys.row(j).data());
        m_values.topRows(m_width) = m_values.bottomRows(m_width);
        std::copy_n(m_position.begin() + m_width, m_width, m_position.begin());
        std::copy_n(m_scale.begin() + m_width, m_width, m_scale.begin());
        std::copy_n(m_bias.begin() + m_width, m_width, m_bias.begin());
    }

    const SortedRound &m_round;
    int64_t m_T, m_d, m_dp, m_width;
    int64_t m_loaded = -2; // the chunk in the current half
    MatrixRM m_queries; // the current chunk's queries (roundUp(c, 8), d)
    MatrixRM m_keys; // transposed, (d, 2·width): the chunk before, then the current one
    MatrixRM m_values; // (2·width, dp)
    std::vector<int> m_position; // (2·width) each column's position
    std::vector<float> m_scale, m_bias; // (2·width) 1/(√d |q_j|) and 0, or 0 and kMaskedScore (padding, no key)
    std::vector<float> m_zeros; // (d) the key of a column past a short chunk's end
    MatrixRM m_score, m_out;
    std::vector<float> m_max, m_sum;
};

} // namespace

void checkLshParams(const LshParams &p)
{
    if (p.rounds < 1)
        throw Error("attention kernel 'lsh': parameter 'rounds' must be at least 1, got " + std::to_string(p.rounds));
    if (p.buckets < 1 || (p.buckets != 1 && p.buckets % 2 != 0))
        throw Error("attention kernel 'lsh': parameter 'buckets' must be 1 or even (angular LSH hashes to ±b/2 "
                    "directions), got "
            + std::to_string(p.buckets));
    if (p.chunk < 1)
        throw Error("attention kernel 'lsh': parameter 'chunk' must be at least 1, got " + std::to_string(p.chunk));
}

std::vector<int> lshSortByBucket(const std::vector<int> &bucket, int buckets)
{
    std::vector<int> start(size_t(buckets) + 1, 0), order(bucket.size());
    for (int b : bucket)
        ++start[size_t(b) + 1];
    for (size_t b = 0; b < size_t(buckets); ++b)
        start[b + 1] += start[b];
    for (size_t t = 0; t < bucket.size(); ++t)
        order[size_t(start[size_t(bucket[t])]++)] = int(t);
    return order;
}

std::pair<int64_t, int64_t> lshChunkKeys(int64_t chunkIndex, int64_t chunk, int64_t T)
{
    return {std::max<int64_t>(0, (chunkIndex - 1) * chunk), std::min(T, (chunkIndex + 1) * chunk)};
}

AttentionResult lsh_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const LshParams &params, const AttentionOptions &options)
{
    checkLshParams(params);
    checkHeadInputs("lsh", q, k, v, options);
    const int64_t T = q.rows(), d = q.cols(), half = params.buckets / 2, c = params.chunk, chunks = (T + c - 1) / c;
    // Every round folds into one online softmax: exactly Reformer's combination of rounds by their
    // log-sum-exps, out_i = Σ_r exp(lse_r(i) − L_i) out_r(i), each (round, key) pair counted once. First: see
    // RowState.
    RowState state(T, d);
    const std::vector<float> keyScale = keyScales(q);
    const bool sorted = !options.dense && !options.patternVisitor;
    MatrixRM keys; // the generic pass's shared keys
    if (!sorted)
        keys = q.array().colwise() * Eigen::Map<const Eigen::ArrayXf>(keyScale.data(), T);
    const BlockAttention attention(
        "lsh", q, sorted ? q : ConstMatrixMap(keys.data(), T, d), v, options, 1.0f / std::sqrt(float(d)));
    const bool causal = options.causal;
    const auto rule = [causal](int i, int j) {
        if (causal && j > i)
            return KeyRule::Masked;
        return j == i ? KeyRule::SelfPenalised : KeyRule::Allowed;
    };

    AttentionResult result;
    result.extras["buckets"] = Tensor({params.rounds, T});
    result.extras["rotations"] = Tensor({params.rounds, d, half});
    std::unique_ptr<DenseRecord> dense = options.dense ? std::make_unique<DenseRecord>(T) : nullptr;
    for (int r = 0; r < params.rounds; ++r) {
        const MatrixRM rotation = GaussianStream(params.seed, uint64_t(r)).matrix(d, half);
        const std::vector<int> bucket = hashRound(q, rotation, params.buckets);
        std::copy(rotation.data(), rotation.data() + rotation.size(), result.extras["rotations"].data() + r * d * half);
        for (int64_t t = 0; t < T; ++t)
            result.extras["buckets"].data()[r * T + t] = float(bucket[size_t(t)]);
        std::vector<int> order = lshSortByBucket(bucket, params.buckets);
        if (sorted) {
            const SortedRound round {q, v, keyScale, attention, std::move(order), c, causal};
            // Pieces of 8 chunks: each piece gathers the chunk before its first once more.
            parallelForPieces(chunks, 8, [&](int64_t begin, int64_t end) {
                ChunkWindow window(round);
                for (int64_t a = begin; a < end; ++a)
                    window.attend(state, a);
            });
            continue;
        }
        const auto chunkBlock = [&](int64_t a, std::vector<int> &queries, std::vector<int> &keyPositions) {
            queries.assign(order.begin() + a * c, order.begin() + std::min(T, (a + 1) * c));
            const auto [first, last] = lshChunkKeys(a, c, T);
            keyPositions.assign(order.begin() + first, order.begin() + last);
        };
        attention.pass(state, dense.get(), chunks, chunkBlock, rule);
    }
    BlockAttention::complete(state, dense.get(), result);
    return result;
}

} // namespace atlas::attention
