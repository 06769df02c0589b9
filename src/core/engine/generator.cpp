#include "engine/generator.h"

#include "engine/blockcomponents.h"
#include "engine/engine.h"
#include "engine/feedforward.h"
#include "engine/temperature.h"

#include "ops/ops.h"
#include "trace/names.h"
#include "util/blasthreads.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace atlas {

namespace {

// What follows a query's product with the cached keys, as the traced forward's steps for the layer: the soft-cap, the
// masked keys, and the normaliser (softmax, α-entmax with `alpha` from Model::attentionAlphas, softmax within each
// head's adaptive span with `spans` from Model::attentionSpans, or softmax with gpt-oss's `sinks`).
struct ScoreSteps
{
    float softcap = 0;
    std::vector<int> masked;
    std::vector<float> alpha, spans;
    float ramp = 0;
    const Tensor *sinks = nullptr;
};

// One query position of H heads (q and ctx: one row of H·d, the bytes of [H, 1, d]) against rows [first, rows) of the
// cached keys and values [·, Hkv·d], query head h reading K/V head h / (H / Hkv) (grouped-query attention):
// ctx_h = normalise(steps(scale · q_h K_gᵀ + bias_h)) V_g. `bias` is [H, 1, rows] or empty; the query is at rows − 1.
// The scores, shaped [H, 1, keys], go through the same ops as the program's (programattention.cpp), so a cached step
// computes exactly the formula the trace shows.
void attendOneQuery(Tensor &ctx, const Tensor &q, const MatrixRM &keys, const MatrixRM &values, int64_t first,
    int64_t rows, int64_t heads, float scale, const Tensor &bias, const ScoreSteps &steps)
{
    const int64_t d = ctx.numel() / heads, group = heads / (keys.cols() / d), n = rows - first;
    Tensor scores = Tensor::uninitialized({heads, 1, n});
    for (int64_t hd = 0; hd < heads; ++hd) { // (scale · q) Kᵀ, as ops::attention_scores_forward
        RowVectorMap s(scores.data() + hd * n, n);
        s.noalias()
            = (scale * ConstRowVectorMap(q.data() + hd * d, d)) * keys.block(first, (hd / group) * d, n, d).transpose();
        if (!bias.empty())
            s += ConstRowVectorMap(bias.data() + hd * rows + first, n);
    }
    if (steps.softcap > 0) // before the mask, as the program's
        ops::softcap_forward(scores, scores, steps.softcap); // element by element: in place
    for (int64_t hd = 0; hd < heads; ++hd)
        for (int j : steps.masked)
            scores.data()[hd * n + j] = -std::numeric_limits<float>::infinity();
    Tensor probs = Tensor::uninitialized({heads, 1, n});
    if (!steps.spans.empty()) {
        Tensor mask = Tensor::uninitialized({heads, 1, n});
        for (int64_t hd = 0; hd < heads; ++hd)
            for (int64_t j = 0; j < n; ++j)
                mask.data()[hd * n + j]
                    = ops::span_ramp_value(steps.spans[size_t(hd)], steps.ramp, rows - 1 - (first + j));
        ops::span_softmax_forward(probs, scores, mask);
    } else if (steps.sinks) {
        Tensor share({heads, 1});
        ops::sink_softmax_forward(probs, share, scores, *steps.sinks);
    } else if (steps.alpha.empty()) {
        ops::softmax_forward(probs, scores);
    } else {
        ops::entmax_forward(probs, scores, steps.alpha);
    }
    for (int64_t hd = 0; hd < heads; ++hd)
        ctx.matrix().block(0, hd * d, 1, d)
            = ConstRowVectorMap(probs.data() + hd * n, n) * values.block(first, (hd / group) * d, n, d);
}

} // namespace

Generator::Generator(std::shared_ptr<const Model> model, const std::vector<int> &prompt, SamplingOptions options)
    : Generator(std::move(model), Input {prompt, {}, {}}, options)
{
}

