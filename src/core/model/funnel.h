#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace atlas {

struct ModelConfig;

// Funnel-Transformer's layout (Dai et al. 2020; docs/models.md, "Funnel"): the blocks fall into groups, and before
// every group but the first the sequence is pooled, each token with the one beside it (a stride that doubles), so
// that later groups run on 1/2, 1/4 … of the tokens. The first block of a pooled group reads the pooled stream as
// its queries and the unpooled one as its keys and values (the paper's pool-query-only). The decoder then repeats
// each compressed token over the positions it covers, adds the stream after the first group and runs its blocks at
// full length, so that a token-level head (the masked LM's) reads every position.
// The app keeps the tensors (T, ·) and marks the positions no longer present by masking them as keys, as it does
// for PoWER-BERT (engine/tokenretention.h): a present token computes exactly what it computes in the shortened
// sequence, and a pooled token keeps the position of its first member (what RoPE and the masks read).
struct FunnelLayout
{
    std::vector<int> blocks; // atlas_funnel_blocks: the layers of each group, e.g. {1, 1, 1}; empty: no funnel
    int decoderLayers = 0; // atlas_funnel_decoder_layers: full-length layers after the upsampling, at least 1

    bool active() const { return !blocks.empty(); }
    int encoderLayers() const; // the layers of every group together
    // The group layer `layer` belongs to, 0 … groups − 1; −1 for a decoder layer.
    int group(int layer) const;
    int stride(int layer) const; // 2^group of the layer's queries (1 in the decoder)
    int keyStride(int layer) const; // the stride of its keys: the group before's in a pooling layer
    bool poolsAt(int layer) const; // the first layer of every group but the first
    bool upsamplesAt(int layer) const; // the decoder's first layer
    int skipLayer() const; // the last layer of the first group: its output is added back on upsampling
    int finalStride() const; // the last group's stride: each compressed token covers this many positions
    // The share of the work per sub-layer that a funnel model's layers do against the same layers at full length:
    // Σ over layers of (query positions present) / (L · T).
    double workShare(int tokens) const;

    static FunnelLayout fromJson(const nlohmann::json &j, const std::string &source);
    void toJson(nlohmann::json &j) const;
    void validate(const ModelConfig &config, const std::string &source) const;
};

// "1,1,1" as a funnel's groups for `train --funnel`; errors name `source` and the item.
std::vector<int> parseFunnelBlocks(const std::string &text, const std::string &source);

} // namespace atlas
