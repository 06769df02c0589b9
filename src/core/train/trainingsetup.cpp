#include "train/trainingsetup.h"

#include "io/atomicfile.h"
#include "io/limits.h"
#include "io/modelfile.h"
#include "model/builtinmodels.h"
#include "model/fourierlayers.h"
#include "model/funnel.h"
#include "tokenize/sentencepiecetokenizer.h"
#include "tokenize/specialtokenstokenizer.h"
#include "train/memorystrategy.h"
#include "util/error.h"
#include "util/memorycheck.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>

namespace atlas {

namespace {

// The task's model with the run's shape and layout options.
ModelConfig shapedConfig(const TrainingRun &run, const Task &task)
{
    ModelConfig config = task.modelConfig();
    if (run.layers > 0)
        config.layers = run.layers;
    if (run.heads > 0)
        config.heads = run.heads;
    if (run.dModel > 0) {
        config.dModel = run.dModel;
        config.dFF = 4 * run.dModel;
    }
    config.reversible = run.reversible;
    config.act.enabled = run.act;
    config.act.ponderCost = float(run.actPonderCost);
    config.shared.enabled = run.sharedBlocks;
    config.shared.timestepSignal = run.timestepSignal;
    if (!run.funnelBlocks.empty()) {
        config.funnel = {run.funnelBlocks, run.funnelDecoderLayers};
        const int layers = config.funnel.encoderLayers() + run.funnelDecoderLayers;
        if (run.layers > 0 && run.layers != layers)
            throw Error("layers " + std::to_string(run.layers) + ": the funnel's groups and decoder have "
                + std::to_string(layers) + " layers (leave layers out)");
        config.layers = layers;
    }
    config.sinkhorn.block = run.sinkhornBlock;
    if (!run.fourier.empty())
        config.fourier.layers = parseFourierLayers(run.fourier, config.layers, "fourier");
    if (run.scaleEmbeddings)
        config.embeddingScale = std::sqrt(float(config.dModel));
    if (!run.positions.empty())
        config.positions = positionKindArgument(run.positions, "positions");
    if (!run.normaliser.empty())
        config.normaliser = normaliserArgument(run.normaliser, "normaliser");
    config.spanRamp = run.spanRamp;
    if (run.spanRamp > 0)
        config.spanPenalty = float(run.spanPenalty);
    config.experts = run.experts;
    config.expertTopK = run.expertTopK;
    if (run.capacityFactor > 0)
        config.capacityFactor = float(run.capacityFactor);
    if (run.family == "bert") { // BERT's layout: post-LN, learned positions, segments, embedding LayerNorm, MLM head
        const bool relative = run.positions == "shaw";
        if (config.causal || run.kvHeads > 0 || (!run.positions.empty() && !relative) || config.hasExperts()
            || config.reversible)
            throw Error("family bert: BERT's layout is a bidirectional encoder with learned absolute positions, or "
                        "with positions shaw its relative_key (a task such as mlm; no other positions, no kv-heads, "
                        "experts or reversible blocks)");
        config.family = Family::Bert;
        config.modelType = "bert";
        config.layerNorm = LayerNormPlacement::Post;
        config.positions = relative ? PositionKind::Shaw : PositionKind::Learned;
        if (relative) { // BertSelfAttention's distance_embedding: a key per distance, i − j, across the context
            config.relativeClip = config.context - 1;
            config.relativeKeySign = -1;
        }
        config.activation = Activation::GeluErf;
        config.tokenTypes = 2;
        config.lnEpsilon = 1e-12f;
    } else if (!run.family.empty() && run.family != "gpt2") {
        checkTrainableFamily(run.family, "family");
        config.family = Family::Llama;
        config.modelType = run.family;
        if (run.family == "qwen3") // QK-norm on each head's queries and keys
            config.qkNorm = QkNorm::Heads;
        if (run.family == "olmo2") { // each sub-layer's output normalised, none before; QK-norm over the projections
            config.qkNorm = QkNorm::Projections;
            config.layerNorm = LayerNormPlacement::AfterSublayer;
        }
        config.norm = NormKind::RmsNorm;
        config.gatedFfn = true;
        config.activation = Activation::Silu;
        config.dFF = (8 * config.dModel / 3 + 7) / 8 * 8; // SwiGLU's three matrices cost what two of 4·d_model do
        if (run.positions.empty())
            config.positions = PositionKind::RopeHalf;
        config.qkvBias = config.outBias = config.mlpBias = false;
        config.tiedHead = false;
        config.kvHeads = run.kvHeads;
        if (run.family == "smollm3") { // SmolLM3Config's no_rope_layer_interval: every fourth layer is NoPE
            if (!config.rotatesQueriesAndKeys())
                throw Error("family smollm3: its NoPE layers are the ones left out of RoPE, which the others use; "
                            "leave positions out or give rope-half");
            for (int i = 3; i < config.layers; i += 4)
                config.noRopeLayers.push_back(i);
        }
        if (run.family == "phi3") { // Phi3Config's fused qkv_proj and gate_up_proj (fusesProjections), and RoPE on
            // the first three quarters of each head, as Phi-4-mini's partial_rotary_factor (to an even width)
            if (!config.rotatesQueriesAndKeys())
                throw Error("family phi3: RoPE turns part of each head; leave positions out or give rope-half");
            config.rotaryDims = std::max(2, 3 * config.headDim() / 4 / 2 * 2);
        }
        if (run.family == "gemma2") { // Gemma2Config's choices, the window scaled to this context
            config.layerNorm = LayerNormPlacement::Sandwich;
            config.normAddsOne = true;
            config.embeddingScale = std::sqrt(float(config.dModel));
            config.activation = Activation::GeluTanh;
            config.queryScaleBase = float(config.headDim()); // Gemma 2 2B and 9B: query_pre_attn_scalar = head_dim
            config.attentionSoftcap = 50.0f;
            config.logitSoftcap = 30.0f;
            config.tiedHead = true;
        }
        if (run.family == "gpt_oss") { // GptOssConfig's choices at this scale (RoPE without YaRN: nothing to stretch)
            config.attentionSinks = true;
            config.qkvBias = config.outBias = config.mlpBias = true;
            config.activation = Activation::QuickGelu;
            config.gluClamp = 7.0f;
            config.dFF = config.dModel; // intermediate_size = hidden_size, as gpt-oss's
            if (run.experts == 0) { // gpt-oss's experts are not optional: 4 here, 2 per token
                config.experts = 4;
                config.expertTopK = 2;
            }
            config.droplessRouting = true;
        }
        if (run.family == "gemma2" || run.family == "gpt_oss") { // a window on the even layers, the odd ones global:
            // Gemma 2 sees 4096 of its 8192 positions there, gpt-oss 128; here half the context
            config.slidingWindow = std::max(1, config.context / 2);
            for (int i = 0; i < config.layers; i += 2)
                config.windowedLayers.push_back(i);
        }
    }
    return config;
}

// The configuration of the model `from` names, as loading it gives (a Hugging Face BERT's or T5's depends on the
// names of its weights and on its tokenizer), kept while its files are unchanged: the Train panel asks again at every
// field's change, on the GUI thread.
ModelConfig startModelConfig(const std::string &from)
{
    const std::string where = resolveModel(from);
    std::string stamp = fileStamp(where);
    if (std::filesystem::is_directory(where))
        for (const char *file : {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"})
            stamp += std::string(",") + fileStamp((std::filesystem::path(where) / file).string());
    static std::mutex mutex;
    static std::map<std::string, std::pair<std::string, ModelConfig>> loaded; // where -> stamp, config
    {
        const std::lock_guard lock(mutex);
        if (auto it = loaded.find(where); it != loaded.end() && it->second.first == stamp)
            return it->second.second;
    }
    ModelConfig config = loadModel(from)->config;
    const std::lock_guard lock(mutex);
    loaded.insert_or_assign(where, std::pair {stamp, config});
    return config;
}

// The model run.from names, checked to read the task's examples as the task's own model would.
ModelConfig startingConfig(const TrainingRun &run, const Task &task)
{
    for (const TrainingRunOption &o : trainingRunOptions())
        if (o.group == TrainingRunOption::Group::Model && o.name != "from" && isTrainingRunOptionSet(run, o))
            throw Error("from " + run.from + ": the model fixes the shape and layout; leave " + o.name + " out");
    ModelConfig config = startModelConfig(run.from);
    if (const std::string problem = startingModelProblem(config, task); !problem.empty())
        throw Error("from " + run.from + ": " + problem);
    return config;
}

} // namespace

void applyFineTuningLearningRate(TrainingRun &run, bool learningRateGiven)
{
    if (!run.from.empty() && !learningRateGiven)
        run.options.learningRate = TrainOptions::kFineTuningLearningRate;
}

std::string startingModelProblem(const ModelConfig &model, const Task &task)
{
    const ModelConfig wanted = task.modelConfig();
    const std::string refused = "task " + task.name() + " ";
    if (model.isEncoderDecoder() != wanted.isEncoderDecoder())
        return refused + (wanted.isEncoderDecoder() ? "trains an encoder–decoder" : "trains a model of one stack");
    if (model.causal != wanted.causal)
        return refused
            + (wanted.causal ? "predicts the next token, and the model attends both ways"
                             : "reads the text both ways, and the model is causal");
    if (model.vocab != wanted.vocab || model.specialTokens != wanted.specialTokens)
        return refused + "reads a vocabulary of " + std::to_string(wanted.vocab)
            + " tokens with its own special tokens; the model has " + std::to_string(model.vocab);
    if (model.context < wanted.context)
        return refused + "writes examples of up to " + std::to_string(wanted.context)
            + " tokens, and the model's context is " + std::to_string(model.context);
    return {};
}

std::vector<std::string> startingModels(const Task &task)
{
    std::vector<std::string> names;
    for (const BuiltinModel &m : builtinModels()) {
        const std::string path = m.directory + "/config.json";
        if (!std::filesystem::is_regular_file(path))
            continue; // a GGUF file: no built-in one shares a task's vocabulary
        try {
            if (startingModelProblem(ModelConfig::fromJson(readModelFile(path, limits::kSpecBytes), path), task)
                    .empty())
                names.push_back(m.name);
        } catch (const Error &) { // a config this build cannot read is no start
        }
    }
    return names;
}

ModelConfig trainingModelConfig(const TrainingRun &run, bool withSample)
{
    checkTrainingRunOptionsNeeded(run);
    const std::unique_ptr<Task> task = Task::create(run.task, run.context);
    if (run.context > 0 && !task->takesContext())
        throw Error("context: the examples of task " + run.task
            + " have lengths of their own; a context is for the tasks of windows of the novel, chars, words and mlm");
    ModelConfig config = run.from.empty() ? shapedConfig(run, *task) : startingConfig(run, *task);
    config.description = run.description.empty() ? task->summary() : run.description;
    if (withSample) {
        std::mt19937_64 rng(7); // a held-out example, the same for every run of the task: the model's sample input
        const Example example = task->sample(rng, true);
        // Tasks use bytes as tokens, and the config's special tokens by name ([MASK]), or a tokenizer of their own: the
        // text the app's tokenizer reads.
        std::unique_ptr<Tokenizer> tokenizer;
        if (task->tokenizerFile().empty())
            tokenizer
                = std::make_unique<SpecialTokensTokenizer>(std::make_unique<ByteTokenizer>(), config.specialTokens);
        else
            tokenizer = std::make_unique<SentencePieceTokenizer>(task->tokenizerFile());
        config.sample = tokenizer->decode(example.source.empty() ? example.tokens : example.source);
        if (!example.source.empty())
            config.decoderSample = tokenizer->decode(example.tokens);
    }
    config.task = task->name();
    config.validate("train --task " + run.task);
    checkFitsInMemory(
        estimatedTrainingBatchBytes(config, config.context, run.options.batch, run.options.memory, config.context),
        "training a model of " + std::to_string(config.layers) + " layers of width " + std::to_string(config.dModel)
            + (config.experts > 0 ? " with " + std::to_string(config.experts) + " experts" : std::string()) + " ("
            + std::to_string(Model::parameterCountOf(config)) + " parameters, with their gradients, AdamW's moments "
            + "and the activations of the batch's sequences in flight) on " + std::to_string(config.context)
            + " tokens a sequence");
    if (!(run.spanInit >= 0 && run.spanInit <= 1))
        throw Error("span-init is a fraction of the context, in 0..1");
    return config;
}

std::unique_ptr<Trainer> newTrainer(const TrainingRun &run)
{
    const ModelConfig config = trainingModelConfig(run);
    auto model = std::make_shared<Model>(
        run.from.empty() ? Model::random(config, run.options.seed) : Model(*loadModel(run.from)));
    model->config = config;
    model->name = run.task;
    if (!run.from.empty())
        return std::make_unique<Trainer>(model, run.task, run.options);
    for (BlockWeights &b : model->blocks)
        std::fill(b.weight(BlockPart::SpanFraction).values().begin(), b.weight(BlockPart::SpanFraction).values().end(),
            float(run.spanInit));
    return std::make_unique<Trainer>(model, run.task, run.options);
}

} // namespace atlas
