#include "engine/program.h"

#include "ops/ops.h"
#include "trace/names.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace atlas {

namespace {

using Outputs = std::vector<Tensor>;

const attention::AttentionKernelSpec kFull {"full", {}};

// Kernels with random parts (LSH rotations, BigBird's random blocks, Linformer's E, Performer's features)
// draw them from `seed`: offset it per layer and head so that heads do not share their randomness.
attention::AttentionKernelSpec seededForHead(attention::AttentionKernelSpec spec, int layer, int head, int heads)
{
    static const std::vector<std::string> seeded = {"lsh", "bigbird", "linformer", "performer"};
    if (std::find(seeded.begin(), seeded.end(), spec.kind) != seeded.end()) {
        const auto it = spec.params.find("seed");
        const long base = it == spec.params.end() ? 0 : std::stol(it->second);
        spec.params["seed"] = std::to_string(base + long(layer) * heads + head);
    }
    return spec;
}

// A capacity factor as people write it: 1.25, 2, 0.5.
std::string formatFactor(float factor)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", double(factor));
    return text;
}

std::string activationFormula(Activation act)
{
    return act == Activation::Relu    ? "ReLU(u) = max(0, u)"
        : act == Activation::GeluTanh ? "GELU(u) = ½u(1 + tanh(√(2/π)(u + 0.044715u³)))"
                                      : "GELU(u) = ½u(1 + erf(u/√2))";
}

// The encoder stack of an encoder–decoder (`source` true) reads the source and its own blocks; every other stack
// reads Input::tokens and Model::blocks.
const std::vector<BlockWeights> &blocksOf(const Model &m, bool source)
{
    return source ? m.encoderBlocks : m.blocks;
}
const std::vector<int> &tokensOf(const Input &in, bool source)
{
    return source ? in.source : in.tokens;
}
const std::vector<int> &paddingOf(const Input &in, bool source)
{
    return source ? in.sourcePadding : in.padding;
}

// Builds a Program op by op; `t(name)` is shorthand for reading an input from the trace.
class ProgramBuilder
{
public:
    ProgramBuilder(const ModelConfig &c, const Input &input, bool traced, int ffnChunks)
        : m_c(c)
        , T(static_cast<int64_t>(input.tokens.size()))
        , m_causal(c.causal)
        , m_input(input)
        , m_traced(traced)
        , m_ffnChunks(ffnChunks)
    {
    }

    void add(std::string name, std::string label, int layer, std::vector<std::string> inputs,
        std::vector<OpOutput> outputs, decltype(Op::run) run)
    {
        const attention::AttentionKernelSpec *kernel = layer >= 0 ? m_input.kernelFor(layer) : nullptr;
        m_program.ops.push_back({std::move(name), std::move(label), layer, kernel ? *kernel : kFull, std::move(inputs),
            std::move(outputs), std::move(run), m_s});
    }

    // One unary op producing a tensor of `shape` from `in`, computed by `fn(out, inputTensor, model)`.
    template <typename Fn>
    void unary(const std::string &out, const std::string &label, int layer, const std::string &in, Shape shape,
        const std::string &formula, Fn fn)
    {
        add(out, label, layer, {in}, {{out, shape, formula}},
            [in, shape, fn](const Model &m, const Input &, const Trace &tr) {
                Tensor o(shape);
                fn(o, tr.tensor(in), m);
                return Outputs {std::move(o)};
            });
    }

    // Which stack the next ops belong to: the one stack, or an encoder–decoder's encoder, then its decoder.
    void startStack(const names::Stack &stack)
    {
        m_s = stack;
        m_source = stack == names::kEncoderStack;
        m_causal = !m_source && m_c.causal;
        T = static_cast<int64_t>((m_source ? m_input.source : m_input.tokens).size());
    }
    void embeddings();
    void block(int i);
    void crossAttention(int i);
    void encoderOutput();
    void reversibleBlock(int i);
    void attention(int i, const std::string &in);
    void mergeHeads(int i);
    void exactAttention(int i);
    void rotary(int i);
    void positionBias(int i);
    void efficientAttention(int i, const attention::AttentionKernelSpec &spec);
    void mlp(int i, const std::string &in);
    void chunkedMlp(int i, const std::string &in);
    void mixtureOfExperts(int i, const std::string &in);
    void head();
    Program take() { return std::move(m_program); }

private:
    void layernorm(const std::string &out, const std::string &label, int layer, const std::string &in, int which);
    void residual(
        const std::string &out, int layer, const std::string &a, const std::string &b, const std::string &formula);

