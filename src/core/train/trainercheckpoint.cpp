// Trainer::save and Trainer::resume: a checkpoint is a model directory plus the optimiser's moments and the
// trainer's position in its example stream, saved as one set (train/checkpointdirectory.h).
#include "train/trainer.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "io/safetensors.h"
#include "train/checkpointdirectory.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <climits>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

namespace atlas {

namespace fs = std::filesystem;

namespace {

// trainer.json's seed: any 64-bit unsigned integer.
uint64_t readSeed(const nlohmann::json &j, const std::string &source)
{
    if (!j.contains("seed") || !j["seed"].is_number_integer()
        || (!j["seed"].is_number_unsigned() && j["seed"].get<int64_t>() < 0))
        throw Error(source + ": key 'seed' must be a non-negative integer");
    return j["seed"].get<uint64_t>();
}

std::mt19937_64 readRng(const nlohmann::json &j, const std::string &source)
{
    std::istringstream text(jsonString(j, "rng", source));
    std::mt19937_64 rng;
    text >> rng;
    const bool read = !text.fail();
    std::string rest;
    text >> rest;
    if (!read || !rest.empty())
        throw Error(source + ": key 'rng': not the state of a std::mt19937_64 (312 numbers)");
    return rng;
}

// The moments must be exactly m.<p> and v.<p> for every parameter p, each of p's shape as model.safetensors keeps
// it (`conv1d`: GPT-2's matrices as [in, out]), finite, v >= 0; none at all before the first step.
void checkMoments(const std::map<std::string, Tensor> &state, const Model &model, const std::set<std::string> &conv1d,
    int step, const std::string &source)
{
    const auto params = model.parameters();
    if (step == 0 && state.empty())
        return;
    for (const auto &[name, p] : params)
        for (const char *kind : {"m.", "v."}) {
            const auto it = state.find(kind + name);
            if (it == state.end())
                throw Error(source + ": tensor '" + kind + name + "' is missing (every parameter has two moments)");
            const Shape stored = conv1d.contains(name) ? Shape {p->dim(1), p->dim(0)} : p->shape();
            if (it->second.shape() != stored)
                throw Error(source + ": tensor '" + kind + name + "' has shape "
                    + Tensor::shapeString(it->second.shape()) + ", the parameter has " + Tensor::shapeString(stored));
            const float *x = it->second.data();
            for (int64_t i = 0; i < it->second.numel(); ++i)
                if (!std::isfinite(x[i]) || (kind[0] == 'v' && x[i] < 0))
                    throw Error(source + ": tensor '" + kind + name + "' holds " + std::to_string(x[i]) + " at element "
                        + std::to_string(i) + " (moments are finite, second moments >= 0)");
        }
    for (const auto &[key, t] : state)
        if (key.size() < 3 || !params.count(key.substr(2)))
            throw Error(source + ": tensor '" + key + "' belongs to no parameter of the model");
}

} // namespace

void Trainer::save(const std::string &directory) const
{
    const std::string stamp = std::to_string(m_step);
    // The moments in the layout model.safetensors keeps each parameter in (GPT-2's matrices as Conv1D's [in, out]).
    std::map<std::string, Tensor> state = m_optimizer.state();
    m_model->transposeConv1dMatrices(state, 2);
    std::map<std::string, const Tensor *> stateRefs;
    for (const auto &[name, t] : state)
        stateRefs[name] = &t;
    std::ostringstream rng;
    rng << m_rng;
    const nlohmann::json j = {
        {"task", m_taskName},
        {"step", m_step},
        {"steps", m_options.steps},
        {"batch", m_options.batch},
        {"learning_rate", m_options.learningRate},
        {"warmup_steps", m_options.warmupSteps},
        {"weight_decay", m_options.weightDecay},
        {"seed", m_options.seed},
        {"rng", rng.str()},
        {"optimizer_steps", m_optimizer.stepCount()},
        {"memory_strategy", memoryStrategyName(m_options.memory.strategy)},
        {"checkpoint_every", m_options.memory.checkpointEvery},
        {"ffn_chunks", m_options.memory.ffnChunks},
        {"layer_drop", m_options.layerDrop},
        {"token_retention", m_options.tokenRetention},
    };
    const CheckpointDirectory checkpoints(directory);
    const std::string staged = checkpoints.stage();
    try {
        m_model->save(staged, {{"step", stamp}});
        if (const std::string tokenizer = m_task->tokenizerFile(); !tokenizer.empty()) // read with the model
            writeFileAtomically(
                (fs::path(staged) / "tokenizer.model").string(), readFile(tokenizer, limits::kTokenizerBytes));
        writeSafetensors((fs::path(staged) / "optimizer.safetensors").string(), stateRefs, {{"step", stamp}});
        writeFileAtomically((fs::path(staged) / "trainer.json").string(), j.dump(2) + "\n");
        checkpoints.commit(staged, m_step);
    } catch (...) {
        std::error_code ec;
        fs::remove_all(staged, ec); // the previous checkpoint stays current
        throw;
    }
}

std::unique_ptr<Trainer> Trainer::resume(const std::string &directory, const std::optional<MemoryOptions> &memory)
{
    const std::string stateDir = CheckpointDirectory(directory).current();
    const std::string source = (fs::path(stateDir) / "trainer.json").string();
    const nlohmann::json j = parseJson(readFile(source, limits::kSpecBytes), source);
    if (!j.is_object())
        throw Error(source + ": expected a JSON object (a trainer checkpoint)");
    TrainOptions o;
    o.steps = int(jsonInteger(j, "steps", 1, TrainOptions::kMaxSteps, source));
    o.batch = int(jsonInteger(j, "batch", 1, TrainOptions::kMaxBatch, source));
    o.learningRate = float(jsonNumber(j, "learning_rate", 1e-12, 100.0, source));
    o.warmupSteps = int(jsonInteger(j, "warmup_steps", 0, TrainOptions::kMaxSteps, source));
    o.weightDecay = float(jsonNumber(j, "weight_decay", 0.0, 100.0, source));
    o.seed = readSeed(j, source);
    if (j.contains("layer_drop")) // checkpoints from before LayerDrop trained every block
        o.layerDrop = float(jsonNumber(j, "layer_drop", 0.0, TrainOptions::kMaxLayerDrop, source));
    if (j.contains("token_retention")) // checkpoints from before PoWER-BERT kept every token
        o.tokenRetention = float(jsonNumber(j, "token_retention", 0.0, 1.0, source));
    const int step = int(jsonInteger(j, "step", 0, o.steps, source));
    const int64_t optimizerSteps = jsonInteger(j, "optimizer_steps", 0, INT_MAX, source);
    if (optimizerSteps != step) // one optimiser step per training step
        throw Error(source + ": key 'optimizer_steps' is " + std::to_string(optimizerSteps) + ", expected "
            + std::to_string(step) + " (the key 'step')");
    const std::string task = jsonString(j, "task", source);
    std::mt19937_64 rng = readRng(j, source);
    if (j.contains("memory_strategy")) // checkpoints from before the memory lab trained the plain way
        o.memory.strategy = parseMemoryStrategy(jsonString(j, "memory_strategy", source), source + ": memory_strategy");
    if (j.contains("checkpoint_every"))
        o.memory.checkpointEvery = int(jsonInteger(j, "checkpoint_every", 0, INT_MAX, source));
    if (j.contains("ffn_chunks"))
        o.memory.ffnChunks = int(jsonInteger(j, "ffn_chunks", 1, INT_MAX, source));
    if (memory)
        o.memory = *memory;

    auto model = std::make_shared<Model>(Model::load(stateDir));
    model->directory = directory;
    model->name = fs::path(directory).filename().empty() ? fs::path(directory).parent_path().filename().string()
                                                         : fs::path(directory).filename().string();
    if (!memory) { // the saved settings: a problem names this file's keys, not the command line's options
        MemoryOptionFields fields;
        fields.strategy = source + ": key 'memory_strategy'";
        fields.checkpointEvery = source + ": key 'checkpoint_every'";
        fields.ffnChunks = source + ": key 'ffn_chunks'";
        validateMemoryOptions(o.memory, model->config, model->config.context, fields);
    }
    std::unique_ptr<Trainer> trainer;
    try {
        trainer = std::make_unique<Trainer>(model, task, o);
    } catch (const Error &e) {
        throw Error(source + ": " + e.what());
    }
    // A task that reads text through its own tokenizer must read it through the one the run started with: the model's
    // ids mean those pieces.
    if (const std::string tokenizer = trainer->m_task->tokenizerFile(); !tokenizer.empty()) {
        const std::string saved = (fs::path(stateDir) / "tokenizer.model").string();
        if (!fs::is_regular_file(saved))
            throw Error(saved + ": missing; the task '" + task
                + "' reads its text through a tokenizer, and a run of it " + "keeps that tokenizer beside its model");
        if (readFile(saved, limits::kTokenizerBytes) != readFile(tokenizer, limits::kTokenizerBytes))
            throw Error(saved + ": not the tokenizer the task '" + task + "' reads now (" + tokenizer
                + "): the run was started with another, whose ids its model learned; resuming would read the "
                + "text as other pieces. Start a new run");
    }
    trainer->m_step = step;
    trainer->m_rng = rng;
    auto requireStep = [&](const SafetensorsFile &f) {
        if (f.metadata().count("step") == 0 || f.metadata().at("step") != std::to_string(step))
            throw Error(f.path() + ": written at another step than trainer.json (an interrupted save?)");
    };
    requireStep(SafetensorsFile((fs::path(stateDir) / "model.safetensors").string()));
    const SafetensorsFile file((fs::path(stateDir) / "optimizer.safetensors").string());
    requireStep(file);
    std::map<std::string, Tensor> state;
    for (const auto &[name, entry] : file.entries())
        state[name] = file.tensor(name);
    const std::set<std::string> conv1d = model->conv1dParameterNames();
    checkMoments(state, *model, conv1d, step, file.path());
    model->transposeConv1dMatrices(state, 2);
    trainer->m_optimizer.restoreState(state, step);
    return trainer;
}

} // namespace atlas
