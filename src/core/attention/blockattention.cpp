#include "attention/blockattention.h"

#include "tensor/transposerows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace atlas::attention {

namespace {

const float kNoKey = -std::numeric_limits<float>::infinity();

} // namespace

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)

namespace {

// R rows of C's 16 columns in 2R ymm registers: with R = 6, 12 accumulators, B's two vectors and A's broadcast
// fill 15 of the 16. Eight rows as one Eigen tile would need 19, and the spills made it a third slower.
// Inlined, so that GCC keeps the arrays in registers (called, it stored them to the stack at every step).
template <int R>
[[gnu::always_inline]] inline void productTile(
    float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb, int64_t k)
{
    __m256 lo[R], hi[R];
    for (int r = 0; r < R; ++r) {
        lo[r] = _mm256_setzero_ps();
        hi[r] = _mm256_setzero_ps();
    }
    for (int64_t t = 0; t < k; ++t) {
        const __m256 b0 = _mm256_loadu_ps(b + t * ldb), b1 = _mm256_loadu_ps(b + t * ldb + 8);
        for (int r = 0; r < R; ++r) {
            const __m256 x = _mm256_broadcast_ss(a + r * lda + t);
            lo[r] = _mm256_fmadd_ps(x, b0, lo[r]);
            hi[r] = _mm256_fmadd_ps(x, b1, hi[r]);
        }
    }
    for (int r = 0; r < R; ++r) {
        _mm256_storeu_ps(c + r * ldc, lo[r]);
        _mm256_storeu_ps(c + r * ldc + 8, hi[r]);
    }
}

} // namespace

void blockProduct(
    float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb, int64_t m, int64_t k, int64_t n)
{
    // Columns outermost: a (k,16) panel of b stays in L1 while every row tile of a passes over it. m is a
    // multiple of 8, so what six-row tiles leave is 2 or 4 rows.
    for (int64_t j = 0; j < n; j += kBlockCols) {
        int64_t r0 = 0;
        for (; r0 + 6 <= m; r0 += 6)
            productTile<6>(c + r0 * ldc + j, ldc, a + r0 * lda, lda, b + j, ldb, k);
        if (m - r0 == 4)
            productTile<4>(c + r0 * ldc + j, ldc, a + r0 * lda, lda, b + j, ldb, k);
        else if (m - r0 == 2)
            productTile<2>(c + r0 * ldc + j, ldc, a + r0 * lda, lda, b + j, ldb, k);
    }
}

#else

void blockProduct(
    float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb, int64_t m, int64_t k, int64_t n)
{
    using Tile = Eigen::Array<float, 1, kBlockCols>;
    // Columns outermost: a (k,16) panel of b stays in L1 while every row tile of a passes over it.
    for (int64_t j = 0; j < n; j += kBlockCols)
        for (int64_t r0 = 0; r0 < m; r0 += kBlockRows) {
            Tile acc[kBlockRows];
            for (Tile &t : acc)
                t.setZero();
            const float *ar = a + r0 * lda;
            for (int64_t t = 0; t < k; ++t) {
                const Eigen::Map<const Tile> bt(b + t * ldb + j);
                for (int64_t r = 0; r < kBlockRows; ++r)
                    acc[r] += ar[r * lda + t] * bt;
            }
            for (int64_t r = 0; r < kBlockRows; ++r)
                Eigen::Map<Tile>(c + (r0 + r) * ldc + j) = acc[r];
        }
}

#endif

RowState::RowState(int64_t T, int64_t d)
    : m(static_cast<size_t>(T), kNoKey)
    , z(static_cast<size_t>(T), 0.0f)
    , context({T, d})
    , acc(context.matrix())
{
}

void RowState::merge(int64_t i, float blockMax, float blockSum, const float *blockAcc)
{
    float &mi = m[size_t(i)], &zi = z[size_t(i)];
    auto row = acc.row(i).array();
    const Eigen::Map<const Eigen::ArrayXf> block(blockAcc, acc.cols());
    if (blockMax <= mi) { // one exp: the larger max scales by 1
        const float beta = std::exp(blockMax - mi);
        row += beta * block.transpose();
        zi += beta * blockSum;
        return;
    }
    const float alpha = std::exp(mi - blockMax); // 0 for a query's first block (m = −inf)
    row = row * alpha + block.transpose();
    zi = zi * alpha + blockSum;
    mi = blockMax;
}

DenseRecord::DenseRecord(int64_t T)
    : score(MatrixRM::Zero(T, T))
    , count(MatrixRM::Zero(T, T))
    , mask(MatrixRM::Zero(T, T))
{
}

BlockAttention::BlockAttention(const char *kernel, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
    const AttentionOptions &options, float scale)
    : m_q(q)
    , m_k(k)
    , m_v(v)
    , m_options(options)
    , m_scale(scale)
{
    checkHeadInputs(kernel, q, k, v, options);
    m_keyOk = allowedKeys(q.rows(), options.padding);
}

void BlockAttention::gather(BlockScratch &s) const
{
    const int64_t nq = int64_t(s.queries.size()), nk = int64_t(s.keys.size()), d = width();
    const int64_t mp = roundUp(nq, kBlockRows), np = roundUp(nk, kBlockCols), dp = roundUp(d, kBlockCols);
    s.qg.resize(mp, d);
    s.qg.bottomRows(mp - nq).setZero();
    for (int64_t a = 0; a < nq; ++a)
        s.qg.row(a) = m_q.row(s.queries[size_t(a)]) * m_scale;
    s.vg.resize(np, dp);
    s.vg.bottomRows(np - nk).setZero();
    s.vg.rightCols(dp - d).setZero();
    for (int64_t c = 0; c < nk; ++c)
        s.vg.row(c).head(d) = m_v.row(s.keys[size_t(c)]);
    // Keys go in transposed, (d,keys), as blockProduct wants them: 8 key rows at a time, read across.
    s.zeros.assign(size_t(d), 0.0f);
    s.kt.resize(d, np);
    float *kt = s.kt.data();
    for (int64_t c0 = 0; c0 < np; c0 += 8) {
        const float *src[8];
        for (int64_t c = 0; c < 8; ++c)
            src[c] = c0 + c < nk ? m_k.data() + int64_t(s.keys[size_t(c0 + c)]) * d : s.zeros.data();
        transposeRows8(src, d, kt + c0, np);
    }
}

