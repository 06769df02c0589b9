// The backward of adaptive computation time's halting (ModelConfig::act; ops/adaptivecomputation.cpp).
#include "ops/ops.h"
#include "trace/names.h"
#include "train/backwardpass.h"

#include <string>
#include <vector>

namespace atlas {

std::vector<Tensor> BackwardPass::adaptiveComputation(const Tensor &dx)
{
    BackwardStep step(m_s, -1, names::haltingTensor("out"));
    std::vector<Tensor> dstates;
    std::vector<Tensor *> dstatePointers;
    std::vector<const Tensor *> states;
    dstates.reserve(size_t(m_c.layers));
    for (int n = 1; n <= m_c.layers; ++n) {
        dstates.emplace_back(dx.shape());
        states.push_back(&act(names::residualStream(m_s, n)));
    }
    for (Tensor &d : dstates)
        dstatePointers.push_back(&d);
    const Tensor &ponder = act(names::haltingTensor("ponder"));
    const float perToken = m_c.act.ponderCost / float(T);
    for (int64_t t = 0; t < T; ++t)
        m_g.ponderTime += ponder.data()[t] / float(T);
    Tensor unusedW(m_model.haltingWeight.shape()), unusedB(m_model.haltingBias.shape());
    const std::string unit = modelParam(ModelPart::Halting);
    ops::act_backward(dstatePointers, m_inputsOnly ? unusedW : grad(unit + ".weight"),
        m_inputsOnly ? unusedB : grad(unit + ".bias"), dx, perToken, states, m_model.haltingWeight,
        act(names::haltingTensor("halting")), act(names::haltingTensor("weights")), act(names::haltingTensor("steps")));
    return dstates;
}

} // namespace atlas
