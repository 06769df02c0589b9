#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include "attention/attentionresult.h"
#include "util/parallel.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

// The machinery the sparse kernels share. A pattern is computed in passes; a pass is a list of blocks, each
// a set of query positions and a set of key positions, whose scores are one small dense product. Only the
// (queries × keys) of each block are ever computed, so the work is the pattern's size, not T×T. Several
// passes over disjoint key sets merge exactly through an online softmax (as in FlashAttention).
namespace atlas::attention {

// How query i treats key j inside a block.
enum class KeyRule : unsigned char {
    Masked, // not attended
    Allowed, // attended with its score
    SelfPenalised, // Reformer's own-key rule: attended with score − kSelfPenalty
};

// Receives a block-sparse kernel's blocks instead of their attention (AttentionOptions::patternVisitor).
// BlockAttention::pass calls it one block at a time (under a lock, from whichever worker thread built the
// block), after padding and the kernel's rule have set every (query, key)'s rule.
class PatternVisitor
{
public:
    virtual ~PatternVisitor() = default;
    // queries (nq) and keys (nk) are positions; rules (nq, nk) row-major say how query a treats key c.
    virtual void visitBlock(
        const std::vector<int> &queries, const std::vector<int> &keys, const std::vector<KeyRule> &rules)
        = 0;
};

// Reformer forbids a token to attend itself unless nothing else is available. As in trax we subtract 1e5 from
// the query's own score instead of masking it: next to any real score its weight underflows to 0 in float32,
// yet a query whose only key is itself (the first token under a causal mask) still attends it with weight 1.
inline constexpr float kSelfPenalty = 1e5f;
// A masked key's score: finite, so that score − max never makes a NaN.
inline constexpr float kMaskedScore = -1e30f;

// Per-query online-softmax state: running max m, running sum z = Σ exp(s − m), unnormalised context acc, which
// BlockAttention::complete divides by z in place and hands over as the result's context. A kernel makes it before
// anything else: the previous call's context, just freed, then fits it again, where a smaller buffer allocated
// first could take part of that memory and send the context to new pages (about 11 µs each on first touch on the
// benchmark machine: a bimodal kernel).
struct RowState
{
    RowState(int64_t T, int64_t d);
    // Folds one block's part of query i in: its max score, Σ exp(s − max) and Σ exp(s − max) v (d values).
    void merge(int64_t i, float blockMax, float blockSum, const float *blockAcc);
    std::vector<float> m, z; // (T)
    Tensor context; // (T,d)
    MatrixMap acc; // context's values
};

// The scores and rules seen by each (query, key), kept only when dense weights are asked for.
struct DenseRecord
{
    explicit DenseRecord(int64_t T);
    MatrixRM score; // (T,T) the score of the last block that saw (i, j) (the same in every block)
    MatrixRM count; // (T,T) how many blocks attended (i, j): LSH counts a key once per round that sees it
    MatrixRM mask; // (T,T) 1 where (i, j) was attended; an own key under SelfPenalised only if it was alone
};

// Scratch of one thread: the block's positions, rules and gathered, padded matrices.
struct BlockScratch
{
    std::vector<int> queries, keys;
    std::vector<KeyRule> rules; // (queries, keys)
    MatrixRM qg, kt, vg, s, o, keep;
    std::vector<float> rowMax, rowSum, zeros;
    std::vector<unsigned char> keyOk; // (keys)
    std::vector<unsigned char> keyFlags; // (keys) for a kernel's setRules
};

// Queries per block of the kernels that cut the sequence into runs of consecutive queries (strided, fixed,
// longformer's global rows).
inline constexpr int64_t kQueryRun = 64;

// Block b's queries [begin, end) = [b·kQueryRun, min(T, (b+1)·kQueryRun)), appended to `queries`.
std::pair<int64_t, int64_t> queryRun(int64_t b, int64_t T, std::vector<int> &queries);
// The number of such blocks for T queries.
inline int64_t queryRuns(int64_t T)
{
    return (T + kQueryRun - 1) / kQueryRun;
}

class BlockAttention
{
public:
    // q, k, v are (T,d); scores are scale · q_i · k_j. Validates them (checkHeadInputs) and the padding.
    BlockAttention(const char *kernel, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
        const AttentionOptions &options, float scale);

    int64_t length() const { return m_q.rows(); }
    int64_t width() const { return m_q.cols(); }
    bool causal() const { return m_options.causal; }
    bool dense() const { return m_options.dense; }
    bool keyAllowed(int64_t j) const { return m_keyOk[static_cast<size_t>(j)] != 0; }

