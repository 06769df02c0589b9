#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace atlas {

struct ModelConfig;

// One block's weights applied at every layer (docs/models.md, "Shared blocks"): the Universal Transformer's recurrence
// in depth (Dehghani et al. 2019), ALBERT's cross-layer sharing (Lan et al. 2020). The checkpoint holds block 0's
// parameters only; the model keeps every layer's BlockWeights as copies of block 0 (they share their data until
// written), so that every path that reads block i reads the shared weights. Training sums each layer's gradient into
// block 0's and copies block 0 to the others after each step. With adaptive computation time (atlas_act) it is the
// Universal Transformer with its halting.
struct SharedBlocks
{
    bool enabled = false; // atlas_shared_blocks
    // atlas_timestep_signal: the Universal Transformer's step signal, S(t) added to the stream before step t = 1 … L:
    // S(t)_2j = sin(t / 10000^(2j/D)), S(t)_2j+1 = cos(t / 10000^(2j/D)) (the paper's coordinate embedding in time),
    // so that the shared block can tell its steps apart. The positions stay the model's own, added once.
    bool timestepSignal = false;

    // The block whose parameters layer `layer`'s are: block 0 when shared, else the layer's own.
    int heldBy(int layer) const { return enabled ? 0 : layer; }

    static SharedBlocks fromJson(const nlohmann::json &j, const std::string &source);
    void toJson(nlohmann::json &j) const;
    void validate(const ModelConfig &config, const std::string &source) const;
};

} // namespace atlas
