#include "sparseffn/sparseffn.h"

#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Sparse FFN view: its descriptor and its analysis request.
namespace atlas::views::sparseffn {

namespace {

using namespace atlas::analysis;

// The spec's dense feed-forward layer made sparse, one neuron per block of `block_size` (analysis/ffnsparsity.h).
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    const int layer = std::clamp(spec.layer, 0, c.model->config.layers - 1);
    if (const std::string why = ffnSparsityProblem(c.model->config, *c.trace, layer); !why.empty())
        return problem("The Sparse FFN view needs a dense feed-forward layer: " + why + ".");
    const TraceEntry &act = *c.trace->find(names::layerTensor(layer, "mlp.act"));
    const TraceEntry &down = *c.trace->find(names::layerTensor(layer, "mlp.down"));
    if (spec.get(views::sparseffn::kBlockSize) > act.tensor.dim(1))
        return problem("block_size " + std::to_string(spec.get(views::sparseffn::kBlockSize))
            + " is more than the layer's " + std::to_string(act.tensor.dim(1)) + " neurons.");
    AnalysisRequest r;
    r.key = "sparse-ffn/" + modelIdentity(*c.model) + "/" + identity(act.tensor) + identity(down.tensor);
    r.pinned = {c.model->wte, act.tensor, down.tensor};
    r.run = [model = c.model, trace = c.trace, layer, n = spec.get(views::sparseffn::kBlockSize)](
                const std::atomic<bool> &) {
        return timedResult<SparseFfnAnalysis>(
            [&](SparseFfnAnalysis &result) { result.sparsity = ffnSparsity(*model, *trace, layer, n); });
    };
    return r;
}

std::vector<std::string> recomputes(const ViewSpec &spec, const ModelConfig &config)
{
    return {names::layerTensor(std::clamp(spec.layer, 0, config.layers - 1), "mlp.act")};
}

} // namespace

ViewKind kind()
{
    return {.kind = "sparse-ffn",
        .title = "Sparse FFN",
        .summary
        = "a dense feed-forward layer with one neuron kept per block (Sparse is Enough): which neurons each token "
          "uses, and the error",
        .group = "Model",
        .request = request,
        .analysisKeys = {"layer", kBlockSize.name},
        .recomputes = recomputes,
        .after = "experts",
        .keys = {{.field = kBlockSize,
            .type = "int ≥ 1",
            .meaning = "sparse FFN view: one neuron kept per block of this many (N)",
            .minimum = 1,
            .rule = ">= 1",
            .ownedByView = true}}};
}

} // namespace atlas::views::sparseffn
