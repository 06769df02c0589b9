#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace atlas {

struct ModelConfig;

// Adaptive computation time over the blocks (Graves 2016; the halting of the Universal Transformer, Dehghani et al.
// 2019; docs/models.md, "Adaptive computation time"): after block n a halting unit gives each token
// h_n = σ(w · X_n + b); the token halts at the first block N where h_1 + … + h_N ≥ 1 − ε (the last block at the
// latest), and ln_f reads Σ_{n≤N} p_n X_n with p_n = h_n before N and the remainder R = 1 − Σ_{n<N} h_n at N.
// Training adds the ponder cost τ times the mean ponder time N + R to the loss.
struct AdaptiveComputation
{
    bool enabled = false; // atlas_act
    float ponderCost = 0.01f; // atlas_act_ponder_cost τ
    float epsilon = 0.01f; // atlas_act_epsilon ε

    static AdaptiveComputation fromJson(const nlohmann::json &j, const std::string &source);
    void toJson(nlohmann::json &j) const;
    void validate(const ModelConfig &config, const std::string &source) const;
};

} // namespace atlas
