#include "model/adaptivecomputation.h"

#include "io/jsonread.h"
#include "model/configjson.h"
#include "model/modelconfig.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

namespace atlas {

AdaptiveComputation AdaptiveComputation::fromJson(const nlohmann::json &j, const std::string &source)
{
    AdaptiveComputation a;
    if (j.contains("atlas_act") && !j["atlas_act"].is_boolean())
        throw Error(source + ": key 'atlas_act' must be true or false");
    a.enabled = j.value("atlas_act", false);
    if (j.contains("atlas_act_ponder_cost"))
        a.ponderCost = float(jsonNumber(j, "atlas_act_ponder_cost", 0.0, 1e6, source));
    if (j.contains("atlas_act_epsilon"))
        a.epsilon = float(jsonNumber(j, "atlas_act_epsilon", 0.0, 1.0, source));
    return a;
}

void AdaptiveComputation::toJson(nlohmann::json &j) const
{
    if (!enabled)
        return;
    j["atlas_act"] = true;
    j["atlas_act_ponder_cost"] = shortestDecimal(ponderCost);
    j["atlas_act_epsilon"] = shortestDecimal(epsilon);
}

void AdaptiveComputation::validate(const ModelConfig &c, const std::string &source) const
{
    if (!enabled)
        return;
    if (c.family != Family::Gpt2 || c.encoderLayers > 0 || c.reversible || c.funnel.active() || c.sinkhorn.active())
        throw Error(source
            + ": atlas_act (adaptive computation time) is for a model of one stack in GPT-2's layout, without "
              "reversible blocks, a funnel or Sinkhorn sorting");
    if (ponderCost < 0 || epsilon <= 0 || epsilon >= 1)
        throw Error(
            source + ": atlas_act_ponder_cost must not be negative and atlas_act_epsilon must lie between 0 and 1");
}

} // namespace atlas