Generator::Generator(std::shared_ptr<const Model> model, const Input &input, SamplingOptions options)
    : m_model(std::move(model))
    , m_options(options)
    , m_rng(options.seed)
{
    start(input);
}

Generator::Generator(
    std::shared_ptr<const Model> model, const std::vector<int> &prompt, SamplingOptions options, StreamEdit edit)
    : m_model(std::move(model))
    , m_options(options)
    , m_rng(options.seed)
    , m_edit(std::move(edit))
{
    start(Input {prompt, {}, {}});
}

void Generator::start(const Input &input)
{
    const ModelConfig &c = m_model->config;
    const std::vector<int> &prompt = input.tokens;
    if (m_edit.change && c.isEncoderDecoder())
        throw Error("generation: " + m_edit.tensor + " is changed in a decoder-only model, not an encoder-decoder");
    if (!c.causal && !c.isEncoderDecoder())
        throw Error(
            "generation needs a causal model: a bidirectional model's earlier positions change with every new token");
    if (prompt.empty())
        throw Error("generation needs a prompt of at least one token");
    // Checked before any work: a prompt that cannot fit fails now, not after it has been run.
    if (prompt.size() > size_t(c.context))
        throw Error("the prompt has " + std::to_string(prompt.size()) + " tokens, more than the model's context of "
            + std::to_string(c.context));
    for (const int token : prompt)
        if (token < 0 || token >= c.vocab)
            throw Error("prompt token id " + std::to_string(token) + " is outside the vocabulary [0, "
                + std::to_string(c.vocab) + ")");
    if (c.isEncoderDecoder())
        encodeSource(input);
    else if (!input.source.empty())
        throw Error("a model with one stack reads no source: give its input as the prompt alone");
    if (c.rotatesQueriesAndKeys())
        for (int l = 0; l < c.layers; ++l)
            m_ropeFrequencies.push_back(c.ropeFrequencies(l));
    const names::Stack stack = c.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack;
    for (int l = 0; l < c.layers; ++l)
        m_recipes.push_back(blockRecipe(c, stack, l));
    if (m_edit.change) {
        for (int l = 0; l < c.layers && m_editLayer < 0; ++l) {
            const std::vector<std::string> entering = c.reversible
                ? std::vector<std::string> {BlockStep::kStream1, BlockStep::kStream2}
                : std::vector<std::string> {BlockStep::kInput};
            for (const std::string &local : entering)
                if (m_editLayer < 0 && blockTensor(stack, l, local) == m_edit.tensor) {
                    m_editLayer = l;
                    m_editEntering = local;
                }
            const std::vector<BlockStep> &steps = m_recipes[size_t(l)].steps;
            for (size_t k = 0; k < steps.size() && m_editLayer < 0; ++k)
                if (blockTensor(stack, l, steps[k].out) == m_edit.tensor) {
                    m_editLayer = l;
                    m_editStep = int(k);
                }
        }
        if (m_editLayer < 0)
            throw Error("generation: no block makes " + m_edit.tensor + " one position at a time");
    }
    // The cache grows as tokens come (a model's context may be 128k positions); each row holds the K/V heads only.
    const int64_t rows = std::min<int64_t>(c.context, int64_t(prompt.size()) + 64);
    m_keys.assign(static_cast<size_t>(c.layers), MatrixRM::Zero(rows, int64_t(c.kvHeadCount()) * c.headDim()));
    m_values = m_keys;
    for (int t : prompt)
        feed(t);
}

