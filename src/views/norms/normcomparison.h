#pragma once

#include "model/model.h"
#include "trace/trace.h"

#include <Eigen/Core>

#include <string>
#include <vector>

// LayerNorm against BatchNorm on one block's norm input X [T, D] (Ba et al. 2016; Ioffe & Szegedy 2015):
//   LayerNorm: each token over its D features,  (x_t,f − μ_t) / √(σ_t² + ε)   (RMSNorm: x_t,f / √(mean_f x_t,f² + ε))
//   BatchNorm: each feature over a batch,       (x_t,f − μ_f) / √(σ_f² + ε),  μ_f and σ_f² over the batch's rows
// Here the batch is the input's T tokens, as a BatchNorm over a sequence's positions would take them (in training,
// over every position of every sequence in the batch), with its learned scale and shift left out on both sides.
// LayerNorm's output for a token reads that token alone. BatchNorm's reads every token of the batch, the later ones
// too, so a causal model could not use it as it stands, and with one token, as when a model generates, each feature's
// mean is the token itself and BatchNorm gives 0 everywhere.
namespace atlas {

using NormMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct NormComparison
{
    int layer = 0, tokens = 0, width = 0; // T and D
    std::string input, output; // the block's first norm: the trace tensor it reads and the one it writes
    bool rms = false; // the model's norms are RMSNorm: no mean is taken away
    float epsilon = 1e-5f;
    NormMatrix tokenNormed; // [T, D] the model's own norm of each row, before its γ and β
    NormMatrix batchNormed; // [T, D] BatchNorm over the T tokens, without a scale and shift
    std::vector<float> tokenMean, tokenScale; // [T] μ_t (0 for RMSNorm) and √(σ_t² + ε), what each row is divided by
    std::vector<float> featureMean, featureScale; // [D] μ_f and √(σ_f² + ε) over the tokens
    // [T] mean over the features of |BatchNorm of token t with the statistics of tokens 0 … t alone − with all T|: what
    // the tokens after t change in t's output. 0 at the last token; at token 0, BatchNorm over one token gives 0, so
    // the mean size of its full output. LayerNorm's is 0 everywhere.
    std::vector<double> laterTokensChange;
    // The largest |γ ⊙ tokenNormed + β − the trace's output|: the norm recomputed here is the model's own.
    double traceDifference = 0;
};

// The two normalisations of X, and the change the later tokens make (for any X [T, D], T ≥ 1).
NormComparison compareNorms(const NormMatrix &x, float epsilon, bool rms);

// The input and output trace names of block `layer`'s first norm (its recipe's first Norm step: LN₁ in a pre-norm or
// post-norm block, the attention output's norm in OLMo 2's); empty names for a model with two stacks.
std::pair<std::string, std::string> firstNormTensors(const ModelConfig &config, int layer);

// compareNorms of block `layer`'s first norm input in `trace`, checked against the norm's output there. Throws
// atlas::Error naming a tensor the trace does not hold, or for a model with two stacks.
NormComparison compareNorms(const Model &model, const Trace &trace, int layer);

} // namespace atlas
