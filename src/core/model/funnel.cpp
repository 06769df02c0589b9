#include "model/funnel.h"

#include "io/jsonread.h"
#include "model/modelconfig.h"
#include "util/commalist.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <numeric>

namespace atlas {

namespace {

constexpr int kMaxGroups = 8, kMaxGroupLayers = 64;

} // namespace

int FunnelLayout::encoderLayers() const
{
    return std::accumulate(blocks.begin(), blocks.end(), 0);
}

int FunnelLayout::group(int layer) const
{
    int end = 0;
    for (size_t g = 0; g < blocks.size(); ++g)
        if (layer < (end += blocks[g]))
            return int(g);
    return -1;
}

int FunnelLayout::stride(int layer) const
{
    const int g = group(layer);
    return g < 0 ? 1 : 1 << g;
}

int FunnelLayout::keyStride(int layer) const
{
    return poolsAt(layer) ? stride(layer) / 2 : stride(layer);
}

bool FunnelLayout::poolsAt(int layer) const
{
    int start = 0;
    for (size_t g = 0; g < blocks.size(); start += blocks[g++])
        if (g > 0 && layer == start)
            return true;
    return false;
}

bool FunnelLayout::upsamplesAt(int layer) const
{
    return active() && layer == encoderLayers();
}

int FunnelLayout::skipLayer() const
{
    return active() ? blocks.front() - 1 : -1;
}

int FunnelLayout::finalStride() const
{
    return active() ? 1 << (int(blocks.size()) - 1) : 1;
}

double FunnelLayout::workShare(int tokens) const
{
    const int layers = encoderLayers() + decoderLayers;
    if (!active() || tokens <= 0 || layers == 0)
        return 1.0;
    double positions = 0;
    for (int l = 0; l < layers; ++l)
        positions += (tokens + stride(l) - 1) / stride(l);
    return positions / (double(layers) * tokens);
}

FunnelLayout FunnelLayout::fromJson(const nlohmann::json &j, const std::string &source)
{
    FunnelLayout f;
    if (!j.contains("atlas_funnel_blocks"))
        return f;
    const nlohmann::json &list = j["atlas_funnel_blocks"];
    const std::string what = source + ": key 'atlas_funnel_blocks' must be a list of 2 to " + std::to_string(kMaxGroups)
        + " layer counts, each 1.." + std::to_string(kMaxGroupLayers);
    if (!list.is_array() || list.size() < 2 || list.size() > size_t(kMaxGroups))
        throw Error(what);
    for (const nlohmann::json &count : list) {
        if (!count.is_number_integer() || count.get<int64_t>() < 1 || count.get<int64_t>() > kMaxGroupLayers)
            throw Error(what);
        f.blocks.push_back(int(count.get<int64_t>()));
    }
    f.decoderLayers = int(jsonInteger(j, "atlas_funnel_decoder_layers", 1, kMaxGroupLayers, source));
    return f;
}

void FunnelLayout::toJson(nlohmann::json &j) const
{
    if (!active())
        return;
    j["atlas_funnel_blocks"] = blocks;
    j["atlas_funnel_decoder_layers"] = decoderLayers;
}

void FunnelLayout::validate(const ModelConfig &c, const std::string &source) const
{
    if (!active())
        return;
    const auto require = [&source](bool ok, const std::string &what) {
        if (!ok)
            throw Error(source + ": " + what);
    };
    require(blocks.size() >= 2 && decoderLayers >= 1,
        "a funnel (atlas_funnel_blocks) needs at least two groups and one decoder layer after them");
    require(encoderLayers() + decoderLayers == c.layers,
        "atlas_funnel_blocks (" + std::to_string(encoderLayers()) + " layers) and atlas_funnel_decoder_layers ("
            + std::to_string(decoderLayers) + ") must add up to n_layer (" + std::to_string(c.layers) + ")");
    require(!c.causal,
        "a funnel pools each token with the one after it, which a causal model must not see: atlas_causal must be "
        "false");
    require(c.family == Family::Gpt2 && !c.isEncoderDecoder() && c.layerNorm == LayerNormPlacement::Pre && !c.reversible
            && !c.hasExperts() && !c.adaptiveSpan() && !c.parallelResidual,
        "a funnel is implemented for GPT-2's layout with one stack of pre-LN blocks (no reversible blocks, experts or "
        "adaptive span)");
}

std::vector<int> parseFunnelBlocks(const std::string &text, const std::string &source)
{
    std::vector<int> blocks = parseIntList(text, source, "a number of layers");
    if (blocks.size() < 2 || blocks.size() > size_t(kMaxGroups))
        throw Error(source + ": give 2 to " + std::to_string(kMaxGroups) + " groups, e.g. 1,1,1");
    for (int count : blocks)
        if (count < 1 || count > kMaxGroupLayers)
            throw Error(source + ": a group has 1.." + std::to_string(kMaxGroupLayers) + " layers, not "
                + std::to_string(count));
    return blocks;
}

} // namespace atlas
