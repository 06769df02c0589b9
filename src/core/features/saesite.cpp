#include "features/saesite.h"

#include "model/blockrecipe.h"
#include "trace/names.h"
#include "util/error.h"

#include <algorithm>
#include <array>
#include <utility>

namespace atlas {

namespace {

constexpr std::array<std::pair<SaeSiteKind, const char *>, 6> kHooks {
    {{SaeSiteKind::ResidualPre, "hook_resid_pre"}, {SaeSiteKind::ResidualMid, "hook_resid_mid"},
        {SaeSiteKind::ResidualPost, "hook_resid_post"}, {SaeSiteKind::AttentionOut, "hook_attn_out"},
        {SaeSiteKind::MlpOut, "hook_mlp_out"}, {SaeSiteKind::MlpIn, "ln2.hook_normalized"}}};

// Whether the model makes site a before site b in a run.
bool madeBefore(const SaeSite &a, const SaeSite &b)
{
    const auto when = [](const SaeSite &s) { // ResidualPost is the next block's ResidualPre
        switch (s.kind) {
        case SaeSiteKind::ResidualPre:
            return 6 * s.layer;
        case SaeSiteKind::AttentionOut:
            return 6 * s.layer + 1;
        case SaeSiteKind::ResidualMid:
            return 6 * s.layer + 2;
        case SaeSiteKind::MlpIn:
            return 6 * s.layer + 3;
        case SaeSiteKind::MlpOut:
            return 6 * s.layer + 4;
        case SaeSiteKind::ResidualPost:
            break;
        }
        return 6 * s.layer + 6;
    };
    return when(a) < when(b);
}

} // namespace

void refuseTranscoderSites(const SaeSite &reads, const SaeSite &writes)
{
    if (!madeBefore(reads, writes))
        throw Error("a transcoder reads a site the model makes before the one it writes: " + reads.hookName()
            + " does not come before " + writes.hookName());
}

std::string sitesName(const SaeSite &reads, const std::optional<SaeSite> &writes)
{
    return writes ? reads.hookName() + " \u2192 " + writes->hookName() : reads.hookName();
}

std::string SaeSite::hookName() const
{
    for (const auto &[k, name] : kHooks)
        if (k == kind)
            return "blocks." + std::to_string(layer) + "." + name;
    return {};
}

SaeSite saeSiteFromHook(const std::string &hook)
{
    const std::string usage = "hook \"" + hook
        + "\" names no site: use blocks.L.hook_resid_pre, hook_resid_mid, hook_resid_post, hook_attn_out, "
          "hook_mlp_out or ln2.hook_normalized";
    const std::string prefix = "blocks.";
    if (hook.compare(0, prefix.size(), prefix) != 0)
        throw Error(usage);
    const size_t dot = hook.find('.', prefix.size());
    const std::string digits = hook.substr(prefix.size(), dot == std::string::npos ? 0 : dot - prefix.size());
    if (digits.empty() || digits.size() > 6
        || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw Error(usage);
    const std::string point = hook.substr(dot + 1);
    for (const auto &[kind, name] : kHooks)
        if (point == name)
            return {kind, std::stoi(digits)};
    throw Error(usage);
}

std::string saeSiteTensor(const Model &model, const SaeSite &site)
{
    const ModelConfig &c = model.config;
    const std::string hook = site.hookName();
    if (c.isEncoderDecoder())
        throw Error(
            hook + ": an encoder–decoder has two stacks; SAE sites are read in a decoder-only or encoder model");
    if (c.reversible)
        throw Error(hook + ": a reversible model carries two streams, not one residual stream");
    if (site.layer < 0 || site.layer >= c.layers)
        throw Error(hook + ": the model has blocks 0 … " + std::to_string(c.layers - 1));
    const names::Stack &stack = names::kOnlyStack;
    switch (site.kind) {
    case SaeSiteKind::ResidualPre:
        return names::residualStream(site.layer);
    case SaeSiteKind::ResidualPost:
        return names::residualStream(site.layer + 1);
    default:
        break;
    }
    const BlockRecipe recipe = blockRecipe(c, stack, site.layer);
    const auto produced = [&](const std::string &local) {
        return std::any_of(
            recipe.steps.begin(), recipe.steps.end(), [&](const BlockStep &s) { return s.out == local; });
    };
    // What a sub-layer adds to the stream: its output, or the norm that reads it (OLMo 2, Gemma's sandwich).
    const auto added = [&](BlockStep::Kind kind) -> std::string {
        for (const BlockStep &s : recipe.steps)
            if (s.kind == kind) {
                for (const BlockStep &n : recipe.steps)
                    if (n.kind == BlockStep::Kind::Norm && n.in.size() == 1 && n.in[0] == s.out)
                        return blockTensor(stack, site.layer, n.out);
                return blockTensor(stack, site.layer, s.out);
            }
        throw Error(hook + ": block " + std::to_string(site.layer) + " has no such sub-layer");
    };
    if (site.kind == SaeSiteKind::MlpIn) {
        for (const BlockStep &s : recipe.steps)
            if (s.kind == BlockStep::Kind::FeedForward)
                return blockTensor(stack, site.layer, s.in[0]);
        throw Error(hook + ": block " + std::to_string(site.layer) + " has no feed-forward");
    }
    if (site.kind == SaeSiteKind::ResidualMid) {
        if (!produced("mid") || c.layerNorm == LayerNormPlacement::Post)
            throw Error(hook
                + ": this model's blocks have no residual stream between their sub-layers (parallel "
                  "or post-norm blocks)");
        return blockTensor(stack, site.layer, "mid");
    }
    return added(site.kind == SaeSiteKind::AttentionOut ? BlockStep::Kind::Attention : BlockStep::Kind::FeedForward);
}

} // namespace atlas
