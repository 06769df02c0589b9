#include "model/blockrecipe.h"

#include "util/error.h"

#include <algorithm>
#include <initializer_list>

namespace atlas {

namespace {

using Kind = BlockStep::Kind;

BlockStep norm(std::string out, std::string in, BlockPart part, std::string label)
{
    return {Kind::Norm, std::move(out), {std::move(in)}, part, std::move(label), {}};
}

BlockStep sublayer(Kind kind, std::string out, std::vector<std::string> in)
{
    return {kind, std::move(out), std::move(in), BlockPart::NormAttention, {}, {}};
}

BlockStep add(std::string out, std::vector<std::string> in, std::string formula, std::string label = "residual add")
{
    return {Kind::Add, std::move(out), std::move(in), BlockPart::NormAttention, std::move(label), std::move(formula)};
}

// Gomez et al. (2017), as in Reformer: Y₁ = X₁ + F(X₂), Y₂ = X₂ + G(Y₁), F the attention sub-layer and G the
// feed-forward one, each with its norm.
BlockRecipe reversible()
{
    return {{norm("ln_1", BlockStep::kStream2, BlockPart::NormAttention, "ln_1"),
                sublayer(Kind::Attention, "attn.out", {"ln_1"}),
                add("out1", {BlockStep::kStream1, "attn.out"}, "Y₁ = X₁ + F(X₂),  F(X₂) = O = Attn(LN₁(X₂))"),
                norm("ln_2", "out1", BlockPart::NormFfn, "ln_2"), sublayer(Kind::FeedForward, "mlp.down", {"ln_2"}),
                add("out2", {BlockStep::kStream2, "mlp.down"}, "Y₂ = X₂ + G(Y₁),  G(Y₁) = M = FFN(LN₂(Y₁))")},
        {"out1", "out2"}};
}

// GPT-NeoX's parallel residual (GPT-J; Pythia): both sub-layers read the block's input, and their outputs add to it
// at once.
void parallel(BlockRecipe &r, const std::string &x)
{
    r.steps.insert(r.steps.end(),
        {norm("ln_1", x, BlockPart::NormAttention, "ln_1"), sublayer(Kind::Attention, "attn.out", {"ln_1"}),
            norm("ln_2", x, BlockPart::NormFfn, "ln_2 (reads X, not X + O)"),
            sublayer(Kind::FeedForward, "mlp.down", {"ln_2"}),
            add("out", {x, "attn.out", "mlp.down"},
                "X_next = X + O + M  (O = Attn(LN₁(X)), M = FFN(LN₂(X)): parallel residual)",
                "parallel residual add")});
}

// The token-mixing sub-layer reading `in`: self-attention, or in an FNet block the Fourier transform.
BlockStep mixing(bool fourier, const std::string &in)
{
    return fourier ? sublayer(Kind::FourierMixing, "fourier.out", {in}) : sublayer(Kind::Attention, "attn.out", {in});
}

// The original Transformer's and BERT's: each sub-layer's residual sum is normalised.
void postNorm(BlockRecipe &r, const std::string &x, bool fourier)
{
    const BlockStep mix = mixing(fourier, x);
    r.steps.insert(r.steps.end(),
        {mix, add("mid", {x, mix.out}, fourier ? "X + F  (F = Re(F_N X F_d): FNet's mixing)" : "X + O"),
            norm("ln_1", "mid", BlockPart::NormAttention, "ln_1"), sublayer(Kind::FeedForward, "mlp.down", {"ln_1"}),
            add("resid", {"ln_1", "mlp.down"}, "X′ + M  (X′ = LN₁(X + O))"),
            norm("out", "resid", BlockPart::NormFfn, "ln_2")});
}

// OLMo 2's: each sub-layer reads the stream itself, and its output is normalised before it is added back.
void afterSublayer(BlockRecipe &r, const std::string &x)
{
    r.steps.insert(r.steps.end(),
        {sublayer(Kind::Attention, "attn.out", {x}),
            norm("attn.out_norm", "attn.out", BlockPart::NormAttentionOut, "attention output norm"),
            add("mid", {x, "attn.out_norm"}, "X′ = X + N_a(O)  (O = Attn(X): no norm before the sub-layer)"),
            sublayer(Kind::FeedForward, "mlp.down", {"mid"}),
            norm("mlp.out_norm", "mlp.down", BlockPart::NormFfnOut, "feed-forward output norm"),
            add("out", {"mid", "mlp.out_norm"}, "X_next = X′ + N_m(M)  (M = FFN(X′))")});
}

// Gemma 2's and 3's "sandwich": each sub-layer reads a normalised copy of the stream, as in pre-norm, and its output
// is normalised again before it is added back, as in OLMo 2.
void sandwich(BlockRecipe &r, const std::string &x)
{
    r.steps.insert(r.steps.end(),
        {norm("ln_1", x, BlockPart::NormAttention, "ln_1"), sublayer(Kind::Attention, "attn.out", {"ln_1"}),
            norm("attn.out_norm", "attn.out", BlockPart::NormAttentionOut, "attention output norm"),
            add("mid", {x, "attn.out_norm"}, "X′ = X + N_a(O)  (O = Attn(LN₁(X)))"),
            norm("ln_2", "mid", BlockPart::NormFfn, "ln_2"), sublayer(Kind::FeedForward, "mlp.down", {"ln_2"}),
            norm("mlp.out_norm", "mlp.down", BlockPart::NormFfnOut, "feed-forward output norm"),
            add("out", {"mid", "mlp.out_norm"}, "X_next = X′ + N_m(M)  (M = FFN(LN₂(X′)))")});
}

// GPT-2's and most decoders': each sub-layer reads a normalised copy of the stream and adds into it. A funnel's
// pooling layer takes its queries from the pooled stream; a decoder block of an encoder–decoder attends to the
// encoder's output between its two sub-layers.
void preNorm(BlockRecipe &r, const std::string &x, bool pools, bool decoder, bool fourier)
{
    r.steps.push_back(norm("ln_1", x, BlockPart::NormAttention, "ln_1"));
    if (pools) {
        r.steps.insert(r.steps.end(),
            {sublayer(Kind::FunnelPool, "pooled", {x}),
                norm("ln_1_pooled", "pooled", BlockPart::NormAttention, "ln_1 of the pooled stream"),
                sublayer(Kind::Attention, "attn.out", {"ln_1", "ln_1_pooled"}),
                add("mid", {"pooled", "attn.out"}, "X′ = P + O  (P: the pooled stream)")});
    } else {
        const BlockStep mix = mixing(fourier, "ln_1");
        r.steps.insert(r.steps.end(),
            {mix,
                add("mid", {x, mix.out},
                    fourier ? "X′ = X + F  (F = Re(F_N LN₁(X) F_d): FNet's mixing)" : "X′ = X + O")});
    }
    std::string beforeFfn = "mid";
    if (decoder) {
        r.steps.insert(r.steps.end(),
            {norm("ln_cross", "mid", BlockPart::NormCross, "ln_cross"),
                sublayer(Kind::CrossAttention, "cross.out", {"ln_cross"}),
                add("mid_cross", {"mid", "cross.out"}, "X″ = X′ + O_c")});
        beforeFfn = "mid_cross";
    }
    r.steps.insert(r.steps.end(),
        {norm("ln_2", beforeFfn, BlockPart::NormFfn, "ln_2"), sublayer(Kind::FeedForward, "mlp.down", {"ln_2"}),
            add("out", {beforeFfn, "mlp.down"}, decoder ? "X_next = X″ + M" : "X_next = X′ + M")});
}

} // namespace

std::vector<std::string> BlockRecipe::readByBackward() const
{
    std::vector<std::string> read;
    for (const BlockStep &s : steps) {
        if (s.kind == Kind::Add || s.kind == Kind::FunnelUpsample || s.kind == Kind::TimestepSignal)
            continue; // an add's backward passes its gradient on; the upsampling's reads nothing of the forward
        for (const std::string &name : s.in)
            if (std::find(read.begin(), read.end(), name) == read.end())
                read.push_back(name);
    }
    return read;
}

BlockRecipe blockRecipe(const ModelConfig &c, const names::Stack &stack, int layer)
{
    if (c.reversible)
        return reversible();
    BlockRecipe r;
    r.outputs = {"out"};
    std::string x = BlockStep::kInput;
    if (c.shared.timestepSignal) {
        r.steps.push_back(sublayer(Kind::TimestepSignal, "timestep", {x}));
        x = "timestep";
    }
    if (c.funnel.upsamplesAt(layer)) {
        r.steps.push_back(sublayer(Kind::FunnelUpsample, "upsampled", {x}));
        x = "upsampled";
    }
    if (c.parallelResidual)
        parallel(r, x);
    else if (c.layerNorm == LayerNormPlacement::Pre)
        preNorm(r, x, c.funnel.poolsAt(layer), stack == names::kDecoderStack, c.fourier.mixes(layer));
    else if (c.layerNorm == LayerNormPlacement::AfterSublayer)
        afterSublayer(r, x);
    else if (c.layerNorm == LayerNormPlacement::Sandwich)
        sandwich(r, x);
    else
        postNorm(r, x, c.fourier.mixes(layer));
    return r;
}

std::string blockTensor(const names::Stack &stack, int layer, const std::string &local)
{
    if (local == BlockStep::kInput)
        return names::residualStream(stack, layer);
    if (local == BlockStep::kStream1)
        return names::reversibleStream(layer, 1);
    if (local == BlockStep::kStream2)
        return names::reversibleStream(layer, 2);
    return names::layerTensor(stack, layer, local);
}

namespace {

// The first input of block `layer`'s first step of a kind in `kinds`; empty when it has none.
std::string firstStepInput(
    const ModelConfig &c, const names::Stack &stack, int layer, std::initializer_list<BlockStep::Kind> kinds)
{
    for (const BlockStep &step : blockRecipe(c, stack, layer).steps)
        if (std::find(kinds.begin(), kinds.end(), step.kind) != kinds.end())
            return blockTensor(stack, layer, step.in.at(0));
    return {};
}

} // namespace

std::string attentionInput(const ModelConfig &c, const names::Stack &stack, int layer)
{
    if (std::string in = firstStepInput(c, stack, layer, {Kind::Attention}); !in.empty())
        return in;
    throw Error("block " + std::to_string(layer) + " has no self-attention"
        + (c.fourier.mixes(layer) ? ": it mixes its tokens by a Fourier transform (FNet)" : ""));
}

std::string mixingInput(const ModelConfig &c, const names::Stack &stack, int layer)
{
    if (std::string in = firstStepInput(c, stack, layer, {Kind::Attention, Kind::FourierMixing}); !in.empty())
        return in;
    throw Error("block " + std::to_string(layer) + " mixes no tokens");
}

} // namespace atlas
