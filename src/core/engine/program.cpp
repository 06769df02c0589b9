#include "engine/programbuilder.h"

#include "engine/blockcomponents.h"
#include "engine/feedforward.h"
#include "engine/recompute.h"

#include "util/error.h"

#include <algorithm>
#include <cstdio>

namespace atlas {

namespace {

// A capacity factor as people write it: 1.25, 2, 0.5.
std::string formatFactor(float factor)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", double(factor));
    return text;
}

// " + b" when the map has a bias: formulas show only the terms computed.
std::string plusBias(bool bias, const std::string &b)
{
    return bias ? " + " + b : "";
}

// LayerDrop's blocks: each inside the model, listed once, ascending; a model of one stack without reversible blocks
// (a reversible block's two streams and an encoder–decoder's two stacks are not wired for it).
void checkDroppedLayers(const ModelConfig &config, const Input &input)
{
    if (input.droppedLayers.empty())
        return;
    if (config.reversible || config.isEncoderDecoder())
        throw Error("dropping layers (LayerDrop) needs a model of one stack without reversible blocks");
    for (size_t k = 0; k < input.droppedLayers.size(); ++k) {
        const int layer = input.droppedLayers[k];
        if (layer < 0 || layer >= config.layers)
            throw Error("dropped layer " + std::to_string(layer) + " is not one of the model's "
                + std::to_string(config.layers) + " layers (0.." + std::to_string(config.layers - 1) + ")");
        if (k > 0 && layer <= input.droppedLayers[k - 1])
            throw Error("dropped layers must be ascending and listed once; got " + std::to_string(layer) + " after "
                + std::to_string(input.droppedLayers[k - 1]));
    }
}

} // namespace

void ProgramBuilder::embeddings()
{
    const int64_t D = m_c.dModel;
    const float scale = m_c.embeddingScale;
    char scaled[64];
    std::snprintf(scaled, sizeof scaled, "E = %g · W_te[ids]", double(scale));
    const std::string embed = names::stackTensor(m_s, "embed"), input = names::stackTensor(m_s, "input"),
                      positions = names::stackTensor(m_s, "pos.encoding");
    add(embed, "embed", -1, {}, {{embed, {T, D}, scale == 1.0f ? std::string("E = W_te[ids]") : scaled}},
        [D, scale, src = m_source](const Model &m, const Input &in, const Trace &) {
            const std::vector<int> &ids = tokensOf(in, src);
            Tensor o({static_cast<int64_t>(ids.size()), D});
            ops::embedding_forward(o, m.wte, ids);
            if (scale != 1.0f)
                o.matrix() *= scale;
            return Outputs {std::move(o)};
        });
    if (m_c.family == Family::Bert && !m_c.addsPositions()) // relative_key: E + S, the positions inside attention
        return bertEmbeddingSum(embed, "");
    if (!m_c.addsPositions()) { // the positions act inside attention, or nowhere
        unary(input, "no added positions", -1, embed, {T, D},
            m_c.positions == PositionKind::None
                ? "X₀ = E  (no positions: attention cannot tell word order)"
                : "X₀ = E  (" + positionKindName(m_c.positions) + " positions act inside attention)",
            [](Tensor &o, const Tensor &e, const Model &) { o = e; });
        return;
    }
    const bool learned = m_c.positions == PositionKind::Learned;
    add(names::stackTensor(m_s, "positions"), "positions", -1, {},
        {{positions, {T, D},
            learned ? "P = W_pe[0..T)" : "P(t,2i) = sin(t/10000^(2i/D)), P(t,2i+1) = cos(t/10000^(2i/D))"}},
        [D, learned, T = T](const Model &m, const Input &, const Trace &) {
            Tensor o({T, D});
            learned ? ops::positions_learned_forward(o, m.wpe) : Model::sinusoidalPositions(o);
            return Outputs {std::move(o)};
        });
    if (m_c.family == Family::Bert)
        return bertEmbeddingSum(embed, positions);
    residual(input, -1, {embed, positions}, "X₀ = E + P");
    m_program.ops.back().label = "add positions";
    m_program.ops.back().residual = false; // the stream's start, not an add back into it
}

