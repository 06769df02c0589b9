#include "model/sinkhorn.h"

#include "io/jsonread.h"
#include "model/configjson.h"
#include "model/modelconfig.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace atlas {

namespace {

constexpr int kMaxBlock = 4096, kMaxIterations = 100;

} // namespace

double SinkhornLayout::workShare(int tokens) const
{
    if (!active() || tokens <= 0)
        return 1.0;
    return std::min(1.0, 2.0 * block / tokens);
}

SinkhornLayout SinkhornLayout::fromJson(const nlohmann::json &j, const std::string &source)
{
    SinkhornLayout s;
    if (!j.contains("atlas_sinkhorn_block"))
        return s;
    s.block = int(jsonInteger(j, "atlas_sinkhorn_block", 1, kMaxBlock, source));
    if (j.contains("atlas_sinkhorn_iterations"))
        s.iterations = int(jsonInteger(j, "atlas_sinkhorn_iterations", 1, kMaxIterations, source));
    if (j.contains("atlas_sinkhorn_temperature"))
        s.temperature = float(jsonNumber(j, "atlas_sinkhorn_temperature", 0.01, 100.0, source));
    return s;
}

void SinkhornLayout::toJson(nlohmann::json &j) const
{
    if (!active())
        return;
    j["atlas_sinkhorn_block"] = block;
    j["atlas_sinkhorn_iterations"] = iterations;
    j["atlas_sinkhorn_temperature"] = configjson::shortestDecimal(temperature);
}

void SinkhornLayout::validate(const ModelConfig &c, const std::string &source) const
{
    if (!active())
        return;
    const auto require = [&source](bool ok, const std::string &what) {
        if (!ok)
            throw Error(source + ": " + what);
    };
    require(block >= 1 && block <= kMaxBlock && iterations >= 1 && iterations <= kMaxIterations && temperature >= 0.01f
            && temperature <= 100.0f,
        "atlas_sinkhorn_block must be in 1.." + std::to_string(kMaxBlock) + ", atlas_sinkhorn_iterations in 1.."
            + std::to_string(kMaxIterations) + " and atlas_sinkhorn_temperature in [0.01, 100]");
    require(block < c.context,
        "atlas_sinkhorn_block (" + std::to_string(block) + ") must be shorter than n_positions ("
            + std::to_string(c.context) + "): the sequence needs at least two blocks to sort");
    require(!c.causal,
        "Sinkhorn attention sorts blocks from every position's input, which a causal model must not see: "
        "atlas_causal must be false (the paper's causal Sinkhorn balancing is not implemented)");
    require(c.family == Family::Gpt2 && !c.isEncoderDecoder() && c.layerNorm == LayerNormPlacement::Pre && !c.reversible
            && !c.hasExperts() && !c.adaptiveSpan() && !c.funnel.active() && c.normaliser == Normaliser::Softmax
            && !c.biasesScores(),
        "Sinkhorn attention is implemented for GPT-2's layout with one stack of pre-LN softmax blocks (no reversible "
        "blocks, experts, adaptive span, funnel, sparse normaliser or position bias)");
}

} // namespace atlas
