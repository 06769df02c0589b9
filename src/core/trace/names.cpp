#include "trace/names.h"

#include <charconv>

namespace atlas::names {

std::string stackTensor(const Stack &s, std::string_view name)
{
    return std::string(s.trace).append(name);
}

std::string attentionTensor(const AttentionSite &site, int layer, std::string_view what)
{
    return layerTensor(site.stack, layer, std::string(site.cross ? "cross." : "attn.").append(what));
}

std::vector<std::pair<AttentionSite, int>> attentionSites(int layers, int encoderLayers)
{
    if (encoderLayers == 0)
        return {{AttentionSite {}, layers}};
    return {{{kEncoderStack, false}, encoderLayers}, {{kDecoderStack, false}, layers}, {{kDecoderStack, true}, layers}};
}

std::string encoderOutput()
{
    return stackTensor(kEncoderStack, "ln_f");
}

std::string layerPrefix(int layer)
{
    return "layer." + std::to_string(layer) + ".";
}

std::string layerPrefix(const Stack &s, int layer)
{
    return stackTensor(s, layerPrefix(layer));
}

std::string layerTensor(const Stack &s, int layer, std::string_view suffix)
{
    return layerPrefix(s, layer).append(suffix);
}

bool splitStackTensor(std::string_view name, Stack *stack, int *layer, std::string *suffix)
{
    for (const Stack &s : {kEncoderStack, kDecoderStack, kOnlyStack})
        if (name.starts_with(s.trace) && splitLayerTensor(name.substr(s.trace.size()), layer, suffix)) {
            *stack = s;
            return true;
        }
    return false;
}

std::string layerTensor(int layer, std::string_view suffix)
{
    return layerPrefix(layer).append(suffix);
}

bool splitLayerTensor(std::string_view name, int *layer, std::string *suffix)
{
    constexpr std::string_view prefix = "layer.";
    if (!name.starts_with(prefix))
        return false;
    const size_t dot = name.find('.', prefix.size());
    if (dot == std::string_view::npos)
        return false;
    int value = 0;
    const char *first = name.data() + prefix.size(), *last = name.data() + dot;
    const auto [end, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || end != last || first == last)
        return false;
    *layer = value;
    *suffix = std::string(name.substr(dot + 1));
    return true;
}

std::string residualStream(int layer)
{
    return layer == 0 ? std::string("input") : layerTensor(layer - 1, "out");
}

std::string residualStream(const Stack &s, int layer)
{
    return stackTensor(s, residualStream(layer));
}

std::string reversibleStream(int layer, int stream)
{
    return layer == 0 ? std::string("input") : layerTensor(layer - 1, stream == 1 ? "out1" : "out2");
}

std::string streamMean()
{
    return "stream_mean";
}

std::string haltingTensor(std::string_view part)
{
    return "act." + std::string(part);
}

std::string parameterPrefix(int layer)
{
    return "h." + std::to_string(layer) + ".";
}

std::string parameterPrefix(const Stack &s, int layer)
{
    return std::string(s.parameters).append(parameterPrefix(layer));
}

std::string expertPrefix(int layer, int expert)
{
    return parameterPrefix(layer) + "mlp.experts." + std::to_string(expert) + ".";
}

std::string gradientOf(std::string_view parameter)
{
    return std::string("grad.").append(parameter);
}

std::string queriesOf(int layer, bool rotated)
{
    return layerTensor(layer, rotated ? "attn.q_rot" : "attn.q");
}

std::string keysOf(int layer, bool rotated)
{
    return layerTensor(layer, rotated ? "attn.k_rot" : "attn.k");
}

std::string queriesOf(const Stack &s, int layer, bool rotated)
{
    return stackTensor(s, queriesOf(layer, rotated));
}

std::string keysOf(const Stack &s, int layer, bool rotated)
{
    return stackTensor(s, keysOf(layer, rotated));
}

std::string queriesOf(const Stack &s, int layer, bool rotated, bool normed)
{
    return rotated || !normed ? queriesOf(s, layer, rotated) : layerTensor(s, layer, "attn.q_norm");
}

std::string keysOf(const Stack &s, int layer, bool rotated, bool normed)
{
    return rotated || !normed ? keysOf(s, layer, rotated) : layerTensor(s, layer, "attn.k_norm");
}

} // namespace atlas::names