void Generator::feed(int token)
{
    adaptBlasThreadsToLoad(); // as many OpenBLAS threads as idle cores (util/blasthreads.h)
    const ModelConfig &c = m_model->config;
    if (m_cached >= c.context)
        throw Error("the context of " + std::to_string(c.context) + " tokens is full");
    if (token < 0 || token >= c.vocab)
        throw Error(
            "token id " + std::to_string(token) + " is outside the vocabulary [0, " + std::to_string(c.vocab) + ")");
    const int64_t D = c.dModel, KV = int64_t(c.kvHeadCount()) * c.headDim();
    const int pos = m_cached;
    if (c.ropeDependsOnLength() && !m_longRope && pos + 1 > c.ropeScaling.originalContext) {
        // LongRoPE turns by its long factors once the text outgrows the original context, every earlier key too:
        // the cached keys were turned by the short ones, so the text so far runs again (Phi3ForCausalLM drops its
        // cache at this point), and then this token.
        m_longRope = true;
        m_ropeFrequencies.clear();
        for (int l = 0; l < c.layers; ++l)
            m_ropeFrequencies.push_back(c.ropeFrequencies(l, pos + 1));
        const std::vector<int> earlier = std::move(m_tokens);
        m_tokens.clear();
        m_cached = 0;
        for (const int t : earlier)
            feed(t);
        return feed(token);
    }
    if (pos >= m_keys.front().rows()) {
        const int64_t rows = std::min<int64_t>(c.context, 2 * m_keys.front().rows());
        for (size_t l = 0; l < m_keys.size(); ++l) {
            m_keys[l].conservativeResize(rows, KV);
            m_values[l].conservativeResize(rows, KV);
        }
    }
    Tensor x({1, D});
    ops::embedding_forward(x, m_model->wte, {token});
    x.matrix() *= c.embeddingScale;
    if (c.positions == PositionKind::Learned) {
        x.matrix() += m_model->wpe.matrix().row(pos);
    } else if (c.positions == PositionKind::Sinusoidal) {
        Tensor p({pos + 1, D});
        Model::sinusoidalPositions(p);
        x.matrix() += p.matrix().row(pos);
    }
    // Each block as its recipe arranges it (model/blockrecipe.h), on the one new position: a reversible model carries
    // two streams from block to block, every other one stream.
    std::vector<Tensor> streams = {x};
    if (c.reversible)
        streams.push_back(x);
    std::vector<Tensor> blockOutputs; // adaptive computation time mixes them
    for (int l = 0; l < c.layers; ++l) {
        const BlockWeights &b = m_model->blocks[static_cast<size_t>(l)];
        const BlockRecipe &recipe = m_recipes[size_t(l)];
        std::map<std::string, Tensor> local; // the block's tensors by their names in the recipe
        if (c.reversible) {
            local[BlockStep::kStream1] = std::move(streams[0]);
            local[BlockStep::kStream2] = std::move(streams[1]);
        } else {
            local[BlockStep::kInput] = std::move(streams[0]);
        }
        const bool edits = l == m_editLayer;
        if (edits && m_editStep < 0)
            m_edit.change(local.at(m_editEntering));
        for (size_t k = 0; k < recipe.steps.size(); ++k) {
            const BlockStep &step = recipe.steps[k];
            const Tensor &in = local.at(step.in[0]);
            Tensor out({1, D});
            switch (step.kind) {
            case BlockStep::Kind::Norm:
                normForward(out, in, b.normWeight(step.norm), b.normBias(step.norm), c);
                break;
            case BlockStep::Kind::Attention:
                if (step.in.size() > 1)
                    throw Error("a funnel's pooling layer cannot run one token at a time");
                selfAttend(out, in, l, pos);
                break;
            case BlockStep::Kind::CrossAttention:
                crossAttend(out, in, l);
                break;
            case BlockStep::Kind::FeedForward:
                c.isMoeLayer(l) ? routeAlone(out, in, b)
                                : feedForwardDown(out, c, b, feedForwardActivations(c, b, in).act);
                break;
            case BlockStep::Kind::Add:
                out.matrix() = in.matrix();
                for (size_t k = 1; k < step.in.size(); ++k) // summed left to right, as the forward pass
                    out.matrix() += local.at(step.in[k]).matrix();
                break;
            case BlockStep::Kind::FunnelPool:
            case BlockStep::Kind::FunnelUpsample:
                throw Error("a funnel pools or upsamples the whole sequence: it cannot run one token at a time");
            case BlockStep::Kind::FourierMixing:
                throw Error("FNet's Fourier transform mixes the whole sequence: it cannot run one token at a time");
            case BlockStep::Kind::TimestepSignal: // the step's signal, the same for every position
                Model::sinusoidalPositions(out, l + 1);
                out.matrix() += in.matrix();
                break;
            }
            if (edits && int(k) == m_editStep)
                m_edit.change(out);
            local[step.out] = std::move(out);
        }
        streams.clear();
        for (const std::string &name : recipe.outputs)
            streams.push_back(std::move(local.at(name)));
        if (c.act.enabled)
            blockOutputs.push_back(streams[0]);
    }
    if (c.reversible) { // X_L = (Y₁ + Y₂) / 2
        ops::average_forward(x, streams[0], streams[1]);
    } else if (c.act.enabled) { // X_act = Σ_n p_n X_n, as the forward pass
        std::vector<const Tensor *> states;
        for (const Tensor &s : blockOutputs)
            states.push_back(&s);
        Tensor halting({1, c.layers}), weights({1, c.layers}), steps({1}), ponder({1});
        ops::act_forward(
            halting, weights, steps, ponder, x, states, m_model->haltingWeight, m_model->haltingBias, c.act.epsilon);
    } else {
        x = std::move(streams[0]);
    }
    Tensor lnf({1, D});
    normForward(lnf, x, m_model->lnfWeight, m_model->lnfBias, c);
    lnf.matrix() *= c.outputScale();
    m_logits = Tensor({1, c.vocab});
    ops::logits_forward(m_logits, lnf, m_model->outputWeight());
    m_logits.reshape({c.vocab});
    if (c.logitSoftcap > 0) // Gemma 2's final_logit_softcapping
        ops::softcap_forward(m_logits, Tensor(m_logits), c.logitSoftcap);
    m_tokens.push_back(token);
    ++m_cached;
}