    const ModelConfig &m_c;
    int64_t T; // the current stack's length
    names::Stack m_s = names::kOnlyStack;
    bool m_source = false; // building the encoder of an encoder–decoder
    bool m_causal;
    const Input &m_input;
    const bool m_traced;
    const int m_ffnChunks;
    Program m_program;
};

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
            learned ? ops::positions_learned_forward(o, m.wpe) : ops::positions_sinusoidal_forward(o);
            return Outputs {std::move(o)};
        });
    residual(input, -1, embed, positions, "X₀ = E + P");
    m_program.ops.back().label = "add positions";
}

void ProgramBuilder::layernorm(
    const std::string &out, const std::string &label, int layer, const std::string &in, int which)
{
    const char *g = which == 1 ? "γ₁" : which == 2 ? "γ₂" : which == 3 ? "γ_c" : "γ_f";
    const char *b = which == 1 ? "β₁" : which == 2 ? "β₂" : which == 3 ? "β_c" : "β_f";
    unary(out, label, layer, in, {T, m_c.dModel},
        std::string("LN(x) = ") + g + " ⊙ (x − mean(x)) / √(var(x) + ε) + " + b,
        [layer, which, src = m_source](Tensor &o, const Tensor &x, const Model &m) {
            if (which == 0) {
                ops::layernorm_forward(o, x, src ? m.encoderLnfWeight : m.lnfWeight, src ? m.encoderLnfBias : m.lnfBias,
                    m.config.lnEpsilon);
                return;
            }
            const BlockWeights &k = blocksOf(m, src)[size_t(layer)];
            const Tensor &w = which == 1 ? k.ln1Weight : which == 2 ? k.ln2Weight : k.lnCrossWeight;
            const Tensor &bb = which == 1 ? k.ln1Bias : which == 2 ? k.ln2Bias : k.lnCrossBias;
            ops::layernorm_forward(o, x, w, bb, m.config.lnEpsilon);
        });
}

void ProgramBuilder::residual(
    const std::string &out, int layer, const std::string &a, const std::string &b, const std::string &formula)
{
    add(out, "residual add", layer, {a, b}, {{out, {T, m_c.dModel}, formula}},
        [a, b](const Model &, const Input &, const Trace &tr) {
            Tensor o(tr.tensor(a).shape());
            ops::add_forward(o, tr.tensor(a), tr.tensor(b));
            return Outputs {std::move(o)};
        });
}

void ProgramBuilder::attention(int i, const std::string &in)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t D = m_c.dModel, H = m_c.heads, d = m_c.headDim();
    unary(p + "attn.qkv", "Q/K/V projection", i, in, {T, 3 * D}, "[Q K V] = X W_attn + b_attn",
        [i, src = m_source](Tensor &o, const Tensor &x, const Model &m) {
            const BlockWeights &b = blocksOf(m, src)[size_t(i)];
            ops::linear_forward(o, x, b.attnWeight, b.attnBias);
        });
    add(p + "split", "split heads", i, {p + "attn.qkv"},
        {{p + "attn.q", {H, T, d}, "Q_h = Q[:, h·d : (h+1)·d]"}, {p + "attn.k", {H, T, d}, "K_h = K[:, h·d : (h+1)·d]"},
            {p + "attn.v", {H, T, d}, "V_h = V[:, h·d : (h+1)·d]"}},
        [p, H, T = T, d](const Model &, const Input &, const Trace &tr) {
            Tensor q({H, T, d}), k({H, T, d}), v({H, T, d});
            ops::split_heads_forward(q, k, v, tr.tensor(p + "attn.qkv"), static_cast<int>(H));
            return Outputs {std::move(q), std::move(k), std::move(v)};
        });
    if (m_c.rotatesQueriesAndKeys())
        rotary(i);
    if (const attention::AttentionKernelSpec *kernel = m_input.kernelFor(i)) {
        if (m_c.biasesScores())
            throw Error("layer " + std::to_string(i) + ": the " + kernel->kind + " kernel cannot add "
                + positionKindName(m_c.positions)
                + "'s position term to its scores: run this model with full attention");
        efficientAttention(i, *kernel);
    } else {
        exactAttention(i);
    }
    mergeHeads(i);
    unary(p + "attn.out", "output projection", i, p + "attn.merged", {T, D}, "O = C W_proj + b_proj",
        [i, src = m_source](Tensor &o, const Tensor &x, const Model &m) {
            const BlockWeights &b = blocksOf(m, src)[size_t(i)];
            ops::linear_forward(o, x, b.attnProjWeight, b.attnProjBias);
        });
}

