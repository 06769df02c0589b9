#include "features/dictionarytraining.h"

#include "engine/inputbuilder.h"
#include "train/corpus.h"

#include <chrono>

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

HeldOutMeasures measureHeldOut(std::shared_ptr<const Model> model, const SparseAutoencoder &sae, const SaeSite &site,
    const std::string &heldOut, int64_t maxRows, const std::atomic<bool> *cancel)
{
    HeldOutMeasures m;
    const Tensor held = siteActivations(model, site, heldOut, maxRows, {}, cancel);
    m.rows = held.dim(0);
    m.quality = saeQuality(sae, held);
    if (model->config.causal && !model->config.isEncoderDecoder()) {
        m.hasLosses = true;
        m.losses = spliceLosses(model, sae, site, heldOut, 16 * int64_t(model->config.context), {}, cancel);
    }
    return m;
}

TrainedDictionary trainDictionary(std::shared_ptr<const Model> model, const SaeSite &site, const SaeTrainingOptions &o,
    const DictionaryText &text, int64_t maxRows, const DictionaryTrainingProgress &progress,
    const std::atomic<bool> *cancel, const WorkBudget &budget)
{
    (void)saeSiteTensor(*model, site);
    TrainedDictionary out;
    const auto start = std::chrono::steady_clock::now();
    const Tensor rows = siteActivations(model, site, text.training, maxRows, progress.reading, cancel, budget);
    out.rows = rows.dim(0);
    out.readSeconds = secondsSince(start);
    const auto trainStart = std::chrono::steady_clock::now();
    const SparseAutoencoder sae = trainSparseAutoencoder(
        rows, o,
        [&](const SaeTrainingStep &s) {
            out.curve.push_back(s.loss);
            return !progress.step || progress.step(s);
        },
        cancel, budget);
    out.trainSeconds = secondsSince(trainStart);
    out.heldOut = measureHeldOut(model, sae, site, text.heldOut, std::max<int64_t>(16, maxRows / 10), cancel);
    const HeldOutMeasures &h = out.heldOut;
    nlohmann::json splice = nullptr;
    if (h.hasLosses)
        splice = {{"tokens", h.losses.tokens}, {"clean", h.losses.clean}, {"spliced", h.losses.spliced},
            {"mean_ablated", h.losses.meanAblated}, {"recovered", h.losses.recovered()}};
    out.directory = {sae, site, model->name, nlohmann::json::object()};
    out.directory.training = {{"steps", o.steps}, {"batch", o.batch}, {"learning_rate", o.learningRate},
        {"seed", o.seed}, {"sparsity_coefficient", o.objective.sparsity}, {"bandwidth", o.objective.bandwidth},
        {"rows", out.rows}, {"source", text.name},
        {"held_out",
            {{"rows", h.rows}, {"unexplained_variance", h.quality.unexplained}, {"l0", h.quality.l0},
                {"dead", h.quality.dead}, {"dense", h.quality.dense}, {"loss", splice}}},
        {"seconds", out.trainSeconds}, {"final_loss", out.curve.empty() ? 0.0 : out.curve.back()}};
    return out;
}

} // namespace atlas
