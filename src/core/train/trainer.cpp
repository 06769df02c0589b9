#include "train/trainer.h"

#include "engine/engine.h"
#include "io/atomicfile.h"
#include "io/safetensors.h"
#include "train/backprop.h"
#include "train/evaluation.h"
#include "train/strategyrunner.h"
#include "util/error.h"
#include "util/parallel.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <random>
#include <sstream>

namespace atlas {

Trainer::Trainer(std::shared_ptr<Model> model, const std::string &task, TrainOptions options)
    : m_model(std::move(model))
    , m_task(Task::create(task, m_model->config.context))
    , m_taskName(task)
    , m_options(options)
    , m_optimizer(AdamWOptions {0.9f, 0.95f, 1e-8f, options.weightDecay, 1.0f})
    , m_rng(options.seed)
{
    if (options.steps < 1 || options.steps > TrainOptions::kMaxSteps || options.batch < 1
        || options.batch > TrainOptions::kMaxBatch || !(options.learningRate > 0) || options.warmupSteps < 0)
        throw Error("training needs steps in 1.." + std::to_string(TrainOptions::kMaxSteps) + ", batch in 1.."
            + std::to_string(TrainOptions::kMaxBatch) + ", warm-up steps >= 0 and a positive learning rate");
    validateMemoryOptions(options.memory, m_model->config);
    if (m_model->config.isEncoderDecoder()
        && (options.memory.strategy != MemoryStrategy::Plain || options.memory.ffnChunks > 1))
        throw Error("an encoder-decoder model trains with the plain memory strategy and whole feed-forward layers "
                    "(checkpointing, reversible blocks and FFN chunks are not implemented for two stacks)");
    if (m_model->config.funnel.active()
        && (options.memory.strategy != MemoryStrategy::Plain || options.memory.ffnChunks > 1 || options.layerDrop > 0
            || options.tokenRetention > 0))
        throw Error("a funnel model (Funnel-Transformer) trains with the plain memory strategy, whole feed-forward "
                    "layers, every block and every token (checkpointing, reversible blocks, FFN chunks, LayerDrop and "
                    "token retention are not implemented with its pooling)");
    if (m_model->config.sinkhorn.active()
        && (options.memory.strategy != MemoryStrategy::Plain || options.memory.ffnChunks > 1
            || options.tokenRetention > 0))
        throw Error("a Sinkhorn model trains with the plain memory strategy, whole feed-forward layers and every token "
                    "(checkpointing, reversible blocks, FFN chunks and token retention are not implemented with its "
                    "sorting)");
    if (m_model->config.act.enabled
        && (options.memory.strategy != MemoryStrategy::Plain || options.memory.ffnChunks > 1 || options.layerDrop > 0
            || options.tokenRetention > 0))
        throw Error("a model with adaptive computation time trains with the plain memory strategy, whole feed-forward "
                    "layers, every block and every token (checkpointing, reversible blocks, FFN chunks, LayerDrop and "
                    "token retention are not implemented with its halting)");
    if (!(options.layerDrop >= 0 && options.layerDrop <= TrainOptions::kMaxLayerDrop))
        throw Error("LayerDrop's rate must be in 0..0.9 (the probability of dropping each block)");
    if (options.layerDrop > 0
        && (m_model->config.reversible || m_model->config.isEncoderDecoder()
            || options.memory.strategy != MemoryStrategy::Plain))
        throw Error("LayerDrop trains a model of one stack without reversible blocks, with the plain memory strategy");
    if (!(options.tokenRetention == 0 || (options.tokenRetention > 0 && options.tokenRetention <= 1)))
        throw Error("the token retention rate must be in (0, 1] (the share kept after each layer), or 0 for none");
    if (options.tokenRetention > 0) // the engine's refusals, before the first step
        checkTokenRetention(m_model->config, TokenRetention::geometric(options.tokenRetention, m_model->config.layers),
            m_model->config.context, false, options.layerDrop > 0);
    m_schedule = {options.learningRate, options.learningRate / 10, options.warmupSteps, options.steps};
}

StepReport Trainer::step()
{
    const auto start = std::chrono::steady_clock::now();
    std::vector<Example> batch;
    size_t tokens = 0;
    for (int i = 0; i < m_options.batch; ++i) {
        batch.push_back(m_task->sample(m_rng, false));
        tokens += batch.back().tokens.size();
    }
    std::vector<std::vector<int>> dropped(batch.size()); // drawn in example order: the same bits on any thread
    if (m_options.layerDrop > 0) {
        std::bernoulli_distribution drop(m_options.layerDrop);
        for (std::vector<int> &layers : dropped)
            for (int l = 0; l < m_model->config.layers; ++l)
                if (drop(m_rng))
                    layers.push_back(l);
    }
    std::vector<uint64_t> sortingNoise(batch.size(), 0); // Sinkhorn attention's Gumbel noise, a seed per example
    if (m_model->config.sinkhorn.active())
        for (uint64_t &seed : sortingNoise)
            seed = m_rng() | 1;
    std::vector<Gradients> perExample(batch.size());
    const std::shared_ptr<const Model> model = m_model;
    parallelFor(static_cast<int64_t>(batch.size()), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            Input input = inputOf(batch[size_t(i)]);
            input.droppedLayers = dropped[size_t(i)];
            input.sortingNoiseSeed = sortingNoise[size_t(i)];
            if (m_options.tokenRetention > 0) {
                input.retention = TokenRetention::geometric(m_options.tokenRetention, model->config.layers);
                const std::vector<int> &targets = batch[size_t(i)].targets;
                for (size_t t = 0; t < targets.size(); ++t)
                    if (targets[t] >= 0)
                        input.retention.protect.push_back(int(t));
            }
            // Two stacks, a funnel's pooling, Sinkhorn's sorting or adaptive computation time: a traced run, then
            // backprop through it (no memory strategy).
            if (model->config.isEncoderDecoder() || model->config.funnel.active() || model->config.sinkhorn.active()
                || model->config.act.enabled) {
                Engine engine(model, input);
                engine.runToEnd();
                accumulateGradients(perExample[size_t(i)], *model, input, engine.trace(), batch[size_t(i)].targets);
                continue;
            }
            StrategyRunner runner(*model, input, m_options.memory);
            runner.forward();
            runner.backward(batch[size_t(i)].targets, perExample[size_t(i)]);
        }
    });
    Gradients total = std::move(perExample[0]);
    for (size_t i = 1; i < perExample.size(); ++i) {
        total.loss += perExample[i].loss;
        total.routerLoss += perExample[i].routerLoss;
        total.spanLoss += perExample[i].spanLoss;
        total.ponderTime += perExample[i].ponderTime;
        for (auto &[name, g] : total.grads) {
            const Tensor &add = perExample[i].grads.at(name);
            Eigen::Map<Eigen::ArrayXf>(g.data(), g.numel())
                += Eigen::Map<const Eigen::ArrayXf>(add.data(), add.numel());
        }
    }
    const float scale = 1.0f / static_cast<float>(batch.size());
    for (auto &[name, g] : total.grads)
        Eigen::Map<Eigen::ArrayXf>(g.data(), g.numel()) *= scale;

    StepReport report;
    report.learningRate = m_schedule.at(m_step);
    report.gradientNorm = m_optimizer.step(m_model->parameters(), total.grads, report.learningRate);
    m_model->clampSpanFractions();
    m_model->tieSharedBlocks();
    report.loss = total.loss * scale;
    report.routerLoss = total.routerLoss * scale;
    report.spanLoss = total.spanLoss * scale;
    report.ponderTime = total.ponderTime * scale;
    report.step = ++m_step;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report.tokensPerSecond = double(tokens) / seconds;
    return report;
}

Evaluation Trainer::evaluate(int examples, uint64_t seed) const
{
    return evaluateOnTask(m_model, *m_task, examples, seed);
}

} // namespace atlas