// C = [C_1 … C_H]; an ablated head's block holds zeros or its mean instead (engine/headablation.h).
void ProgramBuilder::mergeHeads(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t D = m_c.dModel, d = m_c.headDim();
    const std::vector<int> off = m_input.ablation.headsOf(i);
    std::string formula = "C = [C_1 … C_H]", label = "merge heads";
    if (!off.empty()) {
        std::string list;
        for (int h : off)
            list += (list.empty() ? "" : ", ") + std::to_string(h);
        const bool zero = m_input.ablation.mode == HeadAblation::Mode::Zero;
        formula += (off.size() == 1 ? ", head " : ", heads ") + list + (zero ? ": C_h = 0" : ": C_h = mean C_h");
        label += zero ? " (heads off: zero)" : " (heads off: mean)";
    }
    add(p + "attn.merged", label, i, {p + "attn.context"}, {{p + "attn.merged", {T, D}, formula}},
        [p, i, off, d, T = T, D](const Model &, const Input &in, const Trace &tr) {
            Tensor o({T, D});
            ops::merge_heads_forward(o, tr.tensor(p + "attn.context"));
            MatrixMap merged = o.matrix();
            for (int h : off) {
                const HeadAblation::Head *head = in.ablation.find(i, h);
                if (in.ablation.mode == HeadAblation::Mode::Zero)
                    merged.block(0, h * d, merged.rows(), d).setZero();
                else
                    for (int64_t t = 0; t < merged.rows(); ++t)
                        for (int64_t c = 0; c < d; ++c)
                            merged(t, h * d + c) = head->mean[size_t(c)];
            }
            return Outputs {std::move(o)};
        });
}

void ProgramBuilder::exactAttention(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    const std::string q = names::queriesOf(m_s, i, m_c.rotatesQueriesAndKeys()),
                      k = names::keysOf(m_s, i, m_c.rotatesQueriesAndKeys());
    const bool biased = m_c.biasesScores();
    if (biased)
        positionBias(i);
    std::vector<std::string> inputs = {q, k};
    if (biased)
        inputs.push_back(p + "attn.bias");
    const std::string content = m_c.rotatesQueriesAndKeys() ? "S = R(Q_h) R(K_h)ᵀ / √d" : "S = Q_h K_hᵀ / √d";
    add(p + "scores", "scores", i, inputs,
        {{p + "attn.scores", {H, T, T}, content + (biased ? " + B" : "") + "  (d = " + std::to_string(d) + ")"}},
        [p, q, k, biased, H, T = T, scale](const Model &, const Input &, const Trace &tr) {
            Tensor s({H, T, T});
            ops::attention_scores_forward(s, tr.tensor(q), tr.tensor(k), scale);
            if (biased)
                ops::add_forward(s, Tensor(s), tr.tensor(p + "attn.bias"));
            return Outputs {std::move(s)};
        });
    const std::string rule = std::string(m_causal ? "key j ≤ query i" : "every key") + " and j not padding";
    add(p + "mask", "mask", i, {p + "attn.scores"},
        {{p + "attn.masked", {H, T, T}, "S′ᵢⱼ = Sᵢⱼ if " + rule + ", else −∞"}},
        [p, causal = m_causal, src = m_source](const Model &, const Input &in, const Trace &tr) {
            const Tensor &s = tr.tensor(p + "attn.scores");
            Tensor o(s.shape());
            ops::attention_mask_forward(o, s, causal, paddingOf(in, src));
            return Outputs {std::move(o)};
        });
    unary(p + "attn.probs", "softmax", i, p + "attn.masked", {H, T, T}, "Aᵢⱼ = exp(S′ᵢⱼ) / Σₖ exp(S′ᵢₖ)",
        [](Tensor &o, const Tensor &x, const Model &) { ops::softmax_forward(o, x); });
    add(p + "context", "weighted sum of V", i, {p + "attn.probs", p + "attn.v"},
        {{p + "attn.context", {H, T, d}, "C_h = A_h V_h"}},
        [p, H, T = T, d](const Model &, const Input &, const Trace &tr) {
            Tensor o({H, T, d});
            ops::attention_context_forward(o, tr.tensor(p + "attn.probs"), tr.tensor(p + "attn.v"));
            return Outputs {std::move(o)};
        });
}

