// Trainer::save and Trainer::resume: a checkpoint is a model directory plus the optimiser's moments and the
// trainer's position in its example stream.
#include "train/trainer.h"

#include "io/atomicfile.h"
#include "io/safetensors.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

namespace atlas {

namespace fs = std::filesystem;

void Trainer::save(const std::string &directory) const
{
    const std::string stamp = std::to_string(m_step);
    std::map<std::string, Tensor> state = m_optimizer.state();
    std::map<std::string, const Tensor *> stateRefs;
    for (const auto &[name, t] : state)
        stateRefs[name] = &t;
    m_model->save(directory, {{"step", stamp}});
    writeSafetensors((fs::path(directory) / "optimizer.safetensors").string(), stateRefs, {{"step", stamp}});
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
    };
    writeFileAtomically((fs::path(directory) / "trainer.json").string(), j.dump(2) + "\n");
}

std::unique_ptr<Trainer> Trainer::resume(const std::string &directory, const std::optional<MemoryOptions> &memory)
{
    const std::string statePath = (fs::path(directory) / "trainer.json").string();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(readFile(statePath));
        TrainOptions o;
        o.steps = j.at("steps");
        o.batch = j.at("batch");
        o.learningRate = j.at("learning_rate");
        o.warmupSteps = j.at("warmup_steps");
        o.weightDecay = j.at("weight_decay");
        o.seed = j.at("seed");
        o.memory.strategy = parseMemoryStrategy(j.value("memory_strategy", "plain"), statePath + ": memory_strategy");
        o.memory.checkpointEvery = j.value("checkpoint_every", 0);
        o.memory.ffnChunks = j.value("ffn_chunks", 1);
        if (memory)
            o.memory = *memory;
        auto model = std::make_shared<Model>(Model::load(directory));
        auto trainer = std::make_unique<Trainer>(model, j.at("task").get<std::string>(), o);
        trainer->m_step = j.at("step");
        std::istringstream rng(j.at("rng").get<std::string>());
        rng >> trainer->m_rng;
        auto requireStep = [&](const SafetensorsFile &f) {
            if (f.metadata().count("step") == 0 || f.metadata().at("step") != std::to_string(trainer->m_step))
                throw Error(f.path() + ": written at another step than trainer.json (an interrupted save?)");
        };
        requireStep(SafetensorsFile((fs::path(directory) / "model.safetensors").string()));
        const SafetensorsFile file((fs::path(directory) / "optimizer.safetensors").string());
        requireStep(file);
        std::map<std::string, Tensor> state;
        for (const auto &[name, entry] : file.entries())
            state[name] = file.tensor(name);
        trainer->m_optimizer.restoreState(state, j.at("optimizer_steps"));
        return trainer;
    } catch (const nlohmann::json::exception &e) {
        throw Error(statePath + ": not a trainer checkpoint: " + e.what());
    }
}

} // namespace atlas
