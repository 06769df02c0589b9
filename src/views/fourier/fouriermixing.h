#pragma once

#include "model/model.h"
#include "trace/trace.h"

#include <Eigen/Core>

#include <string>
#include <vector>

// FNet's token mixing (Lee-Thorp et al. 2021, "FNet: Mixing Tokens with Fourier Transforms"): the self-attention
// sub-layer of a BERT-like encoder is replaced by the real part of a two-dimensional discrete Fourier transform, over
// the hidden units and then over the positions, with no weights:
//   Y = Re(F_T X F_d),   F_N[j, k] = e^(−2πi·jk/N),   X [T, d] the sub-layer's input.
// Hugging Face's FNetBasicFourierTransform computes torch.fft.fftn(X, dim=(1, 2)).real, the same thing.
// Writing F = C − iS (C = cos 2πjk/N, S = sin 2πjk/N) and X real, Y = C_T (X C_d) − S_T (X S_d), so row i of Y is a
// sum over the tokens j of
//   c_ij = C_T[i, j] a_j − S_T[i, j] b_j,   a_j = x_j C_d,  b_j = x_j S_d  (x_j's own transform is a_j − i b_j),
// and ‖c_ij‖ / Σ_j' ‖c_ij'‖ is the share of row i's output that token j writes: the counterpart of the weight
// attention gives key j, but fixed by i, j and T rather than learned from the input. Every token mixes with every
// other, the later ones too, which is why FNet is an encoder.
namespace atlas {

using FourierMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct FourierMixing
{
    int layer = 0, tokens = 0, width = 0; // T and d
    int length = 0; // N, the positions transformed: T, or an FNet model's context (X padded with zero rows)
    // Block `layer` is an FNet block (model/fourierlayers.h): the mixing is what the model computes, and it has no
    // attention to compare with.
    bool fnetBlock = false;
    std::string input; // the trace tensor mixed: the token-mixing sub-layer's input in block `layer`
    FourierMatrix output; // [T, d] Y = Re(F_N X F_d), its first T rows
    FourierMatrix cosine; // [T, T] C[i, j] = cos(2π·ij/N), the real part of F_N's corner
    FourierMatrix share; // [T, T] ‖c_ij‖ / Σ_j ‖c_ij‖ (0 in a row whose contributions are all 0)
    FourierMatrix attention; // [T, T] the chosen head's probabilities in the same block, for comparison; empty in an
                             // FNet block
    int head = 0;
    // Means over the rows: the largest share, the share from later tokens (j > i), and the head's largest weight.
    double largestShare = 0, laterShare = 0, largestWeight = 0;
    // Multiply–adds of one sub-layer: FNet's by fast Fourier transforms, T·d·(log₂T + log₂d) complex operations
    // counted as 4 real multiply–adds each (the order, not a kernel's count), against attention's projections
    // (4·T·d²) and scores and weighted sum (2·T²·d).
    double fourierWork = 0, attentionWork = 0;
};

// Y = Re(F_N X F_d) and the shares of its rows, for any real X [T, d], over N = `length` positions (0: N = T).
FourierMixing fourierMix(const FourierMatrix &x, int length = 0);

// The trace name of block `layer`'s token-mixing sub-layer input (its first input in the block's recipe):
// "layer.2.ln_1" in a pre-norm block, the stream itself in a post-norm one. Throws atlas::Error for a model with two
// stacks.
std::string fourierMixingInput(const ModelConfig &config, int layer);

// fourierMix of block `layer`'s attention input in `trace`, with head `head`'s probabilities of the same block beside
// it (`padding`: the input's, for a trace that keeps attention on demand); in an FNet block, the block's own mixing
// over the model's context. Throws atlas::Error naming a tensor the trace does not hold.
FourierMixing fourierMixing(
    const Model &model, const Trace &trace, int layer, int head, const std::vector<int> &padding = {});

} // namespace atlas