// The encoder on the whole source, once (the engine runs it, checking the source as for any run), and every decoder
// block's cross-attention keys and values of its output Z: they stay the same for every token the decoder writes.
void Generator::encodeSource(const Input &input)
{
    if (input.source.empty())
        throw Error("an encoder-decoder generates from a source: the source (the encoder's input) is empty");
    Input encoder = input;
    encoder.tokens = {input.tokens.front()}; // the engine wants a decoder input; only the encoder's ops run
    encoder.padding.clear();
    Engine engine(m_model, encoder, {false});
    engine.runTo(engine.program().indexOf(names::encoderOutput()) + 1);
    const Tensor &z = engine.trace().tensor(names::encoderOutput());
    const ModelConfig &c = m_model->config;
    const int64_t S = z.dim(0), I = c.innerDim();
    for (const BlockWeights &b : m_model->blocks) {
        if (!c.fusesCrossKv()) { // T5: K = Z W_kᵀ, V = Z W_vᵀ
            Tensor k({S, I}), v({S, I});
            moduleForward(k, z, blockModule(c, b, BlockPart::CrossK));
            moduleForward(v, z, blockModule(c, b, BlockPart::CrossV));
            m_crossKeys.push_back(k.matrix());
            m_crossValues.push_back(v.matrix());
            continue;
        }
        Tensor kv({S, 2 * I});
        moduleForward(kv, z, blockModule(c, b, BlockPart::CrossKv)); // [K V] = Z W_kvᵀ + b_kv
        m_crossKeys.push_back(kv.matrix().leftCols(I));
        m_crossValues.push_back(kv.matrix().rightCols(I));
    }
    m_sourcePadding = input.sourcePadding;
}

