#pragma once

#include "attention/attentionresult.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace atlas::attention {

struct LshParams
{
    int rounds = 4; // hash rounds n_r
    int buckets = 32; // b: even, or 1 for a single bucket (every token hashes alike; no rotation)
    int chunk = 64; // c: positions per chunk of the sorted sequence
    uint64_t seed = 0; // round r's rotation is GaussianStream(seed, r).matrix(d, b/2)
};

// Reformer's LSH attention (Kitaev, Kaiser & Levskaya 2020), for one head:
//  - shared QK: the keys are the queries normalised, k_j = q_j/|q_j|; the k argument is not read (only its
//    shape is checked). Scores are q_i · k_j / √d, as in trax.
//  - angular LSH per round r: h(x) = argmax([x R_r ; −x R_r]) with R_r (d, b/2) of N(0,1) entries from the seed.
//  - sort the positions by (bucket, position), cut the sorted order into chunks of c; a query attends the keys
//    of its own chunk and of the chunk before it (the first chunk has none before it: no wrap-around, so no
//    key is seen twice in one round).
//  - a query's own key scores s_ii − 1e5 (see kSelfPenalty): attended only when nothing else is.
//  - padding keys are masked; when causal, keys j > i are masked.
//  - rounds combine by their log-sum-exps: out_i = Σ_r exp(lse_r(i) − logsumexp_r lse_r(i)) · out_r(i), which is
//    the softmax over every (round, key) pair a query saw, a key seen in n rounds counting n times.
// The work is O(rounds · T · c · d): no T×T matrix unless options.dense.
// q, k, v are (T,d); result.context is (T,d); extras "buckets" (rounds,T) bucket ids and "rotations"
// (rounds,d,b/2). Dense weights and mask are the union over rounds; the mask holds an own key only where it
// was alone.
AttentionResult lsh_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const LshParams &params, const AttentionOptions &options);

// The kernel's rules, for lshanalysis.h and the tests: the analysis of a head uses these, never a copy.

// Throws atlas::Error naming the parameter unless rounds >= 1, buckets is 1 or even, chunk >= 1.
void checkLshParams(const LshParams &params);

// The bucket of a key whose projection on a round's rotation is xR (b/2 values): argmax over [xR, −xR], the
// first on a tie. `projected` is any Eigen row or vector (float or double).
template <class Row> int lshBucketOf(const Row &projected)
{
    Eigen::Index up = 0, down = 0;
    const auto top = projected.maxCoeff(&up);
    const auto bottom = projected.minCoeff(&down);
    return top >= -bottom ? int(up) : int(projected.size() + down);
}

// The positions sorted by (bucket, position): a stable counting sort over `buckets` buckets.
std::vector<int> lshSortByBucket(const std::vector<int> &bucket, int buckets);

// The keys chunk `chunkIndex` of the sorted order attends: sorted indices [first, last) covering the chunk before
// it and its own (no wrap-around), for T positions in chunks of `chunk`.
std::pair<int64_t, int64_t> lshChunkKeys(int64_t chunkIndex, int64_t chunk, int64_t T);

} // namespace atlas::attention
