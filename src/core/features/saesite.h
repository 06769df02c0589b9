#pragma once

#include "model/model.h"

#include <optional>
#include <string>

// Where a dictionary reads a model, named as SAELens names it (TransformerLens's hook points) and found in the app's
// trace:
//   blocks.L.hook_resid_pre   the stream entering block L          names::residualStream(L)
//   blocks.L.hook_resid_mid   between its attention and its feed-forward (layer.L.mid)
//   blocks.L.hook_resid_post  the stream leaving it                names::residualStream(L + 1)
//   blocks.L.hook_attn_out    what its attention adds to the stream (layer.L.attn.out, or the norm after it)
//   blocks.L.hook_mlp_out     what its feed-forward adds (layer.L.mlp.down, or the norm after it)
//   blocks.L.ln2.hook_normalized  what its feed-forward reads: the normalised stream entering it (a transcoder's
//                             input)
namespace atlas {

enum class SaeSiteKind { ResidualPre, ResidualMid, ResidualPost, AttentionOut, MlpOut, MlpIn };

struct SaeSite
{
    SaeSiteKind kind = SaeSiteKind::ResidualPost;
    int layer = 0;
    std::string hookName() const; // "blocks.3.hook_resid_post"
    bool operator==(const SaeSite &) const = default;
};

// Throws atlas::Error naming both hooks when a transcoder reading `reads` cannot write `writes`: the model must make
// `reads` first (block by block: the stream entering it, the attention's output, the stream between, the
// feed-forward's input, its output, the stream leaving).
void refuseTranscoderSites(const SaeSite &reads, const SaeSite &writes);

// "blocks.2.hook_resid_post", or a transcoder's "blocks.1.ln2.hook_normalized → blocks.1.hook_mlp_out".
std::string sitesName(const SaeSite &reads, const std::optional<SaeSite> &writes);

// Throws atlas::Error naming the hook and the six forms a site takes.
SaeSite saeSiteFromHook(const std::string &hook);
// The trace tensor [T, D] the site names in `model`. Throws atlas::Error when the layer is past the model's, or the
// model has no such tensor (an encoder–decoder's two stacks, a parallel block's missing middle, a reversible model's
// two streams).
std::string saeSiteTensor(const Model &model, const SaeSite &site);

} // namespace atlas
