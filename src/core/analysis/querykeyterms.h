#pragma once

#include "trace/names.h"
#include "trace/trace.h"

#include <string>
#include <vector>

// BertViz's neuron view, for one head, one query i and one key j: the attention score as the sum it is,
// q_i · k_j = Σ_c q_ic k_jc, term by term, then divided by √d (and, for the kinds that add one, plus the
// position bias), against the traced score and weight. Read from the trace: layer.{l}.attn.q and .k (RoPE: the
// turned .q_rot and .k_rot, what the scores use), .scores, .masked and .probs; an encoder-decoder's from the site's
// tensors (names::attentionTensor: enc.layer.{l}.attn.*, dec.layer.{l}.attn.*, or the cross-attention's
// dec.layer.{l}.cross.*, whose keys are the source's positions).
namespace atlas {

struct QueryKeyTerms
{
    int layer = 0, head = 0, query = 0, key = 0, dim = 0;
    bool rotated = false; // RoPE: q and k after the turn
    std::vector<float> q, k, product; // (d): q_i, k_j and their elementwise product
    double dot = 0; // Σ product, in double
    bool unscaled = false; // the model does not divide its scores by √d (GPT-Neo, T5)
    double divisor = 1; // the scores divide by √divisor: d, Gemma 2's query_pre_attn_scalar, or 1 when unscaled
    double scaled = 0; // dot / √divisor
    double bias = 0; // what the scores add beyond that: traced score − scaled (ALiBi, T5, Shaw; else ≈ 0)
    double score = 0; // the traced score layer.{l}.attn.scores[h, i, j]
    bool capped = false; // Gemma 2: the score soft-capped (attn.capped) before the mask
    double cappedScore = 0; // c · tanh(score / c)
    bool masked = false; // the mask removes the pair (−∞ before softmax)
    double weight = 0; // layer.{l}.attn.probs[h, i, j]
    std::vector<int> largestTerms; // components by |product|, largest first
};

// The terms of head `head`'s score of query `query` and key `key` in layer `layer` (key −1: the key the query
// weights most). Empty `problem` on success; otherwise why not (a tensor not traced yet, an index out of range, a
// layer that ran an efficient kernel and traced no scores). `scaledScores`: the model's ModelConfig::scaleScores;
// `divisor`: what the scores divide by the root of when not d (ModelConfig::queryScaleBase), 0 for d.
QueryKeyTerms queryKeyTerms(const Trace &trace, int layer, int head, int query, int key, std::string *problem,
    const names::AttentionSite &site = {}, bool scaledScores = true, double divisor = 0);

} // namespace atlas
