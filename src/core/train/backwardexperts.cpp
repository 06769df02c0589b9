#include "train/backwardpass.h"

#include "model/parameterlist.h"
#include "ops/ops.h"
#include "trace/names.h"

// The backward of the mixture-of-experts feed-forward layers: Switch's (GPT-2 layout) and Mixtral's.
namespace atlas {

// M = Σ g·FFN_e(x) with g = softmax(x W_r)_e, plus α·aux and β·z on the router: the gradient reaches the router
// through the gates and the two losses, the experts through the tokens they took.
void BackwardPass::mixtureOfExperts(int i, const Tensor &ddown, const Tensor &in, Tensor &din)
{
    const std::string p = layerName(i);
    if (m_c.gatedFfn)
        return gatedExperts(i, ddown, in, din);
    const BlockWeights &b = m_model.blocks[size_t(i)];
    BackwardStep step(m_s, i, "experts");
    const Tensor &choice = act(p + "router.choice"), &gate = act(p + "router.gate");
    const Tensor &logits = act(p + "router.logits"), &probs = act(p + "router.probs");
    std::vector<ops::FfnWeights> weights;
    std::vector<ops::FfnGradients> grads;
    for (size_t e = 0; e < b.experts.size(); ++e) {
        const std::string up = expertParameter(m_c, i, int(e), BlockPart::Up),
                          down = expertParameter(m_c, i, int(e), BlockPart::Down);
        weights.push_back({b.experts[e].weight(BlockPart::Up), b.experts[e].bias(BlockPart::Up),
            b.experts[e].weight(BlockPart::Down), b.experts[e].bias(BlockPart::Down), m_c.activation});
        grads.push_back({grad(up + ".weight"), grad(up + ".bias"), grad(down + ".weight"), grad(down + ".bias")});
    }
    Tensor dgate(gate.shape());
    ops::moe_backward(din, dgate, grads, ddown, in, choice, gate, weights);
    Tensor dprobs(probs.shape()), dlogits(logits.shape());
    ops::router_gate_backward(dprobs, dgate, choice);
    ops::router_aux_loss_backward(dprobs, probs, m_c.routerAuxLossCoef);
    ops::softmax_backward(dlogits, dprobs, probs);
    ops::router_z_loss_backward(dlogits, logits, probs, m_c.routerZLossCoef);
    m_g.routerLoss += m_c.routerAuxLossCoef * act(p + "router.aux_loss").data()[0]
        + m_c.routerZLossCoef * act(p + "router.z_loss").data()[0];
    // L = X W_rᵀ (W_r held [E, D]; no bias): dX += dL W_r, dW_r += dLᵀ X.
    din.matrix().noalias() += dlogits.matrix() * b.weight(BlockPart::Router).matrix();
    grad(param(i, BlockPart::Router) + ".weight").matrix().noalias() += dlogits.matrix().transpose() * in.matrix();
}

// Mixtral's MixtralSparseMoeBlock: gates renormalised over the top k, SwiGLU experts, a router without bias; gpt-oss's
// GptOssMLP the same with its stacked clamped experts and the router's bias (its softmax over the chosen logits is the
// renormalised gates). The loss is MixtralForCausalLM's with output_router_logits false (its default): the
// cross-entropy alone, no auxiliary loss.
void BackwardPass::gatedExperts(int i, const Tensor &ddown, const Tensor &in, Tensor &din)
{
    const std::string p = layerName(i);
    const BlockWeights &b = m_model.blocks[size_t(i)];
    BackwardStep step(m_s, i, "experts");
    const Tensor &choice = act(p + "router.choice"), &gate = act(p + "router.gate"), &probs = act(p + "router.probs");
    Tensor dgate(gate.shape()), dprobs(probs.shape()), dlogits(probs.shape());
    if (m_c.stacksExperts()) { // gpt-oss: the experts stacked, with biases, and a router with a bias
        const auto stacked = [&](BlockPart part, bool bias) -> Tensor & {
            return grad(blockParameterName(m_c, m_s, i, {part, bias, {}}));
        };
        ops::moe_stacked_backward(din, dgate,
            {stacked(BlockPart::ExpertsGateUp, false), stacked(BlockPart::ExpertsGateUp, true),
                stacked(BlockPart::ExpertsDown, false), stacked(BlockPart::ExpertsDown, true)},
            ddown, in, choice, gate,
            {b.weight(BlockPart::ExpertsGateUp), b.bias(BlockPart::ExpertsGateUp), b.weight(BlockPart::ExpertsDown),
                b.bias(BlockPart::ExpertsDown), m_c.activation, m_c.gluClamp});
    } else {
        std::vector<ops::GatedExpertWeights> weights;
        std::vector<ops::GatedExpertGradients> grads;
        for (size_t e = 0; e < b.experts.size(); ++e) {
            auto expert
                = [&](BlockPart part) -> Tensor & { return grad(expertParameter(m_c, i, int(e), part) + ".weight"); };
            weights.push_back({b.experts[e].weight(BlockPart::Gate), b.experts[e].weight(BlockPart::Up),
                b.experts[e].weight(BlockPart::Down), m_c.activation});
            grads.push_back({expert(BlockPart::Gate), expert(BlockPart::Up), expert(BlockPart::Down)});
        }
        ops::moe_gated_backward(din, dgate, grads, ddown, in, choice, gate, weights);
    }
    ops::router_renormalised_gate_backward(dgate, gate, choice, probs);
    ops::router_gate_backward(dprobs, dgate, choice);
    ops::softmax_backward(dlogits, dprobs, probs);
    // L = X W_rᵀ (+ b_r: gpt-oss's): dX += dL W_r, dW_r += dLᵀ X, db_r += Σ_t dL_t.
    din.matrix().noalias() += dlogits.matrix() * b.weight(BlockPart::Router).matrix();
    grad(param(i, BlockPart::Router) + ".weight").matrix().noalias() += dlogits.matrix().transpose() * in.matrix();
    if (!b.bias(BlockPart::Router).empty()) {
        Tensor &db = grad(param(i, BlockPart::Router) + ".bias");
        RowVectorMap(db.data(), db.numel()) += dlogits.matrix().colwise().sum();
    }
}

} // namespace atlas
