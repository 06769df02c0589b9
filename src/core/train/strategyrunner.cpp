#include "train/strategyrunner.h"

#include "model/blockrecipe.h"
#include "ops/ops.h"
#include "trace/names.h"
#include "train/backwardpass.h"
#include "util/error.h"

#include <algorithm>

namespace atlas {

namespace {

MemoryCategory keptCategory(MemoryPhase phase)
{
    return phase == MemoryPhase::Recompute ? MemoryCategory::RecomputedActivations : MemoryCategory::StoredActivations;
}

// A reversible block's input rebuilt from its output: out = y − f (T,D), recomputed activation memory.
Tensor rebuild(int layer, const char *what, const Tensor &y, const Tensor &f)
{
    MemoryScope scope(MemoryPhase::Recompute, layer, what, MemoryCategory::RecomputedActivations);
    Tensor x(y.shape());
    ops::subtract_forward(x, y, f);
    return x;
}

} // namespace

StrategyRunner::StrategyRunner(const Model &model, Input input, MemoryOptions options)
    : m_model(model)
    , m_input(std::move(input))
    , m_options(options)
    , T(int64_t(m_input.tokens.size()))
{
    validateMemoryOptions(m_options, model.config, int(T));
    if (model.config.funnel.active())
        throw Error("the memory strategies are not implemented for a funnel model (Funnel-Transformer): its pooling "
                    "and upsampling are not among the tensors a strategy keeps or recomputes");
    if (model.config.act.enabled)
        throw Error("the memory strategies are not implemented for a model with adaptive computation time: its halting "
                    "mixes every block's output, which the strategies do not keep");
    if (model.config.sinkhorn.active())
        throw Error("the memory strategies are not implemented for a Sinkhorn model: its sorting network and sort "
                    "matrices are not among the tensors a strategy keeps or recomputes");
    if (model.config.isEncoderDecoder()) {
        if (m_input.source.empty())
            throw Error("an encoder-decoder's training pass needs a source for its encoder");
        if (!m_input.droppedLayers.empty())
            throw Error("dropping layers (LayerDrop) trains a model of one stack, not an encoder-decoder");
        m_stacks = {{names::kDecoderStack, model.config.layers}, {names::kEncoderStack, model.config.encoderLayers}};
    } else {
        m_stacks = {{names::kOnlyStack, model.config.layers}};
    }
    if (!m_input.ablation.empty())
        throw Error("training with heads switched off is not implemented: drop the ablation");
    if (!m_input.droppedLayers.empty() && m_options.strategy != MemoryStrategy::Plain)
        throw Error("dropping layers (LayerDrop) trains with the plain memory strategy: checkpointing and "
                    "reversible blocks keep every block's boundary");
    for (int l = 0; l < model.config.layers; ++l)
        if (m_input.kernelFor(l))
            throw Error("training needs exact attention: backpropagation through the efficient kernels is not "
                        "implemented");
    m_program = Program::build(model.config, m_input, false, m_options.ffnChunks);
    for (size_t i = 0; i < m_program.ops.size(); ++i)
        m_opIndex[m_program.ops[i].name] = int(i);
}

int StrategyRunner::opIndex(const std::string &name) const
{
    const auto it = m_opIndex.find(name);
    if (it == m_opIndex.end())
        throw Error("the training program has no op '" + name + "'");
    return it->second;
}

int StrategyRunner::blockBegin(const names::Stack &s, int layer) const
{
    const ModelConfig &c = m_model.config;
    if (s == names::kEncoderStack && layer >= c.encoderLayers)
        return opIndex(names::encoderOutput());
    if (layer >= c.layers)
        return opIndex(c.reversible ? names::streamMean() : "ln_f");
    // The block's first op, whichever step of its recipe makes it (a norm, or a post-norm block's attention).
    for (size_t k = 0; k < m_program.ops.size(); ++k)
        if (m_program.ops[k].layer == layer && m_program.ops[k].stack == s)
            return int(k);
    throw Error("the training program has no op in block " + std::to_string(layer));
}

std::vector<std::string> StrategyRunner::boundary(const names::Stack &s, int layer) const
{
    if (!m_model.config.reversible)
        return {names::residualStream(s, layer)};
    if (layer == 0)
        return {names::reversibleStream(layer, 1)};
    return {names::reversibleStream(layer, 1), names::reversibleStream(layer, 2)};
}

int StrategyRunner::segmentLength(const StackPart &part) const
{
    return std::min(checkpointInterval(m_options, part.layers), part.layers);
}

void StrategyRunner::runOps(Trace &trace, int first, int last, MemoryPhase phase, const NameSet &keep) const
{
    // Which ops to run, from the last one back: an op is needed when it makes a kept tensor or one that a needed
    // later op reads (e.g. a recomputed segment's last residual add is not: the next boundary is known, and then
    // neither is its FFN).
    std::vector<char> needed(size_t(last - first), 0);
    NameSet wanted;
    for (int k = last - 1; k >= first; --k) {
        const Op &op = m_program.ops[size_t(k)];
        for (const OpOutput &o : op.outputs)
            needed[size_t(k - first)] |= keep.count(o.name) || wanted.count(o.name);
        if (needed[size_t(k - first)])
            wanted.insert(op.inputs.begin(), op.inputs.end());
    }
    std::unordered_map<std::string, int> lastReader;
    for (int k = first; k < last; ++k)
        if (needed[size_t(k - first)])
            for (const std::string &in : m_program.ops[size_t(k)].inputs)
                lastReader[in] = k;
    const auto readLater = [&](const std::string &name, int k) {
        const auto it = lastReader.find(name);
        return it != lastReader.end() && it->second > k;
    };
    for (int k = first; k < last; ++k) {
        if (!needed[size_t(k - first)])
            continue;
        const Op &op = m_program.ops[size_t(k)];
        bool kept = false;
        for (const OpOutput &o : op.outputs)
            kept = kept || keep.count(o.name);
        MemoryScope scope(
            phase, op.layer, MemoryScope::WholeName {op.name}, kept ? keptCategory(phase) : MemoryCategory::Workspace);
        std::vector<Tensor> outputs = op.run(m_model, m_input, trace);
        for (size_t j = 0; j < outputs.size(); ++j)
            trace.put(op.outputs[j].name, {}, k, std::move(outputs[j]));
        for (const std::string &in : op.inputs)
            if (!keep.count(in) && !readLater(in, k))
                trace.drop(in);
        for (const OpOutput &o : op.outputs)
            if (!keep.count(o.name) && !readLater(o.name, k))
                trace.drop(o.name);
    }
}

void StrategyRunner::dropAll(const std::vector<std::string> &names)
{
    for (const std::string &name : names)
        m_store.drop(name);
}

void StrategyRunner::forward()
{
    const ModelConfig &c = m_model.config;
    NameSet keep;
    for (const std::vector<std::string> &names :
        {readByHeadBackward(m_model.config), readByEmbeddingBackward(m_model.config), encoderTail(m_model.config)})
        keep.insert(names.begin(), names.end());
    switch (m_options.strategy) {
    case MemoryStrategy::Plain:
        for (const StackPart &part : m_stacks)
            for (int i = 0; i < part.layers; ++i)
                for (const std::string &name : readByBlockBackward(m_model.config, m_options, part.stack, i))
                    keep.insert(name);
        break;
    case MemoryStrategy::Checkpoint:
        for (const StackPart &part : m_stacks)
            for (int b = 0; b < part.layers; b += segmentLength(part))
                for (const std::string &name : boundary(part.stack, b))
                    keep.insert(name);
        break;
    case MemoryStrategy::Reversible:
        keep.insert({names::reversibleStream(c.layers, 1), names::reversibleStream(c.layers, 2)});
        break;
    }
    m_store.clear();
    runOps(m_store, 0, int(m_program.ops.size()), MemoryPhase::Forward, keep);
}

Tensor StrategyRunner::headBackward(const std::vector<int> &targets, BackwardPass &pass)
{
    Tensor d = pass.head(targets);
    dropAll(readByHeadBackward(m_model.config));
    return d;
}

void StrategyRunner::backward(const std::vector<int> &targets, Gradients &g)
{
    if (m_options.strategy == MemoryStrategy::Reversible)
        return backwardReversible(targets, g, nullptr);
    // Between the backward pass's own operations: freeing what a block kept once it is done with.
    MemoryScope scope(MemoryPhase::Backward, -1, "backward", MemoryCategory::Workspace);
    BackwardPass pass(m_model, m_input, g, m_options.ffnChunks);
    pass.setActivations(&m_store);
    const ModelConfig &c = m_model.config;
    Tensor d1 = headBackward(targets, pass), d2;
    if (c.reversible) {
        d2 = Tensor(d1.shape());
        Tensor dmean = std::move(d1);
        d1 = Tensor(dmean.shape());
        pass.streamMean(dmean, d1, d2);
    }
    for (const StackPart &part : m_stacks) {
        if (part.stack == names::kEncoderStack) { // from the gradient the decoder's cross-attention sent to Z
            pass.startStack(names::kEncoderStack);
            d1 = pass.encoderOutput();
            dropAll(encoderTail(m_model.config));
        }
        if (m_options.strategy == MemoryStrategy::Checkpoint)
            backwardCheckpoint(part, pass, d1, d2);
        else
            backwardBlocks(part.stack, 0, part.layers, pass, d1, d2);
        const Tensor dx = c.reversible ? pass.streamsStart(d1, d2) : std::move(d1);
        dropAll(boundary(part.stack, 0));
        pass.embeddings(dx);
    }
    dropAll(readByEmbeddingBackward(m_model.config));
}

// Blocks last−1 … first of stack s, reading the store; each block's saved tensors are dropped after its backward
// pass.
void StrategyRunner::backwardBlocks(
    const names::Stack &s, int first, int last, BackwardPass &pass, Tensor &d1, Tensor &d2)
{
    const ModelConfig &c = m_model.config;
    for (int i = last - 1; i >= first; --i) {
        if (m_input.drops(i)) { // its output is its input: the gradient passes through unchanged
            dropAll(readByBlockBackward(m_model.config, m_options, s, i));
            continue;
        }
        if (c.reversible)
            pass.blockReversible(i, d1, d2);
        else
            d1 = pass.block(i, d1);
        dropAll(readByBlockBackward(m_model.config, m_options, s, i));
    }
}

void StrategyRunner::backwardCheckpoint(const StackPart &part, BackwardPass &pass, Tensor &d1, Tensor &d2)
{
    const int L = part.layers, k = segmentLength(part);
    for (int b = ((L - 1) / k) * k; b >= 0; b -= k) {
        const int e = std::min(L, b + k);
        NameSet keep; // in the decoder, Z too: the next segment's cross-attention reads it
        if (part.stack == names::kDecoderStack)
            for (const std::string &name : encoderTail(m_model.config))
                keep.insert(name);
        for (int i = b; i < e; ++i)
            for (const std::string &name : readByBlockBackward(m_model.config, m_options, part.stack, i))
                keep.insert(name);
        runOps(m_store, blockBegin(part.stack, b), blockBegin(part.stack, e), MemoryPhase::Recompute, keep);
        backwardBlocks(part.stack, b, e, pass, d1, d2);
        dropAll(boundary(part.stack, b));
    }
}

void StrategyRunner::backwardReversible(const std::vector<int> &targets, Gradients &g,
    const std::vector<std::array<Tensor, 2>> *inputs, std::vector<std::array<Tensor, 2>> *rebuilt)
{
    if (!m_model.config.reversible)
        throw Error("the reversible backward pass needs a reversible model");
    MemoryScope scope(MemoryPhase::Backward, -1, "backward", MemoryCategory::Workspace);
    const int L = m_model.config.layers;
    if (inputs && int(inputs->size()) != L)
        throw Error("backwardReversible: " + std::to_string(inputs->size()) + " input pairs for " + std::to_string(L)
            + " blocks");
    BackwardPass pass(m_model, m_input, g, m_options.ffnChunks);
    pass.setActivations(&m_store);
    const Tensor dmean = headBackward(targets, pass);
    Tensor dy1(dmean.shape()), dy2(dmean.shape());
    pass.streamMean(dmean, dy1, dy2);
    if (rebuilt)
        rebuilt->assign(size_t(L), {});
    for (int i = L - 1; i >= 0; --i)
        reversibleLayer(
            i, pass, dy1, dy2, inputs ? &(*inputs)[size_t(i)] : nullptr, rebuilt ? &(*rebuilt)[size_t(i)] : nullptr);
    const Tensor dx = pass.streamsStart(dy1, dy2);
    m_store.drop("input");
    pass.embeddings(dx);
}

// Block i of a reversible model, from its outputs Y₁, Y₂ in the store to its inputs X₁, X₂ in their place.
void StrategyRunner::reversibleLayer(int i, BackwardPass &pass, Tensor &dy1, Tensor &dy2,
    const std::array<Tensor, 2> *given, std::array<Tensor, 2> *used)
{
    const std::string p = names::layerPrefix(i), y1 = names::reversibleStream(i + 1, 1),
                      y2 = names::reversibleStream(i + 1, 2), x1 = names::reversibleStream(i, 1),
                      x2 = names::reversibleStream(i, 2);
    const std::string g = p + "mlp.down";
    // G(Y₁), then X₂ = Y₂ − G(Y₁) and the backward pass through G.
    std::vector<std::string> inside = feedForwardReadByBackward(m_model.config, m_options, names::kOnlyStack, i);
    inside.push_back(p + "ln_2");
    NameSet keepG(inside.begin(), inside.end());
    keepG.insert({y1, g});
    runOps(m_store, opIndex(p + "ln_2"), opIndex(p + "out2"), MemoryPhase::Recompute, keepG);
    Tensor rebuiltX2 = given ? (*given)[1] : rebuild(i, "out2⁻¹", m_store.tensor(y2), m_store.tensor(g));
    dropAll({g, y2});
    m_store.put(x2, {}, -1, rebuiltX2);
    pass.mlpSublayer(i, dy2, m_store.tensor(y1), dy1);
    dropAll(inside);
    // F(X₂), then X₁ = Y₁ − F(X₂) and the backward pass through F.
    const std::vector<std::string> attention = attentionReadByBackward(m_model.config, names::kOnlyStack, i);
    NameSet keep(attention.begin(), attention.end());
    keep.insert({x2, p + "ln_1", p + "attn.out"});
    runOps(m_store, opIndex(p + "ln_1"), opIndex(p + "out1"), MemoryPhase::Recompute, keep);
    Tensor rebuiltX1 = given ? (*given)[0] : rebuild(i, "out1⁻¹", m_store.tensor(y1), m_store.tensor(p + "attn.out"));
    if (used)
        *used = {rebuiltX1, rebuiltX2};
    m_store.drop(p + "attn.out");
    pass.attentionSublayer(i, dy1, m_store.tensor(x2), dy2);
    std::vector<std::string> done = attentionReadByBackward(m_model.config, names::kOnlyStack, i);
    done.insert(done.end(), {p + "ln_1", y1});
    dropAll(done);
    if (i > 0)
        m_store.put(x1, {}, -1, std::move(rebuiltX1));
}

void StrategyRunner::startFromStreams(const Tensor &y1, const Tensor &y2)
{
    const int L = m_model.config.layers;
    m_store.clear();
    m_store.put(names::reversibleStream(L, 1), {}, -1, y1);
    m_store.put(names::reversibleStream(L, 2), {}, -1, y2);
    const std::vector<std::string> head = readByHeadBackward(m_model.config);
    NameSet keep(head.begin(), head.end());
    keep.insert({names::reversibleStream(L, 1), names::reversibleStream(L, 2)});
    runOps(m_store, blockBegin(names::kOnlyStack, L), int(m_program.ops.size()), MemoryPhase::Forward, keep);
}

Tensor StrategyRunner::embedding() const
{
    Trace trace;
    runOps(trace, 0, blockBegin(names::kOnlyStack, 0), MemoryPhase::Forward, {"input"});
    return trace.tensor("input");
}

Tensor StrategyRunner::attentionSublayer(int layer, const Tensor &x2) const
{
    const std::string p = names::layerPrefix(layer);
    Trace trace;
    trace.put(names::reversibleStream(layer, 2), {}, -1, x2);
    runOps(trace, opIndex(p + "ln_1"), opIndex(p + "out1"), MemoryPhase::Forward, {p + "attn.out"});
    return trace.tensor(p + "attn.out");
}

Tensor StrategyRunner::mlpSublayer(int layer, const Tensor &y1) const
{
    const std::string p = names::layerPrefix(layer);
    Trace trace;
    trace.put(p + "out1", {}, -1, y1);
    runOps(trace, opIndex(p + "ln_2"), opIndex(p + "out2"), MemoryPhase::Forward, {p + "mlp.down"});
    return trace.tensor(p + "mlp.down");
}

} // namespace atlas