// As the engine's cross-attention (programattention.cpp, crossAttention) for the one new decoder position, from its
// normalised stream h: no causal mask, the source's padding masked.
void Generator::crossAttend(Tensor &out, const Tensor &h, int layer) const
{
    const ModelConfig &c = m_model->config;
    const BlockWeights &b = m_model->blocks[size_t(layer)];
    const int64_t H = c.heads, I = c.innerDim();
    const MatrixRM &keys = m_crossKeys[size_t(layer)], &values = m_crossValues[size_t(layer)];
    const int64_t S = keys.rows();
    Tensor q({1, I}), ctx({1, I});
    moduleForward(q, h, blockModule(c, b, BlockPart::CrossQ));
    attendOneQuery(ctx, q, keys, values, 0, S, H, scoreScale(c), {}, ScoreSteps {.masked = m_sourcePadding});
    moduleForward(out, ctx, blockModule(c, b, BlockPart::CrossOut));
}

// Self-attention of the new position `pos` from its normalised stream h: its query, key and value, the key turned by
// its position (RoPE), the key and value appended to the layer's cache, and the query against every cached key in
// the layer's window.
void Generator::selfAttend(Tensor &out, const Tensor &h, int layer, int pos)
{
    const ModelConfig &c = m_model->config;
    const BlockWeights &b = m_model->blocks[static_cast<size_t>(layer)];
    const int64_t H = c.heads, KV = int64_t(c.kvHeadCount()) * c.headDim();
    Tensor qkv({1, qkvWidth(c)}), ctx({1, c.innerDim()});
    projectQkv(qkv, h, c, b);
    QkvHeads heads = splitQkv(qkv, c, false); // q [H, 1, d], k and v [Hkv, 1, d]: a row of H·d is H blocks of d
    Tensor &q = heads.q, &k = heads.k;
    if (c.qkNorm != QkNorm::None) { // the new row's queries and keys normalised (its Hkv K/V heads: γ_k as is)
        qkNormForward(q, Tensor(q), b.normWeight(BlockPart::QNorm), c);
        qkNormForward(k, Tensor(k), b.normWeight(BlockPart::KNorm), c);
    }
    if (c.rotates(layer)) { // the cache keeps rotated keys: each turned by its own position
        const double amplitude = c.ropeAmplitude(layer);
        ops::rope_forward(q, Tensor(q), pos, ropeStyle(c), m_ropeFrequencies[size_t(layer)], amplitude);
        ops::rope_forward(k, Tensor(k), pos, ropeStyle(c), m_ropeFrequencies[size_t(layer)], amplitude);
    }
    const Tensor bias = positionBias(layer, q, pos);
    m_keys[size_t(layer)].row(pos) = ConstRowVectorMap(k.data(), KV);
    m_values[size_t(layer)].row(pos) = ConstRowVectorMap(heads.v.data(), KV);
    const int64_t first = c.windowed(layer) ? std::max(0, pos + 1 - c.slidingWindow) : 0;
    const ScoreSteps steps {.softcap = c.attentionSoftcap,
        .alpha = m_model->attentionAlphas(layer),
        .spans = m_model->attentionSpans(layer),
        .ramp = float(c.spanRamp),
        .sinks = c.attentionSinks ? &b.weight(BlockPart::Sinks) : nullptr};
    attendOneQuery(
        ctx, q, m_keys[size_t(layer)], m_values[size_t(layer)], first, pos + 1, H, scoreScale(c), bias, steps);
    moduleForward(out, ctx, blockModule(c, b, BlockPart::Out));
}

// A mixture-of-experts layer on the one new token: routed alone, it always fits its experts' capacity (so this matches
// the whole-sequence forward pass only where that one dropped nothing: docs/models.md, "Mixture of experts").
void Generator::routeAlone(Tensor &out, const Tensor &x, const BlockWeights &b) const
{
    const ModelConfig &c = m_model->config;
    Tensor logits({1, c.experts}), probs({1, c.experts}), choice({1, c.expertTopK}), gate({1, c.expertTopK});
    logits.matrix().noalias() = x.matrix() * b.weight(BlockPart::Router).matrix().transpose();
    if (const Tensor &bias = b.bias(BlockPart::Router); !bias.empty())
        logits.matrix() += ConstRowVectorMap(bias.data(), bias.numel());
    ops::softmax_forward(probs, logits);
    ops::router_route(choice, gate, probs, 1);
    if (c.droplessRouting)
        gate.matrix() /= gate.matrix().sum();
    expertsForward(out, x, choice, gate, c, b);
}

