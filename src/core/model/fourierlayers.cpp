#include "model/fourierlayers.h"

#include "model/modelconfig.h"
#include "util/commalist.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace atlas {

bool FourierLayers::mixes(int layer) const
{
    return std::find(layers.begin(), layers.end(), layer) != layers.end();
}

FourierLayers FourierLayers::fromJson(const nlohmann::json &j, const std::string &source)
{
    FourierLayers f;
    if (!j.contains("atlas_fourier_layers"))
        return f;
    const nlohmann::json &list = j["atlas_fourier_layers"];
    const std::string what = source + ": key 'atlas_fourier_layers' must be a list of layer numbers";
    if (!list.is_array() || list.size() > 4096)
        throw Error(what);
    for (const nlohmann::json &layer : list) {
        if (!layer.is_number_integer() || layer.get<int64_t>() < 0 || layer.get<int64_t>() > 4096)
            throw Error(what);
        f.layers.push_back(int(layer.get<int64_t>()));
    }
    return f;
}

void FourierLayers::toJson(nlohmann::json &j) const
{
    if (active())
        j["atlas_fourier_layers"] = layers;
}

void FourierLayers::validate(const ModelConfig &c, const std::string &source) const
{
    if (!active())
        return;
    const auto require = [&source](bool ok, const std::string &what) {
        if (!ok)
            throw Error(source + ": atlas_fourier_layers: " + what);
    };
    for (size_t k = 0; k < layers.size(); ++k) {
        require(layers[k] < c.layers,
            "names layer " + std::to_string(layers[k]) + ", the model has layers 0.." + std::to_string(c.layers - 1));
        require(std::count(layers.begin(), layers.end(), layers[k]) == 1,
            "names layer " + std::to_string(layers[k]) + " twice");
    }
    require(!c.causal,
        "a Fourier transform mixes every position into every other, later ones too, and no mask can take them out: "
        "FNet is an encoder (atlas_causal must be false)");
    std::string unlike; // what this model has that the Fourier block does not
    if (c.family != Family::Gpt2 && c.family != Family::Bert) // whose norms come before or after each sub-layer
        unlike = "the model's blocks are not of GPT-2's or BERT's layout";
    else if (c.isEncoderDecoder())
        unlike = "the model has two stacks";
    else if (c.reversible)
        unlike = "the model has reversible blocks";
    else if (c.funnel.active())
        unlike = "the model pools its sequence (a funnel)";
    else if (c.sinkhorn.active())
        unlike = "the model sorts its blocks (Sinkhorn attention)";
    else if (c.adaptiveSpan())
        unlike = "the model has adaptive attention spans";
    else if (c.parallelResidual)
        unlike = "the model's attention and feed-forward run in parallel";
    else if (c.hasExperts())
        unlike = "the model has experts";
    require(unlike.empty(),
        "Fourier mixing is implemented for one stack of GPT-2's or BERT's blocks, pre- or post-LN, and " + unlike);
}

std::vector<int> parseFourierLayers(const std::string &text, int layers, const std::string &source)
{
    std::vector<int> list;
    if (text == "all") {
        for (int l = 0; l < layers; ++l)
            list.push_back(l);
        return list;
    }
    list = parseIntList(text, source, "a layer number or 'all'");
    if (list.empty())
        throw Error(source + ": give 'all' or the layers that mix by a Fourier transform, e.g. 0,1");
    for (int l : list)
        if (l < 0)
            throw Error(source + ": layer " + std::to_string(l) + " is not a layer number");
    return list;
}

} // namespace atlas
