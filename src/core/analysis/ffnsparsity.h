#pragma once

#include "model/model.h"
#include "trace/trace.h"

#include <string>
#include <vector>

namespace atlas {

// Sparse is Enough (Jaszczur et al. 2021) on a dense feed-forward layer (the Sparse FFN view): the layer's
// activations act(U) [T, F] from the trace, split into blocks of N neurons, and for each token only one neuron per
// block kept. The paper trains a small controller to choose it; here the choice is the oracle's (the neuron of
// largest |activation| in its block), so the error measured is what the best controller could reach.
struct FfnSparsity
{
    int layer = 0, tokens = 0, neurons = 0;
    int blockSize = 0; // N
    Tensor dense; // [T, F] act(U): every neuron
    Tensor sparse; // [T, F] the kept neurons' activations, 0 elsewhere
    // ‖M_sparse − M‖ / ‖M‖ per token, M = act(U) W_proj + b_proj the dense layer's output and M_sparse the same with
    // the sparse activations; and over all tokens (‖·‖ of the whole [T, D]).
    std::vector<double> tokenError;
    double error = 0;
    // The error against the neurons kept per token: the top k by |activation| (k = 1, 2, 4 … F), and one per block
    // for N = 2, 4 … 64 (F/N neurons kept).
    std::vector<int> topKept, blockKept;
    std::vector<double> topError, blockError;
    double positiveShare = 0; // the share of activations above 0 in the dense layer
};

// Why layer `layer` of the trace has no dense activations to sparsify (a mixture-of-experts layer, a chunked FFN,
// not computed yet), naming it; empty when it has.
std::string ffnSparsityProblem(const ModelConfig &config, const Trace &trace, int layer);

// Throws atlas::Error with ffnSparsityProblem's reason, or for a block size outside 1..F.
FfnSparsity ffnSparsity(const Model &model, const Trace &trace, int layer, int blockSize);

} // namespace atlas