// BERT adds each token's segment embedding to E + P and normalises the sum (BertEmbeddings). An input with a [SEP]
// inside is a pair, "[CLS] A [SEP] B [SEP]": B's tokens, after the first [SEP], take type 1 (ModelConfig::segmentsOf).
// `positions` is empty for relative_key, which adds none.
void ProgramBuilder::bertEmbeddingSum(const std::string &embed, const std::string &positions)
{
    const int64_t D = m_c.dModel;
    const std::vector<int> types = m_c.segmentsOf(m_input.tokens);
    const bool pair = std::find(types.begin(), types.end(), 1) != types.end();
    add("segment.encoding", "segments", -1, {},
        {{"segment.encoding", {T, D},
            pair ? "S_t = W_type[0] for [CLS] A [SEP], W_type[1] for B [SEP]  (a pair: B after the first [SEP])"
                 : "S_t = W_type[0]  (one segment, A)"}},
        [D, T = T](const Model &m, const Input &in, const Trace &) {
            const std::vector<int> types = m.config.segmentsOf(in.tokens);
            Tensor o({T, D});
            for (int64_t t = 0; t < T; ++t)
                o.matrix().row(t) = m.wtt.matrix().row(types[size_t(t)]);
            return Outputs {std::move(o)};
        });
    std::vector<std::string> parts = {embed, "segment.encoding"}; // summed in order: E (+ P) + S
    if (!positions.empty())
        parts.insert(parts.begin() + 1, positions);
    add("embed.sum", positions.empty() ? "add segments" : "add positions and segments", -1, parts,
        {{"embed.sum", {T, D},
            positions.empty() ? "E + S  (relative_key: the positions act inside attention)" : "E + P + S"}},
        [parts](const Model &, const Input &, const Trace &tr) {
            Tensor o = tr.tensor(parts[0]);
            for (size_t k = 1; k < parts.size(); ++k)
                o.matrix() += tr.tensor(parts[k]).matrix();
            return Outputs {std::move(o)};
        });
    norm("input", "embedding LayerNorm", -1, "embed.sum", "_e", [](const Model &m) {
        return std::pair {&m.embedLnWeight, &m.embedLnBias};
    });
}

void ProgramBuilder::norm(const std::string &out, const std::string &label, int layer, const std::string &in,
    const std::string &sub, NormWeights weights)
{
    unary(out, m_c.norm == NormKind::RmsNorm ? label + " (RMSNorm)" : label, layer, in, {T, m_c.dModel},
        normFormula(m_c, sub), [weights](Tensor &o, const Tensor &x, const Model &m) {
            const auto [gamma, beta] = weights(m);
            normForward(o, x, *gamma, *beta, m.config);
        });
}

void ProgramBuilder::blockNorm(
    const std::string &out, const std::string &label, int layer, const std::string &in, BlockPart part)
{
    std::string sub; // of γ and β in the formula
    switch (part) {
    case BlockPart::NormAttention:
        sub = "₁";
        break;
    case BlockPart::NormFfn:
        sub = "₂";
        break;
    case BlockPart::NormCross:
        sub = "_c";
        break;
    case BlockPart::NormAttentionOut:
        sub = "_a";
        break;
    case BlockPart::NormFfnOut:
        sub = "_m";
        break;
    default:
        throw Error(
            "layer " + std::to_string(layer) + ": a block's norm is ln_1, ln_2, ln_cross or a sub-layer output's");
    }
    norm(out, label, layer, in, sub, [layer, part, src = m_source](const Model &m) {
        const BlockWeights &b = blocksOf(m, src)[size_t(layer)];
        return std::pair {&b.normWeight(part), &b.normBias(part)};
    });
}

void ProgramBuilder::finalNorm(const std::string &out, const std::string &label, const std::string &in)
{
    norm(out, label, -1, in, "_f", [src = m_source](const Model &m) {
        return src ? std::pair {&m.encoderLnfWeight, &m.encoderLnfBias} : std::pair {&m.lnfWeight, &m.lnfBias};
    });
}

void ProgramBuilder::residual(
    const std::string &out, int layer, const std::vector<std::string> &terms, const std::string &formula)
{
    add(out, "residual add", layer, terms, {{out, {T, m_c.dModel}, formula}},
        [terms](const Model &, const Input &, const Trace &tr) {
            Tensor o(tr.tensor(terms[0]).shape());
            ops::add_forward(o, tr.tensor(terms[0]), tr.tensor(terms[1]));
            for (size_t k = 2; k < terms.size(); ++k) // summed left to right: (a + b) + c
                o.matrix() += tr.tensor(terms[k]).matrix();
            return Outputs {std::move(o)};
        });
    m_program.ops.back().residual = true;
}

