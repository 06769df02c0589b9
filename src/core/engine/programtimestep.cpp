// The Universal Transformer's step signal (Dehghani et al. 2019; model/sharedblocks.h): before step t of the shared
// block, every position's stream gains the sinusoid of t.
#include "engine/programbuilder.h"
#include "model/model.h"

#include <string>

namespace atlas {

void ProgramBuilder::timestepSignal(int i, const std::string &in)
{
    const std::string t = std::to_string(i + 1), d = std::to_string(m_c.dModel);
    unary(names::layerTensor(m_s, i, "timestep"), "timestep signal", i, in, {T, m_c.dModel},
        "X + S(" + t + "),  S(t)₂ⱼ = sin(t / 10000^(2j/" + d + ")), S(t)₂ⱼ₊₁ = cos(t / 10000^(2j/" + d + ")): step " + t
            + " of the shared block, the same signal at every position (Universal Transformer)",
        [i](Tensor &o, const Tensor &x, const Model &) {
            Tensor signal({1, x.dim(1)});
            Model::sinusoidalPositions(signal, i + 1);
            o.matrix() = x.matrix().rowwise() + signal.matrix().row(0);
        });
}

} // namespace atlas