void ProgramBuilder::rotary(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    const ops::RopeStyle style
        = m_c.positions == PositionKind::Rope ? ops::RopeStyle::Interleaved : ops::RopeStyle::RotateHalf;
    const std::string pairs = style == ops::RopeStyle::Interleaved ? "pairs (x₂ⱼ, x₂ⱼ₊₁)" : "pairs (xⱼ, xⱼ₊d/2)";
    const std::string base = std::to_string(int64_t(m_c.ropeBase));
    add(p + "rotate", "rotate (RoPE)", i, {p + "attn.q", p + "attn.k"},
        {{names::queriesOf(m_s, i, m_c.rotatesQueriesAndKeys()), {H, T, d},
             "R(Q_h): " + pairs + " turned by t·θⱼ, θⱼ = " + base + "^(−2j/d)"},
            {names::keysOf(m_s, i, m_c.rotatesQueriesAndKeys()), {H, T, d},
                "R(K_h): " + pairs + " turned by t·θⱼ, θⱼ = " + base + "^(−2j/d)"}},
        [p, style, H, T = T, d](const Model &m, const Input &, const Trace &tr) {
            Tensor q({H, T, d}), k({H, T, d});
            ops::rope_forward(q, tr.tensor(p + "attn.q"), 0, style, m.config.ropeBase);
            ops::rope_forward(k, tr.tensor(p + "attn.k"), 0, style, m.config.ropeBase);
            return Outputs {std::move(q), std::move(k)};
        });
}

void ProgramBuilder::positionBias(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    std::string formula;
    std::vector<std::string> inputs;
    switch (m_c.positions) {
    case PositionKind::Alibi:
        formula = "Bᵢⱼ = −m_h·|i − j|,  m_h = 2^(−8h/H) (ALiBi)";
        break;
    case PositionKind::T5:
        formula = "Bᵢⱼ = b[bucket(j − i), h]  (T5: " + std::to_string(m_c.relativeBuckets) + " buckets, "
            + (m_c.causal ? "past only" : "both directions") + ", log-spaced up to "
            + std::to_string(m_c.relativeMaxDistance) + ")";
        break;
    default: // Shaw
        formula = "Bᵢⱼ = Q_h,i · a_clip(j − i) / √d  (Shaw et al.: a learned key per distance, clipped to ±"
            + std::to_string(m_c.relativeClip) + ")";
        inputs = {p + "attn.q"};
    }
    add(p + "bias", "position bias", i, inputs, {{p + "attn.bias", {H, T, T}, formula}},
        [p, i, H, T = T, d](const Model &m, const Input &, const Trace &tr) {
            const ModelConfig &c = m.config;
            Tensor b({H, T, T});
            if (c.positions == PositionKind::Alibi)
                ops::alibi_bias_forward(b);
            else if (c.positions == PositionKind::T5)
                ops::t5_bias_forward(b, m.relativeBias, !c.causal, c.relativeMaxDistance);
            else
                ops::shaw_bias_forward(b, tr.tensor(p + "attn.q"), m.blocks[size_t(i)].relativeKey, c.relativeClip,
                    1.0f / std::sqrt(float(d)));
            return Outputs {std::move(b)};
        });
}

