#pragma once

#include "train/trainer.h"
#include "train/trainingrunoptions.h"

#include <memory>
#include <string>
#include <vector>

namespace atlas {

// A new training run as `train`, a lesson's train action and the Train panel describe it: a task, the optimiser's
// options and any changes to the task's model shape, each set through one table (train/trainingrunoptions.h). All
// start a run through newTrainer, so they cannot drift apart.
struct TrainingRun
{
    std::string task = "reverse";
    TrainOptions options;
    // Fine-tuning: start from this model's weights (a built-in model's name or a directory) instead of random ones. Its
    // shape is the run's (no shape option may be given) and must read the task's tokens: the same vocabulary, the
    // same direction of attention, one stack, a context that holds the task's examples.
    std::string from;
    int layers = 0, heads = 0, dModel = 0; // 0 keeps the task's own (d_ff follows d_model: 4·d_model)
    // n_positions and the windows' length of a task of corpus windows (chars, words, mlm); 0: the task's own
    int context = 0;
    bool scaleEmbeddings = false; // atlas_embedding_scale √d_model, as Vaswani et al.
    bool reversible = false; // reversible blocks (atlas_reversible, docs/models.md)
    bool act = false; // atlas_act: adaptive computation time over the blocks
    double actPonderCost = 0.01; // atlas_act_ponder_cost τ, with act
    bool sharedBlocks = false; // atlas_shared_blocks: one block's weights at every layer
    bool timestepSignal = false; // atlas_timestep_signal, with sharedBlocks
    std::string positions; // atlas_positions (docs/models.md); empty = learned, as every built-in model
    std::string normaliser; // atlas_attention_normaliser; empty = softmax
    int spanRamp = 0; // atlas_span_ramp: adaptive attention span with a ramp of R tokens (0: none)
    double spanPenalty = 1e-3; // atlas_span_penalty λ, with spans
    // Every span's starting fraction v of n_positions: 0 grows the spans from nothing (the paper's), 1 starts at the
    // whole context and lets the penalty shrink the spans no head needs (a task whose reach comes all at once).
    double spanInit = 0;
    int experts = 0; // atlas_experts: a mixture of E experts in every layer's FFN (0: dense)
    int expertTopK = 1; // atlas_expert_top_k
    double capacityFactor = 0; // atlas_capacity_factor; 0 keeps the config's default (1.25)
    // Funnel-Transformer (model/funnel.h): the layers of each group, pooled between groups, and the decoder's
    // full-length layers after them; the model has their sum of layers. Empty: no funnel.
    std::vector<int> funnelBlocks;
    int funnelDecoderLayers = 1;
    int sinkhornBlock = 0; // atlas_sinkhorn_block: Sparse Sinkhorn attention over blocks of this many tokens (0: none)
    // FNet (atlas_fourier_layers): "all" or the layers, "0,1", whose attention becomes a Fourier transform; empty: none
    std::string fourier;
    std::string description; // the model's description; empty takes the task's summary
    // "llama": the Llama layout instead of GPT-2's (RMSNorm, rotate-half RoPE, SwiGLU of width ⌈8/3·d_model⌉ to a
    // multiple of 8, no biases, an untied head), with `kvHeads` K/V heads (0: one per query head).
    std::string family;
    int kvHeads = 0;
};

// The task's model shape with the run's changes, checked (ModelConfig::validate, and that a training step fits in
// memory). Throws atlas::Error for an unknown task, a combination of options the layouts do not have, or a shape
// the config rejects. `withSample`: with the model's sample input (ModelConfig::sample), a held-out example of the task
// as text, which a task reading a corpus through its tokenizer takes a moment to make the first time; the Train
// panel's checks on the GUI thread leave it out (the run's worker makes it).
ModelConfig trainingModelConfig(const TrainingRun &run, bool withSample = true);
// A fine-tuning run (`from` set) whose learning rate was not given takes TrainOptions::kFineTuningLearningRate;
// `train`, a lesson's train action and the Train panel all apply it.
void applyFineTuningLearningRate(TrainingRun &run, bool learningRateGiven);
// Why a run of `task` cannot start from a model of config `model` (fine-tuning: TrainingRun::from); empty when it can.
std::string startingModelProblem(const ModelConfig &model, const Task &task);
// The built-in models a run of `task` can start from, in builtinModels()' order.
std::vector<std::string> startingModels(const Task &task);
// A model of trainingModelConfig(run), initialised as GPT-2 from options.seed (Model::random), named after the
// task, in a Trainer.
std::unique_ptr<Trainer> newTrainer(const TrainingRun &run);

} // namespace atlas
