#pragma once

#include "model/model.h"
#include "trace/names.h"
#include "trace/trace.h"

#include <string>
#include <vector>

namespace atlas {

// What a model's positional encoding is, for the Positions view (docs/models.md, "Positions"). Computed from the
// model's config and weights and, for the kinds that add a term to the scores, from the trace's layer.{i}.attn.bias.
struct PositionProfile
{
    PositionKind kind = PositionKind::Learned;
    int length = 0; // T
    // [T, C]: what is added or applied at each position. Learned and sinusoidal: P (C = D). RoPE: cos(t·θⱼ), each
    // pair's rotation (C = d/2). ALiBi, T5, Shaw: the chosen head's score term B (C = T keys). Empty for none.
    Tensor encoding;
    std::string encodingTitle, encodingColumns; // what the matrix shows, and what its columns are
    // [T, T]: how two positions relate, or empty. Learned and sinusoidal: the cosine similarity of P's rows. RoPE:
    // mean over pairs of cos((t − s)·θⱼ), the factor RoPE puts on a query and key of the same content at positions
    // t and s: it depends on t − s only.
    Tensor similarity;
    std::string similarityTitle;
    // Per pair j (sinusoidal, RoPE): the wavelength 2π/θⱼ in positions.
    std::vector<double> wavelengths;
    // ALiBi and T5, per head: the term a query adds to a key d = 0, 1, … T−1 positions behind it.
    std::vector<std::vector<double>> biasByDistance;
    std::string formula; // the kind's formula, as the engine computes it
    bool nopeLayer = false; // the layer asked for does not turn q and k in a model whose other layers do (SmolLM3)

    // RoPE only: one query of the chosen head and the key it attends to most, pair by pair (the first pairs, which
    // turn fastest), before and after the rotation. q_rot · k_rot sums, over the pairs, |q||k| cos of the angle
    // between them, and that angle is the angle before rotation plus (query − key)·θⱼ.
    struct RotatedPair
    {
        double q[2], k[2]; // the pair before the rotation
        double qRot[2], kRot[2]; // after: turned by query·θⱼ and key·θⱼ
        double theta; // θⱼ
    };
    int query = -1, key = -1;
    std::vector<RotatedPair> rotatedPairs;
};

// `layer` and `head` choose the score term shown for ALiBi, T5 and Shaw (from the trace; Shaw's depends on the
// queries) and RoPE's rotated pairs, for `query` (−1: the last position). `stack`: an encoder–decoder's encoder or
// decoder (each adds or applies its own positions; `tokens` is that stack's length); `padding`, the input's, reads a
// layer a trace keeps on demand. Throws atlas::Error when the trace lacks what the kind needs.
PositionProfile positionProfile(const Model &model, const Trace &trace, int tokens, int layer, int head, int query = -1,
    const names::Stack &stack = names::kOnlyStack, const std::vector<int> &padding = {});

} // namespace atlas