void ProgramBuilder::efficientAttention(int i, const attention::AttentionKernelSpec &spec)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    std::vector<OpOutput> outputs = {{p + "attn.context", {H, T, d},
        "C_h = " + attention::describeAttentionKernel(spec) + " attention of Q_h, K_h, V_h"}};
    std::vector<std::string> extras; // kernel extras kept in the trace, as "layer.i.<kind>.<name>"
    if (m_traced) {
        outputs.push_back({p + "attn.mask", {H, T, T},
            "Mᵢⱼ = 1 where the " + spec.kind + " pattern lets query i attend key j"
                + (spec.kind == "lsh" ? " (in any hash round)" : "")});
        outputs.push_back({p + "attn.probs", {H, T, T}, "Aᵢⱼ = the weight of V_j in C_i (effective attention)"});
        if (spec.kind == "lsh") {
            const attention::LshParams lsh = attention::lshParams(spec);
            outputs.push_back(
                {p + "lsh.buckets", {H, lsh.rounds, T}, "bucket of each token in each hash round: argmax([xR; −xR])"});
            outputs.push_back({p + "lsh.rotations", {H, lsh.rounds, d, std::max(lsh.buckets / 2, 0)},
                "R, a random rotation per round"});
            extras = {"buckets", "rotations"};
        }
    }
    const bool dense = m_traced;
    const std::string qName = names::queriesOf(m_s, i, m_c.rotatesQueriesAndKeys()),
                      kName = names::keysOf(m_s, i, m_c.rotatesQueriesAndKeys());
    add(p + "kernel", spec.kind + " attention", i, {qName, kName, p + "attn.v"}, outputs,
        [p, i, spec, dense, extras, qName, kName, H, T = T, d](const Model &m, const Input &in, const Trace &tr) {
            const Tensor &q = tr.tensor(qName), &k = tr.tensor(kName), &v = tr.tensor(p + "attn.v");
            Outputs out(1, Tensor({H, T, d}));
            const attention::AttentionOptions options {m.config.causal, in.padding, dense};
            for (int64_t h = 0; h < H; ++h) {
                const attention::AttentionResult r = attention::attention_kernel_forward(
                    seededForHead(spec, i, int(h), int(H)), q.slice(h), k.slice(h), v.slice(h), options);
                out[0].slice(h) = r.context.matrix();
                if (!dense)
                    continue;
                std::vector<const Tensor *> parts = {&r.mask, &r.weights};
                for (const std::string &e : extras)
                    parts.push_back(&r.extras.at(e));
                for (size_t j = 0; j < parts.size(); ++j) {
                    if (h == 0) {
                        Shape shape = parts[j]->shape();
                        shape.insert(shape.begin(), H);
                        out.emplace_back(shape);
                    }
                    std::copy(parts[j]->data(), parts[j]->data() + parts[j]->numel(),
                        out[j + 1].data() + h * parts[j]->numel());
                }
            }
            return out;
        });
}

void ProgramBuilder::mlp(int i, const std::string &in)
{
    if (m_c.isMoeLayer(i))
        return mixtureOfExperts(i, in);
    if (m_ffnChunks > 1)
        return chunkedMlp(i, in);
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t D = m_c.dModel, F = m_c.dFF;
    unary(p + "mlp.up", "FFN up", i, in, {T, F}, "U = X W_fc + b_fc",
        [i, src = m_source](Tensor &o, const Tensor &x, const Model &m) {
            const BlockWeights &b = blocksOf(m, src)[size_t(i)];
            ops::linear_forward(o, x, b.fcWeight, b.fcBias);
        });
    const Activation act = m_c.activation;
    unary(p + "mlp.act", act == Activation::Relu ? "ReLU" : "GELU", i, p + "mlp.up", {T, F}, activationFormula(act),
        [act](Tensor &o, const Tensor &x, const Model &) { ops::activation_forward(o, x, act); });
    unary(p + "mlp.down", "FFN down", i, p + "mlp.act", {T, D}, "M = act(U) W_proj + b_proj",
        [i, src = m_source](Tensor &o, const Tensor &x, const Model &m) {
            const BlockWeights &b = blocksOf(m, src)[size_t(i)];
            ops::linear_forward(o, x, b.fcProjWeight, b.fcProjBias);
        });
}

// Reformer's chunked feed-forward: one op, the (T,F) intermediate never whole.
void ProgramBuilder::chunkedMlp(int i, const std::string &in)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int chunks = m_ffnChunks;
    const Activation act = m_c.activation;
    const std::string rows = std::to_string((T + chunks - 1) / chunks);
    unary(p + "mlp.down", "FFN in " + std::to_string(chunks) + " chunks", i, in, {T, m_c.dModel},
        "M_c = act(X_c W_fc + b_fc) W_proj + b_proj for each of " + std::to_string(chunks) + " chunks X_c of " + rows
            + " rows (" + activationFormula(act) + ")",
        [i, chunks, act, src = m_source](Tensor &o, const Tensor &x, const Model &m) {
            const BlockWeights &b = blocksOf(m, src)[size_t(i)];
            ops::ffn_chunked_forward(o, x, {b.fcWeight, b.fcBias, b.fcProjWeight, b.fcProjBias, act}, chunks);
        });
    m_program.ops.back().name = p + "mlp";
}

