#pragma once

#include "trace/names.h"
#include "trace/trace.h"

// Which keys each query of a layer may attend, as the app's mask view and `dump` both show it. A layer that
// runs an efficient kernel traces its pattern (layer.{i}.attn.mask, [H,T,T]); an exact layer traces the masked
// scores (layer.{i}.attn.masked), whose −∞ cells are the masked ones. This is the one place that reads the
// second as the first.
namespace atlas {

// (T,T) for one head: 1 where query i may attend key j, else 0. An empty tensor when the trace holds neither
// tensor of the layer yet, or the head does not exist.
// `site`: which attention of the layer (an encoder–decoder's stacks, its cross-attention: (T,S)).
Tensor attentionMask(const Trace &trace, int layer, int head, const names::AttentionSite &site = {});
// [H,T,T] for every head; an empty tensor when the trace holds neither tensor of the layer yet.
Tensor attentionMask(const Trace &trace, int layer, const names::AttentionSite &site = {});
// The formula of attentionMask for the layer: the traced one, or where it comes from for an exact layer.
std::string attentionMaskFormula(const Trace &trace, int layer, const names::AttentionSite &site = {});

} // namespace atlas
