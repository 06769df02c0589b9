#include "engine/headablation.h"

#include "model/modelconfig.h"
#include "util/commalist.h"
#include "util/error.h"

#include <algorithm>
#include <charconv>

namespace atlas {

namespace {

std::string headName(int layer, int head)
{
    return std::to_string(layer) + "." + std::to_string(head);
}

bool parseIndex(const std::string &text, int &value)
{
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && ec == std::errc() && ptr == text.data() + text.size() && value >= 0;
}

} // namespace

const HeadAblation::Head *HeadAblation::find(int layer, int head) const
{
    for (const Head &h : heads)
        if (h.layer == layer && h.head == head)
            return &h;
    return nullptr;
}

std::vector<int> HeadAblation::headsOf(int layer) const
{
    std::vector<int> out;
    for (const Head &h : heads)
        if (h.layer == layer)
            out.push_back(h.head);
    std::sort(out.begin(), out.end());
    return out;
}

void HeadAblation::validate(const ModelConfig &config) const
{
    for (size_t i = 0; i < heads.size(); ++i) {
        const Head &h = heads[i];
        const std::string name = "ablated head " + headName(h.layer, h.head);
        if (h.layer < 0 || h.layer >= config.layers || h.head < 0 || h.head >= config.heads)
            throw Error(name + " is not in the model (" + std::to_string(config.layers) + " layers of "
                + std::to_string(config.heads) + " heads)");
        for (size_t j = 0; j < i; ++j)
            if (heads[j].layer == h.layer && heads[j].head == h.head)
                throw Error(name + " is listed twice");
        if (mode == Mode::Mean && int64_t(h.mean.size()) != config.headDim())
            throw Error(name + ": its mean has " + std::to_string(h.mean.size()) + " values, the head dimension is "
                + std::to_string(config.headDim()));
    }
}

std::vector<HeadRef> parseHeadList(const std::string &text, int layers, int heads, const std::string &source)
{
    std::vector<HeadRef> out;
    for (const std::string &item : splitCommaList(text)) {
        const size_t dot = item.find('.');
        HeadRef h;
        const bool everyHead = dot != std::string::npos && item.substr(dot + 1) == "*";
        if (dot == std::string::npos || !parseIndex(item.substr(0, dot), h.layer)
            || (!everyHead && !parseIndex(item.substr(dot + 1), h.head)))
            throw Error(source + ": '" + item
                + "' is not layer.head (for example 0.1 for head 1 of layer 0, 0.* for every head of layer 0)");
        if (h.layer >= layers || h.head >= heads)
            throw Error(source + ": head " + item + " is not in the model (" + std::to_string(layers) + " layers of "
                + std::to_string(heads) + " heads, numbered from 0)");
        for (int head = everyHead ? 0 : h.head; head < (everyHead ? heads : h.head + 1); ++head) {
            const HeadRef one {h.layer, head};
            if (std::find(out.begin(), out.end(), one) != out.end())
                throw Error(source + ": head " + headName(one.layer, one.head) + " is listed twice");
            out.push_back(one);
        }
    }
    return out;
}

std::string headListText(const std::vector<HeadRef> &heads)
{
    std::string text;
    for (const HeadRef &h : heads) {
        if (!text.empty())
            text += ',';
        text += headName(h.layer, h.head);
    }
    return text;
}

const char *ablationModeName(HeadAblation::Mode mode)
{
    return mode == HeadAblation::Mode::Zero ? "zero" : "mean";
}

HeadAblation::Mode parseAblationMode(const std::string &text, const std::string &source)
{
    if (text == "zero")
        return HeadAblation::Mode::Zero;
    if (text == "mean")
        return HeadAblation::Mode::Mean;
    throw Error(source + ": '" + text + "' is not an ablation (zero or mean)");
}

} // namespace atlas