    // Runs blocks [0, count) on all cores, in pieces. makeBlock(b, queries, keys) fills block b's positions: keys
    // distinct within a block, and no query in two blocks of one pass. rule(i, j) says how query i treats key j;
    // padding keys are masked before it is asked. dense may be null.
    template <class MakeBlock, class Rule>
    void pass(RowState &state, DenseRecord *dense, int64_t count, const MakeBlock &makeBlock, const Rule &rule) const
    {
        static_assert(static_cast<int>(KeyRule::Masked) == 0);
        passSettingRules(state, dense, count, makeBlock, [&](BlockScratch &s) {
            const size_t nk = s.keys.size();
            const unsigned char *ok = s.keyOk.data();
            const int *keys = s.keys.data();
            for (size_t a = 0; a < s.queries.size(); ++a) {
                KeyRule *row = s.rules.data() + a * nk;
                const int i = s.queries[a];
                for (size_t c = 0; c < nk; ++c) // keyOk is 0 or 1: a product, not a branch, so that it vectorises
                    row[c] = KeyRule(ok[c] * static_cast<unsigned char>(rule(i, keys[c])));
            }
        });
    }

    // The same, with a block's rules set at once where asking per (query, key) would cost more than the block's
    // products: setRules(s) fills s.rules (queries × keys, row-major) from s.queries, s.keys and s.keyOk, and
    // must mask the keys whose keyOk is 0 (padding).
    template <class MakeBlock, class SetRules>
    void passSettingRules(
        RowState &state, DenseRecord *dense, int64_t count, const MakeBlock &makeBlock, const SetRules &setRules) const
    {
        parallelForPieces(count, std::max<int64_t>(1, count / 16), [&](int64_t begin, int64_t end) {
            BlockScratch s;
            for (int64_t b = begin; b < end; ++b) {
                s.queries.clear();
                s.keys.clear();
                makeBlock(b, s.queries, s.keys);
                if (s.queries.empty() || s.keys.empty())
                    continue;
                const size_t nk = s.keys.size();
                s.keyOk.resize(nk);
                for (size_t c = 0; c < nk; ++c)
                    s.keyOk[c] = keyAllowed(s.keys[c]);
                s.rules.resize(s.queries.size() * nk);
                setRules(s);
                if (m_options.patternVisitor)
                    visit(s);
                else
                    attendBlock(state, dense, s);
            }
        });
    }

    // weights (T,T) = count · exp(score − lse_i) and the mask, from the record and each query's final lse.
    static void finishDense(const DenseRecord &dense, const std::vector<double> &lse, AttentionResult &result);
    // result.context (T,d) = acc / z (0 for a query that attended nothing), and the dense weights and mask when
    // `dense` was recorded, from lse = m + log z (−inf for none), in double: next to Reformer's own-key score of
    // about −1e5, float would keep only 1/128 of log z. Consumes the state's accumulator.
    static void complete(RowState &state, const DenseRecord *dense, AttentionResult &result);

private:
    void attendBlock(RowState &state, DenseRecord *dense, BlockScratch &s) const;
    void visit(const BlockScratch &s) const;
    void gather(BlockScratch &s) const;
    void rowSoftmax(DenseRecord *dense, BlockScratch &s) const;
    static void record(DenseRecord &dense, const BlockScratch &s, int64_t a);

    ConstMatrixMap m_q, m_k, m_v;
    AttentionOptions m_options;
    float m_scale;
    std::vector<unsigned char> m_keyOk; // (T)
    mutable std::mutex m_visitLock; // serialises the pattern visitor's calls
};

// blockProduct's register tile: m must be a multiple of kBlockRows, n of kBlockCols.
inline constexpr int64_t kBlockRows = 8, kBlockCols = 16;
inline int64_t roundUp(int64_t n, int64_t to)
{
    return (n + to - 1) / to * to;
}

// C (m,n) = A (m,k) B (k,n), all row-major and contiguous, m a multiple of 8, n of 16. A register-blocked
// kernel for the blocks' small products: here it runs as fast as OpenBLAS on one core, and unlike OpenBLAS it
// scales when two threads call it at once (measured: two threads calling sgemm were slower than one).
// The same with leading dimensions (floats between rows): C's rows ldc apart, A's lda, B's ldb.
void blockProduct(
    float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb, int64_t m, int64_t k, int64_t n);
inline void blockProduct(float *c, const float *a, const float *b, int64_t m, int64_t k, int64_t n)
{
    blockProduct(c, n, a, k, b, n, m, k, n);
}

} // namespace atlas::attention
