#include "quantization/quantization.h"

#include "model/builtinmodels.h"
#include "util/error.h"
#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/specrun.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Quantization view: its descriptor and its analysis request.
namespace atlas::views::quantization {

namespace {

using namespace atlas::analysis;

// One layer's matrices quantized (or, for a GGUF file, as the file holds them), against float weights.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    // an encoder–decoder's encoder blocks, or its decoder's (with their cross-attention) at the other sites
    names::AttentionSite site;
    try {
        site = attentionSiteOf(spec, c.model->config, "the spec");
    } catch (const Error &e) {
        return problem(e.what());
    }
    const names::Stack stack = site.stack;
    const int layer = std::clamp(spec.layer, 0, siteLayers(site, c.model->config) - 1);
    if (const std::string why = quantizationProblem(*c.model, layer, stack); !why.empty())
        return problem("The Quantization view shows a layer's matrices: " + sentenceCased(why) + ".");
    GgmlType type = GgmlType::Q4_0;
    ggmlTypeNamed(spec.get(kType), &type);
    // The float weights compared with: the model itself when it is quantized here; for a GGUF file the model named,
    // or else the one it was saved from.
    std::string reference = c.model->gguf ? spec.get(kReference) : std::string();
    if (c.model->gguf && reference.empty())
        reference = savedFromModel(*c.model);
    AnalysisRequest r;
    r.key = "quantization/" + modelIdentity(*c.model) + "/" + std::string(stack.trace) + std::to_string(layer) + "/"
        + inputKey(c);
    r.pinned = {c.model->wte};
    r.run = [model = c.model, trace = c.trace, layer, type, role = spec.get(kMatrix), block = spec.get(kBlock),
                reference, stack](const std::atomic<bool> &cancelled) {
        return timedResult<QuantizationAnalysis>([&](QuantizationAnalysis &result) {
            std::shared_ptr<const Model> floats;
            if (!reference.empty())
                floats = loadModel(reference);
            result.effect = quantizationEffect(
                *model, *trace, layer, type, role, block, model->gguf ? floats.get() : model.get(), cancelled, stack);
        });
    };
    return r;
}

std::string checkType(const ViewSpec &spec)
{
    GgmlType type;
    const GgmlTypeInfo *info = ggmlTypeNamed(spec.get(kType), &type);
    return info && info->written() && type != GgmlType::F32
        ? std::string()
        : "quant_type '" + spec.get(kType) + "' is not a type written here (f16, q8_0, q4_0 or q4_k)";
}

std::vector<std::string> recomputes(const ViewSpec &spec, const ModelConfig &config)
{
    return quantizationReads(std::clamp(spec.layer, 0, config.layers - 1));
}

} // namespace

ViewKind kind()
{
    return {.kind = "quantization",
        .title = "Bits",
        .summary = "quantization: a layer's matrices in fewer bits, as llama.cpp stores them; each matrix's type and "
                   "error, one block's levels and weights, the weights' histogram",
        .group = "Model",
        .showsSites = true,
        .showsEncoderDecoder = true,
        .request = request,
        .analysisKeys = {"site", "layer", kType.name, kMatrix.name, kBlock.name, kReference.name},
        .recomputes = recomputes,
        .after = "sparse-ffn",
        .keys = {{.field = kType,
                     .type = "string",
                     .meaning = "quantization view: what a model that is not a GGUF file is quantized to, as "
                                "`save --type` writes it (a GGUF file shows its own types)",
                     .choices = {"f16", "q8_0", "q4_0", "q4_k"},
                     .check = checkType,
                     .ownedByView = true},
            {.field = kMatrix,
                .type = "string",
                .meaning = "quantization view: the matrix whose block and histogram are shown",
                .choices = quantizationRoles(),
                .ownedByView = true},
            {.field = kBlock,
                .type = "int ≥ 0",
                .meaning = "quantization view: the block shown (row by row, blocks of 32 or 256 weights along a row)",
                .minimum = 0,
                .ownedByView = true,
                .perModel = true},
            {.field = kReference,
                .type = "string",
                .meaning = "quantization view: for a GGUF file, the float model it is compared with (a built-in "
                           "name or a directory of the same shapes); \"\" = the model it was saved from, if `save` "
                           "wrote it from a built-in one",
                .ownedByView = true,
                .perModel = true}}};
}

} // namespace atlas::views::quantization
