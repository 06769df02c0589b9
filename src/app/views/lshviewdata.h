#pragma once

#include "views/viewinput.h"

#include <QString>

#include <array>
#include <string>
#include <vector>

namespace atlas {

// A pair full attention weighs but LSH never let the query see.
struct LshMissedPair
{
    int query = 0, key = 0;
    double weight = 0; // full attention's weight of the key in the query's row
};

// What the LSH view draws for one head of one layer that ran LSH attention, read from the trace. Only display
// quantities are computed here: the (bucket, position) order, a 2-D projection, and full attention for comparison.
struct LshHeadData
{
    static constexpr int kMaxFullTokens = 256; // full attention is recomputed for display up to this T
    static constexpr int kSectorSteps = 720; // angular resolution of the projected bucket sectors

    int T = 0, d = 0, rounds = 0, buckets = 0, chunk = 0;
    bool causal = true;
    std::vector<bool> padding; // T
    std::vector<std::vector<int>> bucket; // [round][position], from layer.L.lsh.buckets
    std::vector<std::vector<int>> order; // [round][sorted index] -> position, sorted by (bucket, position)
    std::vector<float> probs, mask; // (T,T) LSH's effective weights and mask (union over rounds)
    std::vector<std::array<double, 2>> points; // T unit vectors: the normalised keys projected on a plane
    std::vector<std::vector<int>> sector; // [round][step]: bucket of the in-plane direction at angle step·2π/steps
    double explained = 0; // share of the keys' variance the plane shows
    std::vector<double> full; // (T,T) full shared-QK softmax attention; empty when T > kMaxFullTokens
    std::vector<LshMissedPair> missed; // full weight ≥ 0.1 outside LSH's mask, heaviest first
    double missedFraction = 0; // mean over queries of full attention's weight outside LSH's mask

    // Sorted indices a (query) and b (key) of `round`: same chunk or the previous one, causal, key not padding.
    bool allowedSorted(int round, int a, int b) const;
};

// The attention kind layer `layer` ran, from the formula of its `attn.context` ("full" for exact attention).
std::string layerAttentionKind(const Trace &trace, int layer);

// The positions sorted by (bucket, position).
std::vector<int> sortByBucket(const std::vector<int> &bucket);

// Reads the head's LSH tensors and computes the display quantities. Returns an empty string on success, else a
// message for the user. `chunk` is the chunk length the layer ran with.
QString loadLshHead(const ViewInput &input, int layer, int head, int chunk, LshHeadData *out);

// The chunk length of layer `layer`'s LSH run, from its formula ("… chunk=4 …"); `fallback` when absent.
int lshChunkOfLayer(const Trace &trace, int layer, int fallback);

} // namespace atlas