// A dense feed-forward sub-layer, in GPT-2's Conv1D layout, nn.Linear's, or gated (Shazeer 2020; Llama's SwiGLU:
// M = (act(X W_gateᵀ) ⊙ X W_upᵀ) W_downᵀ). mlp.act is what the down projection reads, the F values that are the
// "neurons" of the Neuron view.
void ProgramBuilder::mlp(int i, const std::string &in)
{
    if (m_c.isMoeLayer(i))
        return mixtureOfExperts(i, in);
    if (m_ffnChunks > 1)
        return chunkedMlp(i, in);
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t D = m_c.dModel, F = m_c.dFF;
    const bool linear = !m_c.storesConv1d(), bias = !linear || m_c.mlpBias, gated = m_c.gatedFfn;
    const int first = int(m_program.ops.size());
    const auto module = [i, src = m_source](BlockPart part) {
        return [i, src, part](Tensor &o, const Tensor &x, const Model &m) {
            moduleForward(o, x, blockModule(m.config, blocksOf(m, src)[size_t(i)], part));
        };
    };
    const Activation act = m_c.activation;
    const float clamp = m_c.gluClamp;
    const std::string name = activationLabel(act);
    // Phi-3's gate_up_proj holds W_gate's rows, then W_up's
    const std::string fused = m_c.fusesProjections() ? "  (gate_up_proj's rows 0…" + std::to_string(F - 1) + ")" : "",
                      fusedUp = m_c.fusesProjections()
        ? "  (gate_up_proj's rows " + std::to_string(F) + "…" + std::to_string(2 * F - 1) + ")"
        : "";
    if (gated)
        unary(p + "mlp.gate", "FFN gate", i, in, {T, F}, "G = X W_gateᵀ" + plusBias(bias, "b_gate") + fused,
            module(BlockPart::Gate));
    unary(p + "mlp.up", "FFN up", i, in, {T, F},
        linear ? "U = X W_upᵀ" + plusBias(bias, "b_up") + fusedUp : "U = X W_fc + b_fc", module(BlockPart::Up));
    if (gated)
        add(p + "mlp.act", name + " gate ⊙ up", i, {p + "mlp.gate", p + "mlp.up"},
            {{p + "mlp.act", {T, F},
                (clamp > 0 ? name + "(min(G, l)) ⊙ (clamp(U, −l, l) + 1),  l = " + formatFactor(clamp) + ",  "
                           : name + "(G) ⊙ U,  ")
                    + activationFormula(act)}},
            [p, act, clamp](const Model &, const Input &, const Trace &tr) {
                Tensor o(tr.tensor(p + "mlp.up").shape());
                ops::gated_activation_forward(o, tr.tensor(p + "mlp.gate"), tr.tensor(p + "mlp.up"), act, clamp);
                return Outputs {std::move(o)};
            });
    else
        unary(p + "mlp.act", name, i, p + "mlp.up", {T, F}, activationFormula(act),
            [act](Tensor &o, const Tensor &x, const Model &) { ops::activation_forward(o, x, act); });
    const std::string down = gated ? "(" + name + "(G) ⊙ U) W_downᵀ" : linear ? "act(U) W_downᵀ" : "act(U) W_proj";
    unary(p + "mlp.down", "FFN down", i, p + "mlp.act", {T, D},
        "M = " + down + plusBias(bias, linear ? "b_down" : "b_proj"), module(BlockPart::Down));
    m_program.ops.back().fusedFrom = first;
    m_program.ops.back().fused = [i, in, T = T, D, src = m_source](const Model &m, const Trace &tr) {
        constexpr int64_t kRows = 512; // [512, F] activations: a few tens of MB, reused from the buffer cache
        Tensor o = Tensor::uninitialized({T, D});
        feedForwardInChunks(o, tr.tensor(in), m.config, blocksOf(m, src)[size_t(i)], int((T + kRows - 1) / kRows));
        return o;
    };
}

// Reformer's chunked feed-forward: one op, the (T,F) intermediates never whole (engine/feedforward.h).
void ProgramBuilder::chunkedMlp(int i, const std::string &in)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int chunks = m_ffnChunks;
    unary(p + "mlp.down", "FFN in " + std::to_string(chunks) + " chunks", i, in, {T, m_c.dModel},
        chunkedFeedForwardFormula(m_c, chunks, T),
        [i, chunks, src = m_source](Tensor &o, const Tensor &x, const Model &m) {
            feedForwardInChunks(o, x, m.config, blocksOf(m, src)[size_t(i)], chunks);
        });
    m_program.ops.back().name = p + "mlp";
}