// Switch Transformer's feed-forward sub-layer (Fedus et al. 2021): a router sends each token to its top-k experts,
// each expert takes at most `capacity` tokens, and the router probability scales what the expert returns.
void ProgramBuilder::mixtureOfExperts(int i, const std::string &in)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t D = m_c.dModel, E = m_c.experts, K = m_c.expertTopK;
    unary(p + "router.logits", "router", i, in, {T, E}, "L = X W_r  (" + std::to_string(E) + " experts)",
        [i](Tensor &o, const Tensor &x, const Model &m) {
            o.matrix().noalias() = x.matrix() * m.blocks[size_t(i)].routerWeight.matrix();
        });
    unary(p + "router.probs", "router softmax", i, p + "router.logits", {T, E}, "pᵢ(x) = exp(Lᵢ) / Σⱼ exp(Lⱼ)",
        [](Tensor &o, const Tensor &x, const Model &) { ops::softmax_forward(o, x); });
    const int64_t capacity = ops::expert_capacity(m_c.capacityFactor, T, int(E));
    const std::string top = K == 1 ? "the most probable expert" : "the " + std::to_string(K) + " most probable experts";
    add(p + "route", "route", i, {p + "router.logits", p + "router.probs"},
        {{p + "router.choice", {T, K},
             "each token to " + top + ", while it has room: capacity ⌈" + formatFactor(m_c.capacityFactor) + " · "
                 + std::to_string(T) + " / " + std::to_string(E) + "⌉ = " + std::to_string(capacity)
                 + " tokens, filled in sequence order; −1 = dropped"},
            {p + "router.gate", {T, K}, "g = p_e(x) of the chosen expert e (0 when dropped)"},
            {p + "router.expert", {T}, "the top-1 expert of each token, −1 when its buffer was full"},
            {p + "router.capacity", {}, "⌈capacity factor · T / E⌉"},
            {p + "router.aux_loss", {}, "E · Σᵢ fᵢ Pᵢ  (fᵢ: tokens whose top-1 is i, Pᵢ: mean pᵢ(x); 1 when balanced)"},
            {p + "router.z_loss", {}, "(1/T) Σ_t (log Σᵢ exp L_tᵢ)²"}},
        [p, T = T, K, capacity](const Model &, const Input &, const Trace &tr) {
            const Tensor &logits = tr.tensor(p + "router.logits"), &probs = tr.tensor(p + "router.probs");
            Tensor choice({T, K}), gate({T, K}), expert({T});
            ops::router_route(choice, gate, probs, capacity);
            for (int64_t t = 0; t < T; ++t)
                expert.data()[t] = choice.matrix()(t, 0);
            return Outputs {std::move(choice), std::move(gate), std::move(expert), Tensor({}, float(capacity)),
                Tensor({}, ops::router_aux_loss(probs)), Tensor({}, ops::router_z_loss(logits))};
        });
    const Activation act = m_c.activation;
    add(p + "experts", "experts", i, {in, p + "router.choice", p + "router.gate"},
        {{p + "mlp.down", {T, D},
            "M_t = Σ g · FFN_e(x_t) over the experts e that took token t, FFN_e(x) = act(x W_fc,e + b_fc,e) W_proj,e + "
            "b_proj,e; M_t = 0 for a dropped token (the residual carries it)"}},
        [i, in, p, act](const Model &m, const Input &, const Trace &tr) {
            const Tensor &x = tr.tensor(in);
            std::vector<ops::FfnWeights> experts;
            for (const ExpertWeights &e : m.blocks[size_t(i)].experts)
                experts.push_back({e.fcWeight, e.fcBias, e.fcProjWeight, e.fcProjBias, act});
            Tensor o(x.shape());
            ops::moe_forward(o, x, tr.tensor(p + "router.choice"), tr.tensor(p + "router.gate"), experts);
            return Outputs {std::move(o)};
        });
}