void BlockAttention::rowSoftmax(DenseRecord *dense, BlockScratch &s) const
{
    const int64_t nq = int64_t(s.queries.size()), nk = int64_t(s.keys.size()), np = s.s.cols();
    s.keep.resize(s.s.rows(), np);
    s.rowMax.assign(size_t(s.s.rows()), kNoKey);
    s.rowSum.assign(size_t(s.s.rows()), 0.0f);
    for (int64_t a = 0; a < nq; ++a) {
        const KeyRule *rule = s.rules.data() + a * nk;
        float *score = &s.s(a, 0), *keep = &s.keep(a, 0);
        for (int64_t c = 0; c < nk; ++c) { // branch-free, so that it vectorises
            keep[c] = rule[c] != KeyRule::Masked ? 1.0f : 0.0f;
            const float penalty = rule[c] == KeyRule::SelfPenalised ? kSelfPenalty : 0.0f;
            score[c] = keep[c] != 0.0f ? score[c] - penalty : kMaskedScore;
        }
        for (int64_t c = nk; c < np; ++c) {
            keep[c] = 0.0f;
            score[c] = kMaskedScore;
        }
        auto row = s.s.row(a).array();
        const float mx = row.maxCoeff();
        if (mx == kMaskedScore) { // nothing to attend in this block: the row adds nothing
            row.setZero();
            continue;
        }
        s.rowMax[size_t(a)] = mx;
        if (dense)
            record(*dense, s, a);
        row = (row - mx).exp() * s.keep.row(a).array();
        s.rowSum[size_t(a)] = row.sum();
    }
    s.s.bottomRows(s.s.rows() - nq).setZero();
}

void BlockAttention::record(DenseRecord &dense, const BlockScratch &s, int64_t a)
{
    const int64_t nk = int64_t(s.keys.size());
    const KeyRule *rule = s.rules.data() + a * nk;
    const bool other = std::find(rule, rule + nk, KeyRule::Allowed) != rule + nk; // not only a penalised self
    const int i = s.queries[size_t(a)];
    for (int64_t c = 0; c < nk; ++c)
        if (rule[c] != KeyRule::Masked) {
            const int j = s.keys[size_t(c)];
            dense.score(i, j) = s.s(a, c);
            dense.count(i, j) += 1.0f;
            if (rule[c] == KeyRule::Allowed || !other)
                dense.mask(i, j) = 1.0f;
        }
}

void BlockAttention::attendBlock(RowState &state, DenseRecord *dense, BlockScratch &s) const
{
    gather(s);
    const int64_t mp = s.qg.rows(), np = s.kt.cols(), dp = s.vg.cols(), d = width();
    s.s.resize(mp, np);
    blockProduct(s.s.data(), s.qg.data(), s.kt.data(), mp, d, np);
    rowSoftmax(dense, s);
    s.o.resize(mp, dp);
    blockProduct(s.o.data(), s.s.data(), s.vg.data(), mp, np, dp);
    for (size_t a = 0; a < s.queries.size(); ++a)
        if (s.rowMax[a] != kNoKey)
            state.merge(s.queries[a], s.rowMax[a], s.rowSum[a], s.o.row(int64_t(a)).data());
}

void BlockAttention::visit(const BlockScratch &s) const
{
    const std::lock_guard<std::mutex> lock(m_visitLock);
    m_options.patternVisitor->visitBlock(s.queries, s.keys, s.rules);
}

void BlockAttention::finishDense(const DenseRecord &dense, const std::vector<double> &lse, AttentionResult &result)
{
    const int64_t T = dense.score.rows();
    result.weights = Tensor({T, T});
    result.mask = Tensor({T, T});
    MatrixMap w = result.weights.matrix();
    result.mask.matrix() = dense.mask;
    for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j)
            if (dense.count(i, j) > 0.0f && std::isfinite(lse[size_t(i)])) // a row with no key keeps weight 0
                w(i, j) = float(dense.count(i, j) * std::exp(double(dense.score(i, j)) - lse[size_t(i)]));
}

void BlockAttention::complete(RowState &state, const DenseRecord *dense, AttentionResult &result)
{
    const int64_t T = state.acc.rows();
    std::vector<double> lse(size_t(T), -std::numeric_limits<double>::infinity());
    for (int64_t i = 0; i < T; ++i) {
        const float z = state.z[size_t(i)];
        if (z <= 0.0f) {
            state.acc.row(i).setZero();
            continue;
        }
        state.acc.row(i) /= z;
        lse[size_t(i)] = double(state.m[size_t(i)]) + std::log(double(z));
    }
    result.context = std::move(state.context);
    if (dense)
        finishDense(*dense, lse, result);
}

std::pair<int64_t, int64_t> queryRun(int64_t b, int64_t T, std::vector<int> &queries)
{
    const int64_t begin = b * kQueryRun, end = std::min(T, begin + kQueryRun);
    for (int64_t i = begin; i < end; ++i)
        queries.push_back(int(i));
    return {begin, end};
}

} // namespace atlas::attention