// Switch Transformer's feed-forward sub-layer (Fedus et al. 2021): a router sends each token to its top-k experts,
// each expert takes at most `capacity` tokens, and the router probability scales what the expert returns.
void ProgramBuilder::mixtureOfExperts(int i, const std::string &in)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t D = m_c.dModel, E = m_c.experts, K = m_c.expertTopK;
    const bool routerBias = m_c.stacksExperts(); // gpt-oss's router has a bias
    unary(p + "router.logits", "router", i, in, {T, E},
        std::string(m_c.storesConv1d() ? "L = X W_r" : "L = X W_rᵀ") + (routerBias ? " + b_r" : "") + "  ("
            + std::to_string(E) + " experts)",
        [i](Tensor &o, const Tensor &x, const Model &m) {
            const Tensor &w = m.blocks[size_t(i)].weight(BlockPart::Router);
            o.matrix().noalias() = x.matrix() * w.matrix().transpose();
            if (const Tensor &b = m.blocks[size_t(i)].bias(BlockPart::Router); !b.empty())
                o.matrix().rowwise() += ConstRowVectorMap(b.data(), b.numel());
        });
    unary(p + "router.probs", "router softmax", i, p + "router.logits", {T, E}, "pᵢ(x) = exp(Lᵢ) / Σⱼ exp(Lⱼ)",
        [](Tensor &o, const Tensor &x, const Model &) { ops::softmax_forward(o, x); });
    const bool dropless = m_c.droplessRouting;
    const int64_t capacity = dropless ? T : ops::expert_capacity(m_c.capacityFactor, T, int(E));
    const std::string top = K == 1 ? "the most probable expert" : "the " + std::to_string(K) + " most probable experts";
    const std::string rule = dropless ? "each token to " + top
            + ", none dropped (Mixtral: no capacity, each expert may take all " + std::to_string(T) + " tokens)"
                                      : "each token to " + top + ", while it has room: capacity ⌈"
            + formatFactor(m_c.capacityFactor) + " · " + std::to_string(T) + " / " + std::to_string(E)
            + "⌉ = " + std::to_string(capacity) + " tokens, filled in sequence order; −1 = dropped";
    add(p + "route", "route", i, {p + "router.logits", p + "router.probs"},
        {{p + "router.choice", {T, K}, rule},
            {p + "router.gate", {T, K},
                dropless ? "g_r = p_r(x) / Σ_k p_k(x) over the chosen experts (renormalised, as Mixtral)"
                         : "g = p_e(x) of the chosen expert e (0 when dropped)"},
            {p + "router.expert", {T}, "the top-1 expert of each token, −1 when its buffer was full"},
            {p + "router.capacity", {}, "⌈capacity factor · T / E⌉"},
            {p + "router.aux_loss", {}, "E · Σᵢ fᵢ Pᵢ  (fᵢ: tokens whose top-1 is i, Pᵢ: mean pᵢ(x); 1 when balanced)"},
            {p + "router.z_loss", {}, "(1/T) Σ_t (log Σᵢ exp L_tᵢ)²"}},
        [p, T = T, K, capacity, dropless](const Model &, const Input &, const Trace &tr) {
            const Tensor &logits = tr.tensor(p + "router.logits"), &probs = tr.tensor(p + "router.probs");
            Tensor choice({T, K}), gate({T, K}), expert({T});
            ops::router_route(choice, gate, probs, capacity);
            if (dropless)
                for (int64_t t = 0; t < T; ++t)
                    gate.matrix().row(t) /= gate.matrix().row(t).sum();
            for (int64_t t = 0; t < T; ++t)
                expert.data()[t] = choice.matrix()(t, 0);
            return Outputs {std::move(choice), std::move(gate), std::move(expert), Tensor({}, float(capacity)),
                Tensor({}, ops::router_aux_loss(probs)), Tensor({}, ops::router_z_loss(logits))};
        });
    const Activation act = m_c.activation;
    const auto run = [i, in, p](const Model &m, const Input &, const Trace &tr) {
        const Tensor &x = tr.tensor(in);
        Tensor o(x.shape());
        expertsForward(
            o, x, tr.tensor(p + "router.choice"), tr.tensor(p + "router.gate"), m.config, m.blocks[size_t(i)]);
        return Outputs {std::move(o)};
    };
    if (m_c.stacksExperts()) {
        const std::string l = formatFactor(m_c.gluClamp);
        add(p + "experts", "experts", i, {in, p + "router.choice", p + "router.gate"},
            {{p + "mlp.down", {T, D},
                "M_t = Σ g · FFN_e(x_t) over the experts e that took token t, FFN_e(x) = (QuickGELU(min(G, " + l
                    + ")) ⊙ (clamp(U, −" + l + ", " + l + ") + 1)) W_down,e + b_down,e with [G U] = x W_gate_up,e + "
                    + "b_gate_up,e, G and U its even and odd columns (gpt-oss's clamped SwiGLU, "
                    + activationFormula(act) + ")"}},
            run);
        return;
    }
    if (m_c.gatedFfn) {
        add(p + "experts", "experts", i, {in, p + "router.choice", p + "router.gate"},
            {{p + "mlp.down", {T, D},
                "M_t = Σ g · FFN_e(x_t) over the experts e that took token t, FFN_e(x) = (SiLU(x W1_eᵀ) ⊙ x W3_eᵀ) "
                "W2_eᵀ (Mixtral's SwiGLU experts)"}},
            run);
        return;
    }
    add(p + "experts", "experts", i, {in, p + "router.choice", p + "router.gate"},
        {{p + "mlp.down", {T, D},
            "M_t = Σ g · FFN_e(x_t) over the experts e that took token t, FFN_e(x) = act(x W_fc,e + b_fc,e) W_proj,e + "
            "b_proj,e; M_t = 0 for a dropped token (the residual carries it)"}},
        run);
}