// The decoder's queries attend to the encoder's output (Vaswani et al. 2017, §3.2.3), as Hugging Face GPT-2's
// add_cross_attention: X″ = X′ + Cross(LN_c(X′), Z), Z = the encoder's ln_f output; no causal mask (every source
// token is already known), the source's padding masked; no positions inside (each stack added its own).
void ProgramBuilder::crossAttention(int i)
{
    const std::string p = names::layerPrefix(m_s, i), c = p + "cross.", z = names::encoderOutput();
    const int64_t D = m_c.dModel, H = m_c.heads, d = m_c.headDim();
    const int64_t S = static_cast<int64_t>(m_input.source.size());
    layernorm(p + "ln_cross", "ln_cross", i, p + "mid", 3);
    unary(c + "query", "cross Q projection", i, p + "ln_cross", {T, D}, "Q = LN_c(X′) W_q + b_q  (decoder side)",
        [i](Tensor &o, const Tensor &x, const Model &m) {
            ops::linear_forward(o, x, m.blocks[size_t(i)].crossQWeight, m.blocks[size_t(i)].crossQBias);
        });
    unary(c + "kv", "cross K/V projection", i, z, {S, 2 * D}, "[K V] = Z W_kv + b_kv  (Z: the encoder's output)",
        [i](Tensor &o, const Tensor &x, const Model &m) {
            ops::linear_forward(o, x, m.blocks[size_t(i)].crossKvWeight, m.blocks[size_t(i)].crossKvBias);
        });
    add(c + "split", "split heads", i, {c + "query", c + "kv"},
        {{c + "q", {H, T, d}, "Q_h = Q[:, h·d : (h+1)·d]"}, {c + "k", {H, S, d}, "K_h = K[:, h·d : (h+1)·d]"},
            {c + "v", {H, S, d}, "V_h = V[:, h·d : (h+1)·d]"}},
        [c, H, T = T, S, d](const Model &, const Input &, const Trace &tr) {
            Tensor q({H, T, d}), k({H, S, d}), v({H, S, d});
            ops::split_heads_forward({&q}, tr.tensor(c + "query"), int(H));
            ops::split_heads_forward({&k, &v}, tr.tensor(c + "kv"), int(H));
            return Outputs {std::move(q), std::move(k), std::move(v)};
        });
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    add(c + "scores", "cross scores", i, {c + "q", c + "k"},
        {{c + "scores", {H, T, S},
            "S = Q_h K_hᵀ / √d  (decoder queries × source keys, d = " + std::to_string(d) + ")"}},
        [c, H, T = T, S, scale](const Model &, const Input &, const Trace &tr) {
            Tensor s({H, T, S});
            ops::attention_scores_forward(s, tr.tensor(c + "q"), tr.tensor(c + "k"), scale);
            return Outputs {std::move(s)};
        });
    add(c + "mask", "cross mask", i, {c + "scores"},
        {{c + "masked", {H, T, S}, "S′ᵢⱼ = Sᵢⱼ if source token j is not padding, else −∞  (no causal mask)"}},
        [c](const Model &, const Input &in, const Trace &tr) {
            const Tensor &s = tr.tensor(c + "scores");
            Tensor o(s.shape());
            ops::attention_mask_forward(o, s, false, in.sourcePadding);
            return Outputs {std::move(o)};
        });
    unary(c + "probs", "cross softmax", i, c + "masked", {H, T, S}, "Aᵢⱼ = exp(S′ᵢⱼ) / Σₖ exp(S′ᵢₖ)",
        [](Tensor &o, const Tensor &x, const Model &) { ops::softmax_forward(o, x); });
    add(c + "context", "weighted sum of source V", i, {c + "probs", c + "v"},
        {{c + "context", {H, T, d}, "C_h = A_h V_h"}}, [c, H, T = T, d](const Model &, const Input &, const Trace &tr) {
            Tensor o({H, T, d});
            ops::attention_context_forward(o, tr.tensor(c + "probs"), tr.tensor(c + "v"));
            return Outputs {std::move(o)};
        });
    unary(c + "merged", "merge heads", i, c + "context", {T, D}, "C = [C_1 … C_H]",
        [](Tensor &o, const Tensor &x, const Model &) { ops::merge_heads_forward(o, x); });
    unary(c + "out", "cross output projection", i, c + "merged", {T, D}, "O_c = C W_o + b_o",
        [i](Tensor &o, const Tensor &x, const Model &m) {
            ops::linear_forward(o, x, m.blocks[size_t(i)].crossProjWeight, m.blocks[size_t(i)].crossProjBias);
        });
    residual(p + "mid_cross", i, p + "mid", c + "out", "X″ = X′ + O_c");
}

