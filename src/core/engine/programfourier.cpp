// FNet's op (Lee-Thorp et al. 2021; model/fourierlayers.h): the Fourier transform in a block's attention place.
#include "engine/programbuilder.h"
#include "util/error.h"

namespace atlas {

void checkFourierInput(const ModelConfig &config, const Input &input)
{
    if (!config.fourier.active())
        return;
    for (int i = 0; i < config.layers; ++i)
        if (config.fourier.mixes(i) && input.kernelFor(i))
            throw Error("block " + std::to_string(i)
                + " mixes its tokens by a Fourier transform (FNet): it has no attention for an efficient kernel");
    if (!input.retention.empty() || !input.padding.empty())
        throw Error("an FNet model's Fourier transform mixes every position into every other, with no mask to leave "
                    "out dropped or padding tokens: drop the token schedule or the padding");
}

void ProgramBuilder::fourierMixing(int i, const std::string &in)
{
    const int64_t N = m_c.context, D = m_c.dModel;
    const std::string n = std::to_string(N), d = std::to_string(D);
    const std::string padding = T < N ? ", the input padded with " + std::to_string(N - T) + " zero rows" : "";
    unary(names::layerTensor(m_s, i, "fourier.out"), "Fourier mixing (FNet)", i, in, {T, D},
        "F = Re(F_" + n + " X F_" + d + ") = C X C_" + d + " − S X S_" + d + ", C and S = cos and sin 2π·ij/" + n
            + ": a DFT over the " + d + " hidden units, then over " + n + " positions (the context" + padding
            + "), real part kept; no weights (FNet)",
        [N](Tensor &o, const Tensor &x, const Model &) { ops::fourier_mix_forward(o, x, N); });
}

} // namespace atlas
