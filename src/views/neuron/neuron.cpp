#include "neuron/neuron.h"

#include "engine/input.h"
#include "model/model.h"
#include "trace/names.h"
#include "view/specrun.h"
#include "view/viewkinds.h"

#include <string>

// The Neuron view (one query and one key, component by component): its descriptor.
namespace atlas::views::neuron {

namespace {

// The pair's key must be one of the keys the site's attention reads (cross-attention's and the encoder's: the source).
SpecProblem keyProblem(const ViewSpec &spec, const Model &model, const Input &input)
{
    const names::AttentionSite site = viewSiteOf(spec, model.config, "view spec");
    const bool fromSource = site.cross || site.stack == names::kEncoderStack;
    const int keys = int(fromSource ? input.source.size() : input.tokens.size());
    const int key = spec.get(kKey);
    if (key < keys)
        return {};
    return {"key",
        "key " + std::to_string(key) + " is outside the " + std::to_string(keys) + " "
            + (site.cross ? "source tokens" : "tokens of the input") + " (-1 picks the key weighted most)"};
}

} // namespace

ViewKind kind()
{
    return {.kind = "neuron",
        .title = "Neuron",
        .summary
        = "one query and one key: q, k and q\u2218k component by component, the score as their sum over \u221Ad",
        .group = "Attention",
        .showsSites = true,
        .showsEncoderDecoder = true,
        .alsoReads = {"query"},
        .checkInput = keyProblem,
        .after = "qk-norm",
        .keys = {{.field = kKey,
            .type = "int ≥ −1",
            .meaning = "neuron view: the key of the pair; −1 = the key the query weights most",
            .minimum = -1,
            .rule = ">= 0, or -1 for the most weighted"}}};
}

} // namespace atlas::views::neuron