// The position term of query `pos` against keys 0 … pos, [H, 1, pos + 1]; empty for kinds without one.
Tensor Generator::positionBias(int layer, const Tensor &q, int pos) const
{
    const ModelConfig &c = m_model->config;
    if (!c.biasesScores())
        return {};
    Tensor bias({c.heads, 1, pos + 1});
    if (c.positions == PositionKind::Alibi)
        ops::alibi_bias_forward(bias, pos);
    else if (c.positions == PositionKind::T5)
        ops::t5_bias_forward(bias, m_model->relativeBias, false, c.relativeMaxDistance, pos);
    else
        ops::shaw_bias_forward(bias, q, m_model->blocks[size_t(layer)].weight(BlockPart::RelativeKey), c.relativeClip,
            1.0f / std::sqrt(float(c.headDim())), pos, c.relativeKeySign);
    return bias;
}

int Generator::generate()
{
    const int V = static_cast<int>(m_logits.numel());
    std::vector<int> order(static_cast<size_t>(V));
    std::iota(order.begin(), order.end(), 0);
    const float *z = m_logits.data();
    int next = 0;
    if (m_options.temperature <= 0.0f) {
        next = static_cast<int>(std::max_element(z, z + V) - z);
    } else {
        const int k = m_options.topK > 0 ? std::min(m_options.topK, V) : V;
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [z](int a, int b) { return z[a] > z[b]; });
        std::vector<double> w(static_cast<size_t>(k));
        for (int i = 0; i < k; ++i)
            w[i] = std::exp(double(z[order[i]] - z[order[0]]) / m_options.temperature);
        if (m_options.topP < 1.0) // w is sorted from the largest (order's first k): the nucleus is a prefix of it
            w.resize(nucleusSize(w.data(), w.size(), m_options.topP));
        std::discrete_distribution<int> pick(w.begin(), w.end());
        next = order[static_cast<size_t>(pick(m_rng))];
    }
    const float top = *std::max_element(z, z + V);
    double sum = 0;
    for (int i = 0; i < V; ++i)
        sum += std::exp(double(z[i] - top));
    m_lastProbability = std::exp(double(z[next] - top)) / sum;
    feed(next);
    return next;
}

std::vector<int> Generator::continuation(int count)
{
    std::vector<int> out;
    for (int i = 0; i < count && int(m_tokens.size()) < m_model->config.context; ++i)
        out.push_back(generate());
    return out;
}

size_t Generator::cacheBytes() const
{
    const ModelConfig &c = m_model->config;
    return 2 * m_keys.size() * static_cast<size_t>(m_cached) * size_t(c.kvHeadCount()) * size_t(c.headDim())
        * sizeof(float);
}

size_t Generator::crossCacheBytes() const
{
    return 2 * m_crossKeys.size() * static_cast<size_t>(crossPositions())
        * static_cast<size_t>(m_model->config.innerDim()) * sizeof(float);
}

Tensor Generator::cachedKeys(int layer) const
{
    const ModelConfig &c = m_model->config;
    Tensor t({c.kvHeadCount(), m_cached, c.headDim()});
    for (int h = 0; h < c.kvHeadCount(); ++h)
        t.slice(h) = m_keys.at(static_cast<size_t>(layer)).block(0, h * c.headDim(), m_cached, c.headDim());
    return t;
}

Tensor Generator::cachedValues(int layer) const
{
    const ModelConfig &c = m_model->config;
    Tensor t({c.kvHeadCount(), m_cached, c.headDim()});
    for (int h = 0; h < c.kvHeadCount(); ++h)
        t.slice(h) = m_values.at(static_cast<size_t>(layer)).block(0, h * c.headDim(), m_cached, c.headDim());
    return t;
}

} // namespace atlas
