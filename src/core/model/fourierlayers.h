#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace atlas {

struct ModelConfig;

// FNet (Lee-Thorp et al. 2021; docs/models.md, "FNet"): the blocks listed mix their tokens by a Fourier transform
// where the others attend. Their self-attention sub-layer becomes Y = Re(F_N X F_d), over the hidden units and then
// the positions, real part kept, with no weights (ops::fourier_mix_forward). N is the model's context, a shorter text
// padded with zero rows, so that any text is mixed as the full training windows were (Hugging Face's FNet pads its
// inputs to the context for the same reason). Every block: FNet; some: FNet-Hybrid (the paper keeps attention in the
// last two). An encoder only: no mask can keep the transform from reading later tokens.
struct FourierLayers
{
    std::vector<int> layers; // atlas_fourier_layers; empty: every block attends

    bool active() const { return !layers.empty(); }
    bool mixes(int layer) const; // whether block `layer` mixes by the Fourier transform

    static FourierLayers fromJson(const nlohmann::json &j, const std::string &source);
    void toJson(nlohmann::json &j) const;
    void validate(const ModelConfig &config, const std::string &source) const;
};

// `train --fourier`: "all" (every block of `layers`) or layer numbers, "0,1"; throws atlas::Error naming `source`.
std::vector<int> parseFourierLayers(const std::string &text, int layers, const std::string &source);

} // namespace atlas
