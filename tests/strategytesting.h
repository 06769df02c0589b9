#pragma once

// Shared by the memory-strategy tests (tst_memorystrategies, tst_reversibleblocks): small random models, token
// sequences, a training step's gradients under a strategy, and the ways two sets of gradients are compared.
#include "engine/input.h"
#include "model/model.h"
#include "train/backprop.h"
#include "train/strategyrunner.h"

#include <QString>
#include <QtGlobal>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace atlas::testing {

inline ModelConfig smallConfig(int layers, bool reversible, LayerNormPlacement ln = LayerNormPlacement::Pre)
{
    ModelConfig c;
    c.layers = layers;
    c.heads = 2;
    c.dModel = 16;
    c.dFF = 48;
    c.vocab = 32;
    c.context = 32;
    c.layerNorm = ln;
    c.reversible = reversible;
    c.tokenizer = "gpt2";
    return c;
}

// GPT-2's initialisation scaled up, so that every sub-layer changes its stream noticeably (at std 0.02 the
// blocks are close to the identity and a rounding difference would hardly show).
inline std::shared_ptr<Model> randomModel(const ModelConfig &c, uint64_t seed, float scale = 8.0f)
{
    auto m = std::make_shared<Model>(Model::random(c, seed));
    for (auto &[name, t] : m->parameters())
        if (t->rank() == 2)
            Eigen::Map<Eigen::ArrayXf>(t->data(), t->numel()) *= scale;
    return m;
}

struct Sequence
{
    Input input;
    std::vector<int> targets;
};

inline Sequence sequence(int T, int vocab, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    Sequence s;
    for (int t = 0; t < T; ++t)
        s.input.tokens.push_back(int(rng() % uint64_t(vocab)));
    for (int t = 0; t < T; ++t)
        s.targets.push_back(t + 1 < T ? s.input.tokens[size_t(t + 1)] : -1);
    return s;
}

inline Gradients run(const Model &model, const Sequence &s, MemoryOptions options, bool *storeEmpty = nullptr)
{
    StrategyRunner runner(model, s.input, options);
    runner.forward();
    Gradients g;
    runner.backward(s.targets, g);
    if (storeEmpty) {
        *storeEmpty = runner.store().entries().empty();
        for (const auto &e : runner.store().entries())
            qWarning("left in the store: %s", e.name.c_str());
    }
    return g;
}

inline MemoryOptions options(MemoryStrategy strategy, int every = 0, int chunks = 1)
{
    MemoryOptions o;
    o.strategy = strategy;
    o.checkpointEvery = every;
    o.ffnChunks = chunks;
    return o;
}

// Empty when every gradient has the same bits.
inline QString bitDifference(const Gradients &a, const Gradients &b)
{
    if (a.loss != b.loss)
        return QString("loss %1 vs %2").arg(a.loss).arg(b.loss);
    if (a.grads.size() != b.grads.size())
        return "different parameter sets";
    for (const auto &[name, g] : a.grads) {
        const Tensor &h = b.grads.at(name);
        if (g.shape() != h.shape() || !std::equal(g.data(), g.data() + g.numel(), h.data()))
            return QString::fromStdString(name) + " differs";
    }
    return {};
}

} // namespace atlas::testing