// The encoder's last LayerNorm: its output Z is what every decoder block's cross-attention reads.
void ProgramBuilder::encoderOutput()
{
    finalNorm(names::encoderOutput(), "encoder ln_f", names::residualStream(m_s, m_c.encoderLayers));
}

// Block i as its recipe arranges it (model/blockrecipe.h): each step one op, or one sub-layer's ops.
void ProgramBuilder::block(int i)
{
    const BlockRecipe recipe = blockRecipe(m_c, m_s, i);
    const auto at = [&](const std::string &local) { return blockTensor(m_s, i, local); };
    for (const BlockStep &step : recipe.steps) {
        switch (step.kind) {
        case BlockStep::Kind::Norm:
            blockNorm(at(step.out), step.label, i, at(step.in[0]), step.norm);
            break;
        case BlockStep::Kind::Attention:
            attention(i, at(step.in[0]), step.in.size() > 1 ? at(step.in[1]) : std::string());
            break;
        case BlockStep::Kind::CrossAttention:
            crossAttention(i, at(step.in[0]));
            break;
        case BlockStep::Kind::FeedForward:
            mlp(i, at(step.in[0]));
            break;
        case BlockStep::Kind::FunnelPool:
            funnelPool(i, at(step.in[0]));
            break;
        case BlockStep::Kind::FunnelUpsample:
            funnelUpsample(i);
            break;
        case BlockStep::Kind::FourierMixing:
            fourierMixing(i, at(step.in[0]));
            break;
        case BlockStep::Kind::TimestepSignal:
            timestepSignal(i, at(step.in[0]));
            break;
        case BlockStep::Kind::Add: {
            std::vector<std::string> terms;
            for (const std::string &local : step.in)
                terms.push_back(at(local));
            residual(at(step.out), i, terms, step.formula);
            m_program.ops.back().label = step.label;
            break;
        }
        }
    }
}

// LayerDrop: the block is not run; the stream passes through it unchanged.
void ProgramBuilder::droppedBlock(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const std::string x = names::residualStream(m_s, i);
    add(p + "out", "block dropped (LayerDrop)", i, {x},
        {{p + "out", {T, m_c.dModel}, "X_next = X  (block " + std::to_string(i) + " dropped: LayerDrop)"}},
        [x](const Model &, const Input &, const Trace &tr) {
            Tensor o(tr.tensor(x).shape());
            o.matrix() = tr.tensor(x).matrix();
            return Outputs {std::move(o)};
        });
}

