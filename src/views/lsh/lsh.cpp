#include "lsh/lsh.h"

#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The LSH view (Reformer's buckets): its descriptor and its analysis request.
namespace atlas::views::lsh {

namespace {

using namespace atlas::analysis;

AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    const int layer = spec.layer, head = std::max(0, spec.head);
    if (!c.trace || !c.program)
        return problem(kNothingComputed);
    if (layer < 0 || layer >= c.layers)
        return problem("Layer " + std::to_string(layer) + " does not exist: the model has " + std::to_string(c.layers)
            + " layers.");
    const std::string context = names::layerTensor(layer, "attn.context");
    if (!c.trace || !c.trace->contains(context))
        return problem(notComputedText(c.program.get(), context));
    const attention::AttentionKernelSpec &kernel = c.program->attentionOf(layer);
    if (!attention::attentionKernel(kernel.kind).hashes)
        return problem("This layer runs " + kernel.kind + " attention: choose Attention ▸ lsh");
    const Trace &trace = *c.trace;
    std::vector<Tensor> tensors;
    for (const char *suffix : {"lsh.buckets", "lsh.rotations", "attn.q", "attn.probs", "attn.mask"}) {
        const TraceEntry *e = trace.find(names::layerTensor(layer, suffix));
        if (e == nullptr)
            return problem("Layer " + std::to_string(layer) + " ran LSH without a trace of its buckets (an untraced "
                + "run): run it traced.");
        tensors.push_back(e->tensor);
    }
    if (head < 0 || head >= tensors[0].dim(0))
        return problem("Layer " + std::to_string(layer) + " has no head " + std::to_string(head) + ".");
    AnalysisRequest r;
    r.key = "lsh/" + std::string(c.causal ? "causal/" : "") + paddingKey(c.padding);
    for (const Tensor &t : tensors)
        r.key += identity(t);
    r.pinned = tensors;
    r.run = [tensors, params = attention::lshParams(kernel), causal = c.causal, padding = c.padding, layer, head](
                const std::atomic<bool> &) {
        const auto start = Clock::now();
        const int64_t T = tensors[2].dim(1), rounds = tensors[0].dim(1), TT = T * T;
        const attention::LshTracedHead traced {.q = tensors[2].slice(head),
            .buckets = tensors[0].data() + head * rounds * T,
            .rotations = tensors[1].data() + head * (tensors[1].numel() / tensors[1].dim(0)),
            .weights = tensors[3].data() + head * TT,
            .mask = tensors[4].data() + head * TT,
            .params = params,
            .causal = causal,
            .padding = padding};
        auto result = std::make_shared<LshAnalysis>();
        result->layer = layer;
        result->head = head;
        result->data = attention::analyzeLshHead(traced);
        result->milliseconds = millisecondsSince(start);
        return std::shared_ptr<const ViewAnalysis>(result);
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "lsh",
        .title = "LSH",
        .summary = "Reformer's LSH buckets, sorted chunks and misses",
        .group = "Efficiency",
        .needs = ViewNeeds::LayerProbs,
        .request = request,
        .analysisKeys = {"layer", "head"},
        .alsoReads = {"scale"},
        .after = "kernels"};
}

} // namespace atlas::views::lsh
