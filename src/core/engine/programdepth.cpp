// Depth as a recurrence: the Universal Transformer's step signal (Dehghani et al. 2019; model/sharedblocks.h), which
// before step t of a shared block adds the sinusoid of t to every position's stream, and adaptive computation time's
// halting (Graves 2016; model/adaptivecomputation.h), which mixes the blocks' outputs by each token's halting.
#include "engine/programbuilder.h"
#include "model/model.h"

#include <string>
#include <vector>

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

std::string ProgramBuilder::adaptiveComputation()
{
    const int64_t L = m_c.layers;
    std::vector<std::string> states;
    for (int n = 1; n <= m_c.layers; ++n)
        states.push_back(names::residualStream(m_s, n));
    const std::string out = names::haltingTensor("out");
    add(out, "adaptive computation time", -1, states,
        {{names::haltingTensor("halting"), {T, L}, "h_n = σ(w · X_n + b)  (after block n)"},
            {names::haltingTensor("weights"), {T, L},
                "p_n = h_n before the halting block N, R = 1 − Σ_{n<N} h_n at N, 0 after  (N: the first block with "
                "Σ h ≥ 1 − ε = "
                    + formulaNumber(1.0 - double(m_c.act.epsilon)) + ", the last at the latest)"},
            {names::haltingTensor("steps"), {T}, "N"}, {names::haltingTensor("ponder"), {T}, "ρ = N + R"},
            {out, {T, m_c.dModel}, "X_act = Σ_n p_n X_n"}},
        [states, L, T = T, D = int64_t(m_c.dModel)](const Model &m, const Input &, const Trace &tr) {
            std::vector<const Tensor *> in;
            for (const std::string &name : states)
                in.push_back(&tr.tensor(name));
            Outputs o {Tensor({T, L}), Tensor({T, L}), Tensor({T}), Tensor({T}), Tensor({T, D})};
            ops::act_forward(o[0], o[1], o[2], o[3], o[4], in, m.haltingWeight, m.haltingBias, m.config.act.epsilon);
            return o;
        });
    return out;
}

} // namespace atlas