void ProgramBuilder::head()
{
    std::string last = m_c.act.enabled ? adaptiveComputation() : names::residualStream(m_s, m_c.layers);
    if (m_c.reversible) {
        const std::string y1 = names::reversibleStream(m_c.layers, 1), y2 = names::reversibleStream(m_c.layers, 2);
        last = names::streamMean();
        add(last, "mean of streams", -1, {y1, y2}, {{last, {T, m_c.dModel}, "X_L = (Y₁ + Y₂) / 2"}},
            [y1, y2](const Model &, const Input &, const Trace &tr) {
                Tensor o(tr.tensor(y1).shape());
                ops::average_forward(o, tr.tensor(y1), tr.tensor(y2));
                return Outputs {std::move(o)};
            });
    }
    if (m_c.family == Family::Bert)
        return bertHeads(last);
    finalNorm("ln_f", "ln_f", last);
    if (m_onDemand)
        return; // the logits of a position are computed when asked (engine/outputhead.h)
    const std::string norm = m_c.norm == NormKind::RmsNorm ? "RMS_f(X)" : "LN_f(X)";
    const float scale = m_c.outputScale();
    std::string formula = m_c.tiedHead ? "Z = " + norm + " W_teᵀ  (tied to the token embedding)"
                                       : "Z = " + norm + " W_lmᵀ  (lm_head, its own matrix: not tied to the embedding)";
    if (scale != 1.0f)
        formula = "Z = (d_model^−½ · " + norm + ") W_teᵀ  (T5's tied head: scaled by 1/√" + std::to_string(m_c.dModel)
            + " before the embedding reads it)";
    const float cap = m_c.logitSoftcap; // Gemma 2: the head's logits, then capped
    const std::string logits = cap > 0 ? "head.logits" : "logits";
    unary(
        logits, "logits", -1, "ln_f", {T, m_c.vocab}, formula,
        [scale](Tensor &o, const Tensor &x, const Model &m) {
            if (scale == 1.0f)
                return ops::logits_forward(o, x, m.outputWeight());
            Tensor scaled(x.shape());
            scaled.matrix() = x.matrix() * scale;
            ops::logits_forward(o, scaled, m.outputWeight());
        },
        Written::Whole);
    if (cap > 0) {
        char capped[96];
        std::snprintf(
            capped, sizeof capped, "Z = c · tanh(Z_head / c)  (c = %g, final_logit_softcapping)", double(cap));
        unary(
            "logits", "logit soft-cap", -1, logits, {T, m_c.vocab}, capped,
            [cap](Tensor &o, const Tensor &x, const Model &) { ops::softcap_forward(o, x, cap); }, Written::Whole);
    }
    // A decoder predicts the token after t from x≤t; an encoder (BERT's masked LM) names the token at t from the
    // whole input, the [MASK]s it must fill included. The same softmax, read differently.
    const bool nextToken = m_c.causal || m_c.isEncoderDecoder();
    unary(
        "next_probs", nextToken ? "next-token softmax" : "masked-LM softmax", -1, "logits", {T, m_c.vocab},
        nextToken ? "p(next = v | x≤t) = exp(Z_tv) / Σ_u exp(Z_tu)"
                  : "p(x_t = v | x₁ … x_T) = exp(Z_tv) / Σ_u exp(Z_tu)  (the token at t, read from the whole input)",
        [](Tensor &o, const Tensor &x, const Model &) { ops::softmax_forward(o, x); }, Written::Whole);
}

// BERT's masked-LM head (BertLMPredictionHead): a dense layer, GELU and LayerNorm (`ln_f`), then the word embeddings
// transposed plus an output bias; and BertForPreTraining's next-sentence head on the [CLS] position.
void ProgramBuilder::bertHeads(const std::string &last)
{
    const int64_t D = m_c.dModel;
    unary("head.dense", "MLM transform", -1, last, {T, D}, "H = X W_tᵀ + b_t",
        [](Tensor &o, const Tensor &x, const Model &m) {
            ops::linear_forward(o, x, m.headDenseWeight, m.headDenseBias);
        });
    const Activation act = m_c.activation;
    unary("head.act", activationLabel(act), -1, "head.dense", {T, D}, activationFormula(act),
        [act](Tensor &o, const Tensor &x, const Model &) { ops::activation_forward(o, x, act); });
    finalNorm("ln_f", "MLM LayerNorm", "head.act");
    if (!m_onDemand)
        bertLogits();
    if (!m_c.nspHead)
        return;
    unary("pooled", "pooler", -1, last, {1, D}, "c = tanh(X[CLS] W_pᵀ + b_p)  (position 0)",
        [D](Tensor &o, const Tensor &x, const Model &m) {
            Tensor first({1, D});
            first.matrix() = x.matrix().topRows(1);
            ops::linear_forward(o, first, m.poolerWeight, m.poolerBias);
            o.matrix() = o.matrix().array().tanh().matrix();
        });
    unary("nsp_logits", "next-sentence logits", -1, "pooled", {1, 2}, "[is next, is random] = c W_nspᵀ + b_nsp",
        [](Tensor &o, const Tensor &x, const Model &m) { ops::linear_forward(o, x, m.nspWeight, m.nspBias); });
}

