#pragma once

#include "model/model.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

// What kind of head is this: a score per head for each of the kinds of head the interpretability literature names
// (Elhage et al. 2021; Olsson et al. 2022; Wang et al. 2022), read from one run of the model on a repeated random
// sequence and from its weights. The sequence is n distinct random ordinary tokens, then the same n again
// (TransformerLens's repeated-tokens test), so that the second half has an earlier copy of every token.
// With A the head's attention (rows: queries i, columns: keys j), every score but copying is a mean over queries:
//   previous token   A[i, i−1] over i ≥ 1
//   induction        A[i, i−n+1] over the second half's i = n … 2n−2: the token after the earlier copy of x_i
//   duplicate token  A[i, i−n] over the second half's i = n … 2n−1: the earlier copy of x_i itself
//   first token      A[i, 0] over i ≥ 1 (the sink)
//   self             A[i, i] over i ≥ 1
//   local            Σ A[i, j] over |i − j| ≤ 3, over i ≥ 1
//   copying          Σ Re λ / Σ |λ| over the eigenvalues λ of the head's OV circuit read from token to token,
//                    W_E W_V,h W_O,h W_Uᵀ (V × V), whose nonzero eigenvalues are those of the d × d matrix
//                    W_O,h W_Uᵀ W_E W_V,h: 1 when the head writes what it reads (Elhage et al.'s copying heads),
//                    −1 when it writes against it. The norms are left out, as the paper leaves them.
// An encoder–decoder's scores are its decoder's self-attention heads', the source being the sequence's first half.
namespace atlas {

enum class HeadClass { PreviousToken, Induction, DuplicateToken, FirstToken, Self, Local, Copying };
constexpr int kHeadClassCount = 7;
const char *headClassName(HeadClass kind); // "previous-token", "induction" …
const char *headClassTitle(HeadClass kind); // "previous token", "induction" … (for tables and views)
// The definition above of one score, in a sentence (the view's help, `analyze-heads --classify`).
const char *headClassDefinition(HeadClass kind);

struct HeadClasses
{
    int layers = 0, heads = 0, half = 0;
    std::vector<int> tokens; // the sequence run: its first half, then the same again
    std::vector<double> scores; // [kHeadClassCount, layers, heads]
    // With `keepAttention`: every head's probabilities on the sequence, [layers, heads, T, T] (T = 2 · half), for
    // pictures; zeros for a block LayerDrop left out.
    std::vector<float> attention;

    double score(HeadClass kind, int layer, int head) const
    {
        return scores[(size_t(kind) * size_t(layers) + size_t(layer)) * size_t(heads) + size_t(head)];
    }
};

// The repeated random sequence: `half` distinct ordinary tokens (ModelConfig::ordinaryTokens; printable characters,
// 32 … 126, for a model that reads bytes) drawn from `seed`, then the same again; fewer when the context holds fewer
// than 2 · half. Throws atlas::Error for a context of fewer than 4 tokens or fewer ordinary tokens than a half.
std::vector<int> repeatedRandomTokens(const ModelConfig &config, int half, uint64_t seed);
// Every head's scores on `tokens`, a sequence whose second half repeats its first (repeatedRandomTokens). Throws
// atlas::Error for another sequence, and when `cancel` turns true (polled between layers).
HeadClasses classifyHeads(std::shared_ptr<const Model> model, const std::vector<int> &tokens,
    const std::atomic<bool> *cancel = nullptr, bool keepAttention = false);

} // namespace atlas
