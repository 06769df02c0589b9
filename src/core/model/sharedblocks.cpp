#include "model/sharedblocks.h"

#include "model/modelconfig.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

namespace atlas {

SharedBlocks SharedBlocks::fromJson(const nlohmann::json &j, const std::string &source)
{
    SharedBlocks s;
    if (j.contains("atlas_shared_blocks") && !j["atlas_shared_blocks"].is_boolean())
        throw Error(source + ": key 'atlas_shared_blocks' must be true or false");
    s.enabled = j.value("atlas_shared_blocks", false);
    if (j.contains("atlas_timestep_signal") && !j["atlas_timestep_signal"].is_boolean())
        throw Error(source + ": key 'atlas_timestep_signal' must be true or false");
    s.timestepSignal = j.value("atlas_timestep_signal", false);
    return s;
}

void SharedBlocks::toJson(nlohmann::json &j) const
{
    if (enabled)
        j["atlas_shared_blocks"] = true;
    if (timestepSignal)
        j["atlas_timestep_signal"] = true;
}

void SharedBlocks::validate(const ModelConfig &c, const std::string &source) const
{
    if (timestepSignal && !enabled)
        throw Error(
            source + ": atlas_timestep_signal tells the steps of one shared block apart: it needs atlas_shared_blocks");
    if (!enabled)
        return;
    if ((c.family != Family::Gpt2 && c.family != Family::Bert) || c.isEncoderDecoder() || c.hasExperts() || c.reversible
        || c.funnel.active() || c.sinkhorn.active())
        throw Error(source
            + ": atlas_shared_blocks (one block's weights at every layer) is for GPT-2's and BERT's layouts with one "
              "stack, without experts, reversible blocks, a funnel or Sinkhorn sorting");
}

} // namespace atlas