// BERT's logits: the word embeddings transposed plus an output bias, and their softmax.
void ProgramBuilder::bertLogits()
{
    const int64_t V = m_c.vocab;
    unary(
        "logits", "logits", -1, "ln_f", {T, V}, "Z = LN_t(H) W_teᵀ + b_out  (tied to the word embeddings)",
        [](Tensor &o, const Tensor &x, const Model &m) {
            ops::logits_forward(o, x, m.wte);
            o.matrix().rowwise() += ConstRowVectorMap(m.outputBias.data(), m.outputBias.numel());
        },
        Written::Whole);
    unary(
        "next_probs", "masked-LM softmax", -1, "logits", {T, V},
        "p(x_t = v | x₁ … x_T) = exp(Z_tv) / Σ_u exp(Z_tu)  (the token at t, read from the whole input)",
        [](Tensor &o, const Tensor &x, const Model &) { ops::softmax_forward(o, x); }, Written::Whole);
}

Program Program::build(const ModelConfig &config, const Input &input, bool traced, int ffnChunks,
    AttentionTrace attention, BlockKeeping keeping)
{
    if (keeping != BlockKeeping::Everything && attention != AttentionTrace::OnDemand)
        throw Error("a checkpointed trace keeps attention on demand: its [H, T, T] tensors could not be recomputed "
                    "a head at a time");
    if (attention == AttentionTrace::OnDemand)
        if (const std::string why = onDemandObstacle(config, input); !why.empty())
            throw Error("this model's attention cannot be computed on demand (" + why + "): keep whole matrices");
    ProgramBuilder b(config, input, traced, std::max(ffnChunks, 1), attention == AttentionTrace::OnDemand);
    if (config.isEncoderDecoder()) {
        b.startStack(names::kEncoderStack);
        b.embeddings();
        for (int i = 0; i < config.encoderLayers; ++i)
            b.block(i);
        b.encoderOutput();
        b.startStack(names::kDecoderStack);
    }
    b.embeddings();
    checkDroppedLayers(config, input);
    bool efficient = false;
    for (int i = 0; i < config.layers; ++i)
        efficient = efficient || input.kernelFor(i);
    checkTokenRetention(config, input.retention, int(input.tokens.size()), efficient, !input.droppedLayers.empty());
    if (config.funnel.active() && (efficient || !input.retention.empty() || !input.droppedLayers.empty()))
        throw Error("a funnel model (Funnel-Transformer) runs exact attention with every block and every token: drop "
                    "the efficient kernel, the token schedule or the dropped layers");
    if (config.sinkhorn.active() && (efficient || !input.retention.empty() || !input.padding.empty()))
        throw Error("a Sinkhorn model sorts blocks of every token with exact scores: drop the efficient kernel, the "
                    "token schedule or the padding");
    checkFourierInput(config, input);
    for (int i = 0; i < config.layers; ++i) {
        if (input.drops(i))
            b.droppedBlock(i);
        else
            b.block(i);
    }
    b.head();
    Program program = b.take();
    program.keeping = keeping;
    if (keeping != BlockKeeping::Everything)
        keepCheckpoints(program, keeping, int64_t(input.tokens.size()), config.dModel);
    return program;
}

int Program::indexOf(const std::string &opName) const
{
    for (size_t i = 0; i < ops.size(); ++i)
        if (ops[i].name == opName)
            return static_cast<int>(i);
    return -1;
}

const attention::AttentionKernelSpec &Program::attentionOf(int layer) const
{
    for (const Op &op : ops)
        if (op.layer == layer)
            return op.attention;
    return kFullAttention;
}

int Program::producerOf(const std::string &tensorName) const
{
    for (size_t i = 0; i < ops.size(); ++i)
        for (const OpOutput &o : ops[i].outputs)
            if (o.name == tensorName)
                return static_cast<int>(i);
    return -1;
}

} // namespace atlas
