#include "analysis/attentionmask.h"

#include "trace/names.h"

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

// The traced [H,T,T] tensor the mask comes from, and whether it is already 0/1 (true) or masked scores.
const Tensor *maskSource(const Trace &trace, int layer, const names::AttentionSite &site, bool *isMask)
{
    if (const TraceEntry *mask = trace.find(names::attentionTensor(site, layer, "mask"))) {
        *isMask = true;
        return &mask->tensor;
    }
    const TraceEntry *masked = trace.find(names::attentionTensor(site, layer, "masked"));
    *isMask = false;
    return masked ? &masked->tensor : nullptr;
}

void fill(float *out, const float *in, int64_t n, bool isMask)
{
    if (isMask)
        std::copy(in, in + n, out);
    else
        std::transform(in, in + n, out, [](float s) { return std::isfinite(s) ? 1.0f : 0.0f; });
}

} // namespace

Tensor attentionMask(const Trace &trace, int layer, int head, const names::AttentionSite &site)
{
    bool isMask = false;
    const Tensor *source = maskSource(trace, layer, site, &isMask);
    if (source == nullptr || source->rank() != 3 || head < 0 || head >= source->dim(0))
        return {};
    const int64_t T = source->dim(1), n = T * source->dim(2);
    Tensor out({T, source->dim(2)});
    fill(out.data(), source->data() + head * n, n, isMask);
    return out;
}

Tensor attentionMask(const Trace &trace, int layer, const names::AttentionSite &site)
{
    bool isMask = false;
    const Tensor *source = maskSource(trace, layer, site, &isMask);
    if (source == nullptr)
        return {};
    Tensor out(source->shape());
    fill(out.data(), source->data(), source->numel(), isMask);
    return out;
}

std::string attentionMaskFormula(const Trace &trace, int layer, const names::AttentionSite &site)
{
    if (const TraceEntry *e = trace.find(names::attentionTensor(site, layer, "mask")))
        return e->formula;
    return "Mᵢⱼ = 1 where query i may attend key j (the finite cells of "
        + names::attentionTensor(site, layer, "masked") + ")";
}

} // namespace atlas
