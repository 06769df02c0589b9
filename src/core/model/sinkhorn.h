#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace atlas {

struct ModelConfig;

// Sparse Sinkhorn attention (Tay et al. 2020; docs/models.md, "Sinkhorn"): the sequence falls into blocks of
// `block` tokens. Each layer's sorting network scores, from the sum of each block's LN₁ output, where every block
// should go: R = ReLU(P W_fc + b_fc) W_proj + b_proj, one row per block and one column per place. Sinkhorn's
// normalisation turns R / τ into a nearly doubly stochastic matrix S (rows and then columns brought to sum 1,
// `iterations` times, in log space; training adds Gumbel noise to R first). Query block I then attends, in one softmax,
// to its own block's keys and to the sorted block Σ_J S_IJ K_J (the same mixture of values): 2 · block keys a query.
// Row I of S reads the first ⌈T / block⌉ of the network's outputs; a last block shorter than `block` counts its
// missing rows as zero keys and values, which the local half masks.
struct SinkhornLayout
{
    int block = 0; // atlas_sinkhorn_block: tokens a block; 0: no Sinkhorn attention
    int iterations = 7; // atlas_sinkhorn_iterations: row and column normalisations (the paper's best: 5 to 10)
    float temperature = 0.75f; // atlas_sinkhorn_temperature: τ, dividing the scores before the normalisation

    bool active() const { return block > 0; }
    int blocks(int tokens) const { return (tokens + block - 1) / block; } // ⌈T / block⌉
    // The share of query–key pairs a Sinkhorn layer scores against full attention over `tokens` tokens.
    double workShare(int tokens) const;

    static SinkhornLayout fromJson(const nlohmann::json &j, const std::string &source);
    void toJson(nlohmann::json &j) const;
    void validate(const ModelConfig &config, const std::string &source) const;
};

} // namespace atlas
