#pragma once

#include "model/model.h"
#include "train/adamw.h"
#include "train/evaluation.h"
#include "train/memorystrategy.h"
#include "train/task.h"

#include <memory>
#include <optional>
#include <random>
#include <string>

namespace atlas {

struct TrainOptions
{
    static constexpr int kMaxSteps = 10'000'000;
    static constexpr int kMaxBatch = 1024; // the Train panel's limit; a batch holds one trace per example
    int steps = 3000;
    int batch = 16; // examples per optimiser step
    float learningRate = 3e-3f; // peak of the schedule
    // A fine-tuning run's, when none is given (TrainingRun::from): a tenth, so that the start's weights move a short
    // way (typos from austen-mlm, 300 steps: 75.2 % of asked letters at 3e-4, 69.4 % at 3e-3; docs/models.md).
    static constexpr float kFineTuningLearningRate = 3e-4f;
    int warmupSteps = 100;
    float weightDecay = 0.01f;
    uint64_t seed = 1;
    MemoryOptions memory; // how each example's forward and backward pass trade memory for computation
    // LayerDrop (Fan et al. 2019): each example drops each block with this probability (its input passes on
    // unchanged), so that the model still works with blocks pruned. 0 = every block runs.
    float layerDrop = 0;
    static constexpr float kMaxLayerDrop = 0.9f;
    // PoWER-BERT's re-training (Goyal et al. 2020): every example runs with tokens eliminated after each layer at this
    // geometric rate (engine/tokenretention.h), its targets kept, so that the model learns to work with fewer tokens.
    // 0 = every token goes through (an encoder of one stack only).
    float tokenRetention = 0;
};

struct StepReport
{
    int step = 0; // steps done after this one
    float loss = 0; // mean cross-entropy of the batch
    float routerLoss = 0; // mean α·aux + β·z of the mixture-of-experts layers (0 without experts), not in loss
    float spanLoss = 0; // adaptive span's penalty λ · Σ_layers mean_h z_h (0 without spans), not in loss
    float ponderTime = 0; // adaptive computation time's mean N + R per token (0 without it); τ times it is not in loss
    float learningRate = 0;
    float gradientNorm = 0; // before clipping
    double tokensPerSecond = 0;
};

// Trains a model on a task with AdamW, one batch per step, both cores working on the batch's examples. Given
// the same task, options and seed, every step gives the same bits (examples are drawn in order; gradients are
// summed in example order whatever thread computed them).
class Trainer
{
public:
    Trainer(std::shared_ptr<Model> model, const std::string &task, TrainOptions options);
    // Continues from a checkpoint written by save(); throws atlas::Error naming the file when it is incomplete.
    // `memory`, when given, replaces the saved memory strategy (it changes what a step keeps, not what it computes).
    static std::unique_ptr<Trainer> resume(
        const std::string &directory, const std::optional<MemoryOptions> &memory = std::nullopt);

    StepReport step();
    Evaluation evaluate(int examples, uint64_t seed = 12345) const;
    // config.json + model.safetensors (a model directory the app opens), optimizer.safetensors, trainer.json,
    // saved as one set (train/checkpointdirectory.h): a crash leaves the previous checkpoint or this one, never a
    // mix. resume() validates every field, count and shape against the model and names what is wrong.
    void save(const std::string &directory) const;

    int stepCount() const { return m_step; }
    const Task &task() const { return *m_task; }
    const TrainOptions &options() const { return m_options; }
    std::shared_ptr<const Model> model() const { return m_model; }
    std::shared_ptr<const Model> snapshot() const { return std::make_shared<const Model>(*m_model); }

private:
    std::shared_ptr<Model> m_model;
    std::unique_ptr<Task> m_task;
    std::string m_taskName;
    TrainOptions m_options;
    LearningRateSchedule m_schedule;
    AdamW m_optimizer;
    std::mt19937_64 m_rng;
    int m_step = 0;
};

} // namespace atlas
