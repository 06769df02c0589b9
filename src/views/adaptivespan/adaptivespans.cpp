#include "adaptivespan/adaptivespans.h"

#include "trace/names.h"
#include "util/error.h"

#include <algorithm>

namespace atlas {

double AdaptiveSpans::meanSpan() const
{
    double sum = 0;
    int count = 0;
    for (const std::vector<HeadSpan> &layer : heads)
        for (const HeadSpan &h : layer) {
            sum += h.span;
            ++count;
        }
    return count > 0 ? sum / count : 0.0;
}

double AdaptiveSpans::reachShare() const
{
    double sum = 0;
    int count = 0;
    for (const std::vector<HeadSpan> &layer : heads)
        for (const HeadSpan &h : layer) {
            sum += std::min(h.reach, double(limit));
            ++count;
        }
    return count > 0 && limit > 0 ? sum / (double(count) * limit) : 0.0;
}

std::string adaptiveSpanProblem(const Model &model, const Trace &trace)
{
    if (!model.config.adaptiveSpan())
        return model.name + " has no adaptive span: its heads see every earlier key (the built-in copy-span has one)";
    for (int layer = 0; layer < model.config.layers; ++layer)
        if (const std::string name = names::layerTensor(layer, "attn.probs"); trace.find(name) == nullptr)
            return name + " is not traced yet";
    return {};
}

AdaptiveSpans adaptiveSpans(const Model &model, const Trace &trace)
{
    if (const std::string why = adaptiveSpanProblem(model, trace); !why.empty())
        throw Error(why);
    AdaptiveSpans out;
    out.ramp = model.config.spanRamp;
    out.limit = model.config.context;
    for (int layer = 0; layer < model.config.layers; ++layer) {
        const Tensor &probs = trace.find(names::layerTensor(layer, "attn.probs"))->tensor;
        const std::vector<float> spans = model.attentionSpans(layer);
        if (probs.rank() != 3 || probs.dim(0) != int64_t(spans.size()) || probs.dim(1) != probs.dim(2))
            throw Error(names::layerTensor(layer, "attn.probs") + " is " + probs.shapeString() + ": expected ["
                + std::to_string(spans.size()) + ", T, T]");
        const int64_t T = probs.dim(1);
        out.tokens = int(T);
        std::vector<HeadSpan> &row = out.heads.emplace_back();
        for (size_t h = 0; h < spans.size(); ++h) {
            HeadSpan s {spans[h], spans[h] + out.ramp, 0.0};
            for (int64_t i = 0; i < T; ++i)
                for (int64_t j = 0; j <= i; ++j)
                    s.meanDistance += double(probs.slice(int64_t(h))(i, j)) * double(i - j);
            s.meanDistance /= double(std::max<int64_t>(T, 1));
            row.push_back(s);
        }
    }
    return out;
}

} // namespace atlas
