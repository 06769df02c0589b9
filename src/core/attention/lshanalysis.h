#pragma once

#include "attention/lshattention.h"

#include <array>
#include <vector>

// What the LSH view shows of one head of a layer that ran Reformer's LSH attention (lshattention.h), computed
// from the traced run: its buckets and rotations, its effective weights and mask. Nothing here rehashes or
// rescores by a second rule: the sort, the chunk rule and the hash of an in-plane direction are the kernel's own
// functions, and full attention for comparison is the kernel itself with one bucket and one chunk.
namespace atlas::attention {

// A pair full attention weighs but LSH never let the query see.
struct LshMissedPair
{
    int query = 0, key = 0;
    double weight = 0; // full shared-QK attention's weight of the key in the query's row
};

// The traced tensors of one head: buckets (rounds,T), rotations (rounds,d,b/2), q (T,d), LSH's weights and mask
// (T,T), the parameters the layer ran with, causal, padding.
struct LshTracedHead
{
    ConstMatrixMap q {nullptr, 0, 0};
    const float *buckets = nullptr; // rounds × T, row-major
    const float *rotations = nullptr; // rounds × d × b/2
    const float *weights = nullptr; // T × T
    const float *mask = nullptr; // T × T
    LshParams params;
    bool causal = true;
    std::vector<int> padding;
};

struct LshHeadAnalysis
{
    static constexpr int kMaxFullTokens = 256; // full attention is recomputed for comparison up to this T
    static constexpr int kSectorSteps = 720; // angular resolution of the in-plane bucket sectors

    int T = 0, d = 0, rounds = 0, buckets = 0, chunk = 0;
    bool causal = true;
    std::vector<bool> padding; // T
    std::vector<std::vector<int>> bucket; // [round][position]
    std::vector<std::vector<int>> order; // [round][sorted index] -> position, by (bucket, position)
    std::vector<float> probs, mask; // (T,T) LSH's effective weights and its mask (union over rounds)
    // The keys k̂ = q/|q| projected on their two principal directions and pushed out to the unit circle (T), and
    // the share of the keys' variance that plane holds.
    std::vector<std::array<double, 2>> points;
    double explained = 0;
    // [round][step]: the bucket a key lying in the plane at angle step·2π/kSectorSteps would get (the kernel's
    // hash of that direction).
    std::vector<std::vector<int>> sector;
    // [round][position]: whether the key's point lies in its own bucket's sector (the hash of its in-plane
    // direction is its bucket). Where it does not, the 2-D picture cannot show the d-dimensional hash: a
    // projection error, not a hashing error.
    std::vector<std::vector<bool>> inOwnSector;
    std::vector<double> full; // (T,T) full shared-QK attention (the kernel, one bucket); empty when T > kMaxFullTokens
    std::vector<LshMissedPair> missed; // full weight >= 0.1 outside LSH's mask, heaviest first
    double missedFraction = 0; // mean over queries of full attention's weight outside LSH's mask

    // Whether, in `round`, the query at sorted index a may attend the key at sorted index b: b in a's chunk or the
    // one before it (lshChunkKeys), not in the future when causal, not padding.
    bool allowedSorted(int round, int a, int b) const;
};

// Throws atlas::Error when the tensors do not fit together (shapes against T, d, rounds and buckets).
LshHeadAnalysis analyzeLshHead(const LshTracedHead &head);

} // namespace atlas::attention
