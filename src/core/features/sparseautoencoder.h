#pragma once

#include "tensor/tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

// A sparse autoencoder: a dictionary of F features for the activations x ∈ ℝ^d at one site of a model (Bricken et al.
// 2023; Templeton et al. 2024), in SAELens's layout and conventions, rows as vectors:
//   pre = (x − b_dec) W_enc + b_enc      W_enc [d, F], b_enc [F]; b_dec is subtracted only with
//                                        `applyDecoderBiasToInput` (SAELens's apply_b_dec_to_input; Gemma Scope: no)
//   f   = ReLU(pre)                       standard, trained with an L1 penalty
//         ReLU of the k largest pre      TopK (Gao et al. 2024); a tie at the k-th value goes to the lower index
//         pre · [pre > θ]                JumpReLU (Rajamanoharan et al. 2024), θ [F] > 0 (Gemma Scope: ReLU(pre) ·
//                                        [pre > θ], the same for θ ≥ 0)
//   x̂   = f W_dec + b_dec                W_dec [F, d], b_dec [d]
namespace atlas {

enum class SaeArchitecture { Standard, TopK, JumpRelu };
const char *saeArchitectureName(SaeArchitecture architecture); // SAELens's: "standard" | "topk" | "jumprelu"
SaeArchitecture saeArchitectureFromName(const std::string &name); // throws atlas::Error naming the three

struct SparseAutoencoder
{
    SaeArchitecture architecture = SaeArchitecture::Standard;
    int k = 0; // TopK's features per row
    bool applyDecoderBiasToInput = true;
    Tensor wEnc, bEnc, wDec, bDec;
    Tensor threshold; // JumpReLU's θ [F]; empty otherwise

    int64_t inputSize() const { return wEnc.empty() ? 0 : wEnc.dim(0); }
    int64_t width() const { return wEnc.empty() ? 0 : wEnc.dim(1); }
    // Every tensor's shape against W_enc's [d, F], k within 1 … F, θ finite and ≥ 0. Throws atlas::Error naming
    // `where`, the tensor and both shapes.
    void validate(const std::string &where) const;

    Tensor preActivations(const Tensor &x) const; // [N, d] → [N, F]
    Tensor activate(const Tensor &pre) const; // [N, F] → f [N, F]
    Tensor encode(const Tensor &x) const { return activate(preActivations(x)); }
    Tensor decode(const Tensor &f) const; // [N, F] → x̂ [N, d]
};

// The indices of the k largest of `values` [count], largest first, a tie going to the lower index: TopK's choice, and
// the strongest features at a token. `order` is scratch space, kept by a caller that asks row after row.
std::vector<int64_t> largestIndices(const float *values, int64_t count, int k, std::vector<int64_t> &order);

// A fresh dictionary (Conerly et al.'s 2024 initialisation): each decoder row a random direction of length 0.1, the
// encoder its transpose, the biases 0 (the trainer sets b_dec to the data's mean), θ = 0.001 for JumpReLU.
SparseAutoencoder initialSparseAutoencoder(
    SaeArchitecture architecture, int64_t inputSize, int64_t width, int k, uint64_t seed);

// The training objective on a batch X [B, d], with E = x̂ − x:
//   reconstruction  (1/B) Σ_b ‖E_b‖²
//   standard        + λ (1/B) Σ_b Σ_i f_bi ‖W_dec,i‖   (the L1 penalty scaled by each decoder row's length)
//   TopK            nothing more
//   JumpReLU        + λ (1/B) Σ_b Σ_i [pre_bi > θ_i]   (L0), its gradient for θ through the rectangle kernel of
//                   width ε (SAELens's straight-through estimator: ∂/∂θ of pre·[pre > θ] is −(θ/ε) K((pre − θ)/ε),
//                   of [pre > θ] −(1/ε) K((pre − θ)/ε), K the indicator of (−½, ½)); the gradient for pre stays
//                   [pre > θ]. θ is trained through log θ, as SAELens does.
// and for TopK with dead features (`dead`, those the trainer saw fire on no row for a while), the auxiliary loss
// AuxK (Gao et al. 2024, §A.2), which gives the dead ones a gradient by asking them to explain what the live ones miss:
//   + α · min(n_dead / k_aux, 1) · (1/B) Σ_b ‖ê_b − e_b‖²,  e = x − x̂ held constant, ê = z W_dec (no b_dec),
//   z_b the ReLU of the k_aux largest pre-activations of the dead features in row b (a tie to the lower index), at
//   most n_dead of them. ê without b_dec and the ReLU are the paper's and OpenAI's code's (SAELens keeps b_dec in ê and
//   negative pre-activations in z); the factor min(n_dead / k_aux, 1) and the error per row, not normalised, are
//   SAELens's, whose α is 1 (the paper's 1/32 goes with its normalised error); k_aux = d/2 is the paper's.
struct SaeObjective
{
    double sparsity = 2.0; // λ (standard; JumpReLU's L0 coefficient is smaller, 0.5 by `train-sae`'s default)
    double bandwidth = 0.05; // ε (JumpReLU)
    double auxiliary = 0; // α (TopK); 0: no auxiliary loss
    int auxiliaryK = 0; // k_aux; 0: half the input size
};

struct SaeBatchResult
{
    double loss = 0, reconstruction = 0, sparsity = 0, auxiliary = 0, l0 = 0; // l0: mean active features per row
    // "W_enc", "b_enc", "W_dec", "b_dec", and for JumpReLU "log_threshold" (∂/∂log θ)
    std::map<std::string, Tensor> gradients;
    std::vector<bool> fired; // [F]: active on at least one row of the batch
};
// `dead` [F] (or empty: none) marks the features AuxK reads.
// A transcoder's batch: `target` [B, d] the rows it predicts from x, in place of x in the reconstruction (and in
// AuxK's e = y − ŷ).
SaeBatchResult saeBatch(const SparseAutoencoder &sae, const Tensor &x, const SaeObjective &objective,
    const std::vector<bool> &dead = {}, const Tensor *target = nullptr);

// How well a dictionary reconstructs rows X [N, d]: the fraction of variance unexplained Σ‖x − x̂‖² / Σ‖x − mean x‖²,
// the mean number of active features per row, and per feature the fraction of rows it is active on. A transcoder's
// prediction of `target` [N, d] from X: Σ‖y − ŷ‖² / Σ‖y − mean y‖².
struct SaeQuality
{
    double unexplained = 0, l0 = 0;
    std::vector<double> density; // [F]
    int dead = 0; // active on no row
    int dense = 0; // active on more than a tenth of the rows
};
SaeQuality saeQuality(const SparseAutoencoder &sae, const Tensor &x, const Tensor &target);
inline SaeQuality saeQuality(const SparseAutoencoder &sae, const Tensor &x)
{
    return saeQuality(sae, x, x);
}

} // namespace atlas
