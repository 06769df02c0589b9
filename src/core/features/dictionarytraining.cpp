#include "features/dictionarytraining.h"

#include "engine/inputbuilder.h"
#include "io/stageddirectory.h"
#include "train/corpus.h"
#include "util/blasthreads.h"
#include "util/error.h"

#include <chrono>
#include <optional>

namespace atlas {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

DictionaryText builtInCorpusText()
{
    return {"built-in corpus", corpusTraining(), corpusHeldOut()};
}

DictionaryText textFileText(const std::string &path)
{
    std::string text = readInputText(path);
    std::string heldOut = text.substr(text.size() - text.size() / 10);
    text.resize(text.size() - heldOut.size());
    return {path, std::move(text), std::move(heldOut)};
}

HeldOutMeasures measureHeldOut(std::shared_ptr<const Model> model, const SparseAutoencoder &sae, const SaeSite &reads,
    const SaeSite &writes, const std::string &heldOut, int64_t maxRows, const std::atomic<bool> *cancel)
{
    HeldOutMeasures m;
    const Tensor held = siteActivations(model, reads, heldOut, maxRows, {}, cancel);
    m.rows = held.dim(0);
    m.quality = reads == writes ? saeQuality(sae, held)
                                : saeQuality(sae, held, siteActivations(model, writes, heldOut, maxRows, {}, cancel));
    if (model->config.causal && !model->config.isEncoderDecoder()) {
        m.hasLosses = true;
        m.losses = spliceLosses(model, sae, reads, writes, heldOut, 16 * int64_t(model->config.context), {}, cancel);
    }
    return m;
}

namespace {

// What identifies a run for --resume: everything that decides its steps but the checkpoints' spacing.
std::string runIdentity(const Model &model, const SaeSite &site, const std::optional<SaeSite> &writes,
    const SaeTrainingOptions &o, const DictionaryText &text, int64_t maxRows)
{
    nlohmann::json identity {{"model", model.name}, {"site", site.hookName()}, {"text", text.name}, {"rows", maxRows},
        {"architecture", saeArchitectureName(o.architecture)}, {"width", o.width}, {"k", o.k},
        {"sparsity", o.objective.sparsity}, {"bandwidth", o.objective.bandwidth}, {"threshold", o.initialThreshold},
        {"auxk", o.objective.auxiliary}, {"auxk_k", o.objective.auxiliaryK}, {"dead_after", o.deadAfterSteps},
        {"steps", o.steps}, {"batch", o.batch}, {"lr", o.learningRate}, {"seed", o.seed}};
    if (writes) // a transcoder's run (a dictionary's identity as it was before transcoders)
        identity["writes"] = writes->hookName();
    return identity.dump();
}

nlohmann::json trainingRecord(const SaeTrainingOptions &o, const DictionaryText &text, int64_t rows)
{
    return {{"steps", o.steps}, {"batch", o.batch}, {"learning_rate", o.learningRate}, {"seed", o.seed},
        {"sparsity_coefficient", o.objective.sparsity}, {"bandwidth", o.objective.bandwidth},
        {"auxk_coefficient", o.objective.auxiliary}, {"auxk_k", o.objective.auxiliaryK},
        {"dead_after_steps", o.deadAfterSteps}, {"rows", rows}, {"source", text.name}};
}

} // namespace

TrainedDictionary trainDictionary(std::shared_ptr<const Model> model, const SaeSite &site, const SaeTrainingOptions &o,
    const DictionaryText &text, int64_t maxRows, const DictionaryTrainingProgress &progress,
    const std::atomic<bool> *cancel, const WorkBudget &budget, const DictionaryCheckpoints &checkpoints,
    const std::optional<SaeSite> &writes)
{
    const SteadyBlasThreads steady; // a resumed run must give the bits of one that ran straight through
    (void)saeSiteTensor(*model, site);
    if (writes) {
        (void)saeSiteTensor(*model, *writes);
        refuseTranscoderSites(site, *writes);
        if (o.architecture == SaeArchitecture::TopK)
            throw Error("SAE training: SAELens has no TopK transcoder; train a standard or jumprelu one");
    }
    const std::string run = runIdentity(*model, site, writes, o, text, maxRows);
    using Resume = DictionaryCheckpoints::Resume;
    std::optional<SaeTrainingState> resume;
    if (checkpoints.resume != Resume::No && checkpoints.directory.empty())
        throw Error("SAE training: resume from where? (no directory)");
    if (checkpoints.resume == Resume::Yes) {
        resume = readSaeTrainingState(checkpoints.directory, run);
        if (!resume)
            throw Error(checkpoints.directory + " holds no unfinished run to resume (no training_state.safetensors)");
    } else if (checkpoints.resume == Resume::IfSameRun && savedTrainingRun(checkpoints.directory) == run) {
        resume = readSaeTrainingState(checkpoints.directory, run);
    }
    if (!checkpoints.directory.empty()) // refused now, not at the first checkpoint
        if (const std::string why = StagedDirectory::refusal(checkpoints.directory, "sae"); !why.empty())
            throw Error(why);
    TrainedDictionary out;
    const auto start = std::chrono::steady_clock::now();
    const Tensor rows = siteActivations(model, site, text.training, maxRows, progress.reading, cancel, budget);
    const Tensor targets
        = writes ? siteActivations(model, *writes, text.training, maxRows, progress.reading, cancel, budget) : Tensor();
    out.rows = rows.dim(0);
    out.readSeconds = secondsSince(start);
    const auto trainStart = std::chrono::steady_clock::now();
    const auto checkpoint = [&](const SaeTrainingState &state) {
        nlohmann::json training = trainingRecord(o, text, out.rows);
        training["step"] = state.step; // unfinished: the held-out measures come at the end
        saveSaeDirectory(
            checkpoints.directory, {unscaledDictionary(state), site, model->name, training, writes}, &state, run);
        if (progress.saved)
            progress.saved(state.step);
    };
    if (resume && progress.resumed)
        progress.resumed(resume->step);
    const SparseAutoencoder sae = trainSparseAutoencoder(
        rows, o,
        [&](const SaeTrainingStep &s) {
            out.curve.push_back(s.loss);
            return !progress.step || progress.step(s);
        },
        cancel, budget, resume ? &*resume : nullptr,
        checkpoints.directory.empty() ? std::function<void(const SaeTrainingState &)>() : checkpoint,
        writes ? &targets : nullptr);
    out.trainSeconds = secondsSince(trainStart);
    out.heldOut = measureHeldOut(
        model, sae, site, writes.value_or(site), text.heldOut, std::max<int64_t>(16, maxRows / 10), cancel);
    const HeldOutMeasures &h = out.heldOut;
    nlohmann::json splice = nullptr;
    if (h.hasLosses)
        splice = {{"tokens", h.losses.tokens}, {"clean", h.losses.clean}, {"spliced", h.losses.spliced},
            {"mean_ablated", h.losses.meanAblated}, {"recovered", h.losses.recovered()}};
    out.directory = {sae, site, model->name, trainingRecord(o, text, out.rows), writes};
    nlohmann::json &training = out.directory.training;
    if (resume)
        training["resumed_at_step"] = resume->step;
    training["held_out"] = {{"rows", h.rows}, {"unexplained_variance", h.quality.unexplained}, {"l0", h.quality.l0},
        {"dead", h.quality.dead}, {"dense", h.quality.dense}, {"loss", splice}};
    training["seconds"] = out.trainSeconds;
    training["final_loss"] = out.curve.empty() ? 0.0 : out.curve.back();
    return out;
}

} // namespace atlas
