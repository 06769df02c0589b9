#pragma once

#include "model/model.h"
#include "trace/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace atlas {

// How sparse one head's attention is on the traced input, counted over the query–key pairs its mask allows (the
// finite cells of `layer.{i}.attn.masked`): softmax gives every allowed pair some weight, sparsemax and α-entmax
// (Correia et al. 2019) give many exactly 0.
struct HeadSparsity
{
    double alpha = 1; // 1 softmax, 1.5 1.5-entmax, 2 sparsemax, or the head's learned α
    std::vector<int> allowed; // per query: the keys its mask allows
    std::vector<int> support; // per query: the keys given more than 0
    int64_t allowedPairs = 0, zeros = 0; // over every query: pairs allowed, and of them those given exactly 0
    double zeroShare() const { return allowedPairs > 0 ? double(zeros) / double(allowedPairs) : 0.0; }
    double meanSupport() const; // keys given more than 0, averaged over the queries
};

struct AttentionSparsity
{
    Normaliser normaliser = Normaliser::Softmax;
    int tokens = 0;
    std::vector<std::vector<HeadSparsity>> heads; // [layer][head]
    int64_t allowed = 0, zeros = 0; // over every head of every layer
    double zeroShare() const { return allowed > 0 ? double(zeros) / double(allowed) : 0.0; }
};

// Why `trace` cannot give every layer's sparsity: a layer whose probabilities or mask are not traced yet (naming the
// tensor), or a model with more than one stack. Empty when it can.
std::string attentionSparsityProblem(const Model &model, const Trace &trace);

// Throws atlas::Error with attentionSparsityProblem's reason.
AttentionSparsity attentionSparsity(const Model &model, const Trace &trace);

// How peaked one head's rows are: each row's largest weight against an even split over the keys it reads (those
// given more than 0), averaged over the rows, and the share of those weights at or above `visible`. Near-uniform
// attention has largest weights close to the even split and few weights above a drawing threshold.
struct RowPeaks
{
    double meanLargest = 0; // over the rows: the largest weight
    double meanEven = 0; // over the rows: 1 / the keys given more than 0
    double visibleShare = 0; // of the weights above 0, those at or above `visible`
    bool nearlyUniform() const { return meanLargest < 2 * meanEven; }
};
// probs is [queries, keys], row-major.
RowPeaks rowPeaks(const float *probs, int queries, int keys, float visible);

} // namespace atlas