// The encoder's last LayerNorm: its output Z is what every decoder block's cross-attention reads.
void ProgramBuilder::encoderOutput()
{
    layernorm(names::encoderOutput(), "encoder ln_f", -1, names::residualStream(m_s, m_c.encoderLayers), 0);
}

void ProgramBuilder::block(int i)
{
    if (m_c.reversible)
        return reversibleBlock(i);
    const std::string p = names::layerPrefix(m_s, i);
    const std::string x = names::residualStream(m_s, i);
    if (m_c.layerNorm == LayerNormPlacement::Pre) {
        layernorm(p + "ln_1", "ln_1", i, x, 1);
        attention(i, p + "ln_1");
        residual(p + "mid", i, x, p + "attn.out", "X′ = X + O");
        std::string beforeMlp = p + "mid";
        if (m_s == names::kDecoderStack) {
            crossAttention(i);
            beforeMlp = p + "mid_cross";
        }
        layernorm(p + "ln_2", "ln_2", i, beforeMlp, 2);
        mlp(i, p + "ln_2");
        residual(p + "out", i, beforeMlp, p + "mlp.down",
            m_s == names::kDecoderStack ? "X_next = X″ + M" : "X_next = X′ + M");
    } else {
        attention(i, x);
        residual(p + "mid", i, x, p + "attn.out", "X + O");
        layernorm(p + "ln_1", "ln_1", i, p + "mid", 1);
        mlp(i, p + "ln_1");
        residual(p + "resid", i, p + "ln_1", p + "mlp.down", "X′ + M  (X′ = LN₁(X + O))");
        layernorm(p + "out", "ln_2", i, p + "resid", 2);
    }
}

// Gomez et al. (2017), as in Reformer: Y₁ = X₁ + F(X₂), Y₂ = X₂ + G(Y₁), F the attention sub-layer and G the
// feed-forward one, each with its LayerNorm. Both streams of block 0 are the embedding X₀.
void ProgramBuilder::reversibleBlock(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const std::string x1 = names::reversibleStream(i, 1), x2 = names::reversibleStream(i, 2);
    layernorm(p + "ln_1", "ln_1", i, x2, 1);
    attention(i, p + "ln_1");
    residual(p + "out1", i, x1, p + "attn.out", "Y₁ = X₁ + F(X₂),  F(X₂) = O = Attn(LN₁(X₂))");
    layernorm(p + "ln_2", "ln_2", i, p + "out1", 2);
    mlp(i, p + "ln_2");
    residual(p + "out2", i, x2, p + "mlp.down", "Y₂ = X₂ + G(Y₁),  G(Y₁) = M = FFN(LN₂(Y₁))");
}

void ProgramBuilder::head()
{
    std::string last = names::residualStream(m_s, m_c.layers);
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
    layernorm("ln_f", "ln_f", -1, last, 0);
    unary("logits", "logits", -1, "ln_f", {T, m_c.vocab}, "Z = LN_f(X) W_teᵀ  (tied to the token embedding)",
        [](Tensor &o, const Tensor &x, const Model &m) { ops::logits_forward(o, x, m.wte); });
    unary("next_probs", "next-token softmax", -1, "logits", {T, m_c.vocab},
        "p(next = v | x≤t) = exp(Z_tv) / Σ_u exp(Z_tu)",
        [](Tensor &o, const Tensor &x, const Model &) { ops::softmax_forward(o, x); });
}

} // namespace

Program Program::build(const ModelConfig &config, const Input &input, bool traced, int ffnChunks)
{
    ProgramBuilder b(config, input, traced, std::max(ffnChunks, 1));
    if (config.isEncoderDecoder()) {
        b.startStack(names::kEncoderStack);
        b.embeddings();
        for (int i = 0; i < config.encoderLayers; ++i)
            b.block(i);
        b.encoderOutput();
        b.startStack(names::kDecoderStack);
    }
    b.embeddings();
    for (int i = 0; i < config.layers; ++i)
        b.block(i);
    b.head();
    return b.take();
}

size_t Program::tracedBytes() const
{
    size_t total = 0;
    for (const Op &op : ops)
        for (const OpOutput &o : op.outputs)
            total += static_cast<size_t>(Tensor::count(o.shape)) * sizeof(float);
    return total;
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
    return kFull;
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
