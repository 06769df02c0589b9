#include "analysis/logitattribution.h"

#include "engine/blockcomponents.h"
#include "engine/feedforward.h"
#include "engine/outputhead.h"
#include "trace/names.h"
#include "util/error.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <optional>

namespace atlas {

namespace {

using Vector = Eigen::VectorXd;

Vector vectorOf(const float *data, int64_t n)
{
    return Eigen::Map<const Eigen::VectorXf>(data, n).cast<double>();
}

Vector rowOf(const Tensor &x, int64_t row)
{
    return vectorOf(x.data() + row * x.dim(1), x.dim(1));
}

// A norm with its scale frozen at one row x: N(v) = γ ⊙ (v − mean(v)) / σ(x) for LayerNorm, γ ⊙ v / rms(x) for
// RMSNorm (γ as the model multiplies by it: 1 + γ for Gemma). Linear in v; β is apart.
struct FrozenNorm
{
    Vector scale; // γ / σ
    bool centres = false;
    Vector shift; // β, or zeros
    double inverse = 0; // 1/σ or 1/rms

    FrozenNorm(const Vector &x, const Tensor &weight, const Tensor &bias, const ModelConfig &c)
    {
        const Tensor gamma = normScale(weight, c);
        const Vector g = vectorOf(gamma.data(), gamma.numel());
        centres = c.norm == NormKind::LayerNorm;
        const double spread = centres ? (x.array() - x.mean()).square().mean() : x.squaredNorm() / double(x.size());
        inverse = 1.0 / std::sqrt(spread + double(c.lnEpsilon));
        scale = g * inverse;
        shift = bias.empty() ? Vector::Zero(x.size()) : vectorOf(bias.data(), bias.numel());
    }
    Vector operator()(const Vector &v) const
    {
        return centres ? Vector(scale.cwiseProduct((v.array() - v.mean()).matrix())) : Vector(scale.cwiseProduct(v));
    }
};

// One attention of block `layer` (self or cross): its heads' parts, and its bias's, as written into the stream.
struct AttentionParts
{
    std::vector<Vector> heads;
    Vector bias;
    Vector written; // what the sub-layer added to the stream (its output, or its output norm's)
};

AttentionParts attentionParts(const Model &model, const Trace &trace, const names::AttentionSite &site, int layer,
    int64_t t, const BlockWeights &b, const BlockPart part)
{
    const ModelConfig &c = model.config;
    const std::string out = names::attentionTensor(site, layer, "out");
    const std::string normed = names::attentionTensor(site, layer, "out_norm");
    const Tensor &context = trace.tensor(names::attentionTensor(site, layer, "context")); // [H, T, d]
    const int64_t H = context.dim(0), d = context.dim(2);
    const LinearModule module = blockModule(c, b, part);
    const Tensor zeros = module.bias.empty() ? Tensor() : Tensor(module.bias.shape()); // a head's part has no bias
    const LinearModule unbiased {module.weight, zeros, module.firstRow, module.rows};
    AttentionParts parts;
    Tensor merged({1, H * d}), projected({1, int64_t(c.dModel)});
    for (int64_t h = 0; h < H; ++h) {
        std::fill(merged.data(), merged.data() + merged.numel(), 0.0f);
        std::copy_n(context.data() + (h * context.dim(1) + t) * d, d, merged.data() + h * d);
        moduleForward(projected, merged, unbiased);
        parts.heads.push_back(rowOf(projected, 0));
    }
    parts.bias = module.bias.empty() ? Vector::Zero(c.dModel) : vectorOf(module.bias.data(), module.bias.numel());
    if (trace.contains(normed) && !site.cross) { // OLMo 2's and Gemma's norm of the output before the add
        const FrozenNorm n(rowOf(trace.tensor(out), t), b.normWeight(BlockPart::NormAttentionOut),
            b.normBias(BlockPart::NormAttentionOut), c);
        for (Vector &head : parts.heads)
            head = n(head);
        parts.bias = n(parts.bias) + n.shift;
        parts.written = rowOf(trace.tensor(normed), t);
    } else {
        parts.written = rowOf(trace.tensor(out), t);
    }
    return parts;
}

// Each expert that took the token at row t: its output alone (the layer's own op on that row with the other choices
// left out), through the layer's output norm frozen as for the whole feed-forward.
template <typename Attribute>
std::vector<LogitAttribution::ExpertPart> expertParts(const Model &model, const Program &program, const Trace &trace,
    const std::string &prefix, int layer, int64_t t, bool normed, const Attribute &attribute)
{
    const ModelConfig &c = model.config;
    const BlockWeights &b = model.blocks[size_t(layer)];
    const Tensor &choice = trace.tensor(prefix + "router.choice"), &gate = trace.tensor(prefix + "router.gate");
    const Op &op = program.ops[size_t(program.producerOf(prefix + "mlp.down"))];
    const Tensor &input = trace.tensor(op.inputs.front());
    const int64_t K = choice.dim(1);
    Tensor x({1, input.dim(1)}), alone({1, K}), gates({1, K}), out({1, int64_t(c.dModel)});
    std::copy_n(input.data() + t * input.dim(1), input.dim(1), x.data());
    std::copy_n(gate.data() + t * K, K, gates.data());
    std::optional<FrozenNorm> norm; // the layer's output norm, frozen at the whole feed-forward's output
    if (normed)
        norm.emplace(rowOf(trace.tensor(prefix + "mlp.down"), t), b.normWeight(BlockPart::NormFfnOut),
            b.normBias(BlockPart::NormFfnOut), c);
    std::vector<LogitAttribution::ExpertPart> parts;
    for (int64_t k = 0; k < K; ++k) {
        const int expert = int(choice.data()[t * K + k]);
        if (expert < 0)
            continue; // dropped: the residual carries the token
        std::fill(alone.data(), alone.data() + K, -1.0f);
        alone.data()[k] = float(expert);
        expertsForward(out, x, alone, gates, c, b);
        const Vector part = rowOf(out, 0);
        parts.push_back({expert, double(gates.data()[k]), attribute(norm ? (*norm)(part) : part)});
    }
    return parts;
}

} // namespace

std::vector<NamedPart> largestWriters(const LogitAttribution &a)
{
    // "L3 H2": appended piece by piece, as GCC 12 misreads "L" + std::to_string(…) (-Wstringop-overflow).
    const auto label = [](int layer, const char *part, int head = -1) {
        std::string s = "L";
        s.append(std::to_string(layer)).append(" ").append(part);
        return head < 0 ? s : s.append(std::to_string(head));
    };
    std::vector<NamedPart> parts {{"embedding", a.embedding}, {"final norm's β", a.normShift}};
    for (int l = 0; l < a.layers; ++l) {
        for (int h = 0; h < a.heads; ++h)
            parts.push_back({label(l, "H", h), a.selfHead(l, h)});
        if (a.crossAttention)
            for (int h = 0; h < a.heads; ++h)
                parts.push_back({label(l, "X", h), a.crossHead(l, h)});
        parts.push_back({label(l, "bias"), a.attentionBias[size_t(l)]});
        parts.push_back({label(l, "FFN"), a.feedForward[size_t(l)]});
    }
    std::erase_if(parts, [](const NamedPart &p) { return p.value == 0; });
    std::stable_sort(parts.begin(), parts.end(),
        [](const NamedPart &x, const NamedPart &y) { return std::abs(x.value) > std::abs(y.value); });
    return parts;
}

std::string logitAttributionProblem(const ModelConfig &config, const Program &program, const Trace &trace)
{
    if (config.family == Family::Bert)
        return "a BERT masked-LM head transforms the stream (a dense layer, GELU and a LayerNorm) before the "
               "unembedding reads it, so the logit is not a sum of what each part wrote";
    if (config.layerNorm == LayerNormPlacement::Post)
        return "post-LN blocks normalise the residual stream after every sub-layer, so the stream the head reads is "
               "not the sum of what each part wrote";
    if (config.reversible)
        return "reversible blocks keep two streams that each block rewrites, not one sum of parts";
    if (config.act.enabled)
        return "adaptive computation time mixes the blocks' outputs with weights that depend on them, so the stream "
               "the head reads is not the sum of what each part wrote";
    if (config.funnel.active())
        return "a funnel pools the stream between blocks, so a position's stream is not the sum of what was written "
               "at that position";
    const OutputHead head = outputHead(program);
    if (head.ops.empty())
        return "this model has no output head";
    if (head.seeds.size() != 1 || head.seeds.front() != names::residualStream(head.stack, config.layers))
        return "its output head reads " + (head.seeds.empty() ? std::string("nothing") : head.seeds.front())
            + ", not the residual stream";
    if (!trace.contains(head.seeds.front()))
        return "nothing computed yet: step past " + head.seeds.front();
    return {};
}

LogitAttribution logitAttribution(const Model &model, const Program &program, const Trace &trace, const Input &input,
    const LogitAttributionOptions &options)
{
    const ModelConfig &c = model.config;
    if (const std::string why = logitAttributionProblem(c, program, trace); !why.empty())
        throw Error("direct logit attribution: " + why);
    const auto checkToken = [&c](int token, const char *what) {
        if (token < 0 || token >= c.vocab)
            throw Error(std::string("direct logit attribution: the ") + what + " token id " + std::to_string(token)
                + " is outside the vocabulary [0, " + std::to_string(c.vocab) + ")");
    };
    checkToken(options.target, "target");
    if (options.contrast != -1)
        checkToken(options.contrast, "contrast");
    const OutputHead head = outputHead(program);
    const names::Stack stack = head.stack;
    const Tensor &last = trace.tensor(head.seeds.front());
    const int64_t T = last.dim(0);
    const int64_t t = options.position < 0 ? T - 1 : options.position;
    if (t >= T)
        throw Error("direct logit attribution: position " + std::to_string(options.position)
            + " is outside the input (0.." + std::to_string(T - 1) + ")");

    LogitAttribution r;
    r.layers = c.layers;
    r.heads = c.heads;
    r.position = int(t);
    r.target = options.target;
    r.contrast = options.contrast;
    r.crossAttention = c.isEncoderDecoder();
    r.softcap = c.logitSoftcap;

    // w: the unembedding's direction of the logit (difference), with T5's tied-head scale.
    const Tensor &unembedding = model.outputWeight();
    Vector w = rowOf(unembedding, options.target);
    if (options.contrast >= 0)
        w -= rowOf(unembedding, options.contrast);
    w *= double(c.outputScale());
    const Vector stream = rowOf(last, t);
    const FrozenNorm final(stream, model.lnfWeight, model.lnfBias, c);
    r.frozenScale = final.inverse;
    const auto attribute = [&](const Vector &part) { return w.dot(final(part)); };

    const Vector embedding = rowOf(trace.tensor(names::residualStream(stack, 0)), t);
    Vector sum = embedding;
    Vector uncentred = Vector::Zero(c.dModel); // Σ parts, for the centring's report
    const auto add = [&](const Vector &part) {
        uncentred += part;
        return attribute(part);
    };
    r.embedding = add(embedding);
    r.selfHeads.assign(size_t(c.layers) * size_t(c.heads), 0.0);
    if (r.crossAttention)
        r.crossHeads = r.selfHeads;
    r.attentionBias.assign(size_t(c.layers), 0.0);
    r.feedForward.assign(size_t(c.layers), 0.0);
    r.experts.resize(size_t(c.layers));
    for (int l = 0; l < c.layers; ++l) {
        const BlockWeights &b = model.blocks[size_t(l)];
        // A block LayerDrop left out wrote nothing: its output is its input.
        if (!trace.contains(names::attentionTensor({stack, false}, l, "out")))
            continue;
        const auto addAttention = [&](bool cross, std::vector<double> &heads) {
            const AttentionParts parts
                = attentionParts(model, trace, {stack, cross}, l, t, b, cross ? BlockPart::CrossOut : BlockPart::Out);
            for (size_t h = 0; h < parts.heads.size(); ++h)
                heads[size_t(l) * size_t(c.heads) + h] = add(parts.heads[h]);
            // A bias (and an output norm's shift) is the same vector at every position: its own part.
            r.attentionBias[size_t(l)] += add(parts.bias);
            sum += parts.written;
        };
        addAttention(false, r.selfHeads);
        if (r.crossAttention)
            addAttention(true, r.crossHeads);
        const std::string prefix = names::layerPrefix(stack, l);
        const bool normed = trace.contains(prefix + "mlp.out_norm");
        const Vector written = rowOf(trace.tensor(prefix + (normed ? "mlp.out_norm" : "mlp.down")), t);
        r.feedForward[size_t(l)] = add(written);
        sum += written;
        if (trace.contains(prefix + "router.choice"))
            r.experts[size_t(l)] = expertParts(model, program, trace, prefix, l, t, normed, attribute);
    }
    // The check that the stream is the sum of its parts; a model whose blocks write otherwise is refused.
    const double largest = std::max(stream.cwiseAbs().maxCoeff(), 1e-30);
    r.streamGap = (stream - sum).cwiseAbs().maxCoeff() / largest;
    if (r.streamGap > 1e-3)
        throw Error("direct logit attribution: the stream the output head reads is not the embedding plus what each "
                    "sub-layer wrote (off by "
            + std::to_string(r.streamGap) + " of its largest entry), so the logit has no direct parts here");

    r.normShift = w.dot(final.shift);
    if (final.centres)
        r.centring = w.dot(final.scale.cwiseProduct(uncentred)) - w.dot(final(uncentred));
    r.sum = r.normShift + r.embedding;
    for (const std::vector<double> *parts : {&r.selfHeads, &r.crossHeads, &r.attentionBias, &r.feedForward})
        for (const double v : *parts)
            r.sum += v;

    // The model's own logit before any cap: its output head's ("head.logits" under a soft-cap, or the capped logit
    // uncapped when a run kept on demand computed it afresh).
    const Tensor logits = nextTokenLogits(model, program, trace, input, {int(t)});
    const auto precap = [&](int token) {
        const double cap = c.logitSoftcap, z = logits.data()[token];
        if (cap <= 0)
            return z;
        if (const TraceEntry *uncapped = trace.find("head.logits"))
            return double(uncapped->tensor.data()[t * c.vocab + token]);
        return cap * std::atanh(z / cap);
    };
    r.modelLogit = precap(options.target) - (options.contrast >= 0 ? precap(options.contrast) : 0.0);
    return r;
}

} // namespace atlas
