#include "arguments.h"
#include "commands.h"
#include "engine/inputbuilder.h"
#include "features/dictionarytraining.h"
#include "features/saefile.h"
#include "model/builtinmodels.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace atlas {

// Trains a sparse autoencoder on one site of a model and saves it as SAELens does (features/saefile.h). The
// activations come from the built-in corpus's training part, or a text file; the quality is measured on the corpus's
// held-out part (or the file's last tenth). (The options: commandtable.cpp.)
int trainSaeCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "train-sae");
    const auto model = loadModel(args.required("model"));
    const SaeSite site = saeSiteFromHook(args.required("site"));
    (void)saeSiteTensor(*model, site);
    std::optional<SaeSite> writes;
    if (args.has("writes"))
        writes = saeSiteFromHook(args.value("writes"));
    const std::string out = args.required("out");
    SaeTrainingOptions o;
    // SAELens has no TopK transcoder; Gemma Scope's are JumpReLU.
    o.architecture = saeArchitectureFromName(args.value("architecture", writes ? "jumprelu" : "topk"));
    o.width = args.intValue("width", 8 * model->config.dModel, 1, 1 << 20);
    o.k = args.intValue("k", 8, 1, o.width);
    o.objective.sparsity
        = args.doubleValue("sparsity", o.architecture == SaeArchitecture::JumpRelu ? 0.5 : 2.0, 0.0, 1e6);
    o.objective.bandwidth = args.doubleValue("bandwidth", 0.05, 1e-9, 1e3);
    o.initialThreshold = args.doubleValue("threshold", 0.1, 1e-6, 1e3);
    o.objective.auxiliary = args.doubleValue("auxk", 0.0, 0.0, 1e3);
    o.objective.auxiliaryK = args.intValue("auxk-k", 0, 1, o.width);
    o.deadAfterSteps = args.intValue("dead-after", 100, 1, 10'000'000);
    o.steps = args.intValue("steps", 2000, 1, 10'000'000);
    o.checkpointEvery = args.intValue("checkpoint-every", std::max(1, o.steps / 10), 1, 10'000'000);
    o.batch = args.intValue("batch", 256, 1, 1 << 20);
    o.learningRate = args.doubleValue("lr", 4e-3, 1e-9, 10.0);
    o.seed = uint64_t(args.intValue("seed", 0, 0));
    const int64_t maxRows = args.intValue("rows", 100'000, 16, 100'000'000);

    const DictionaryText text = args.has("text-file") ? textFileText(args.value("text-file")) : builtInCorpusText();
    const int every = std::max(1, o.steps / 10);
    std::printf("%s of %s: up to %lld rows of %d to train on, from the %s\n", sitesName(site, writes).c_str(),
        model->name.c_str(), static_cast<long long>(maxRows), model->config.dModel, text.name.c_str());
    std::fflush(stdout);
    const TrainedDictionary t = trainDictionary(model, site, o, text, maxRows,
        {.reading = {},
            .step =
                [&](const SaeTrainingStep &s) {
                    if (s.step % every == 0 || s.step == o.steps)
                        std::printf("  step %6d  loss %.5g  reconstruction %.5g  AuxK %.5g  "
                                    "L0 %.2f  %d dead\n",
                            s.step, s.loss, s.reconstruction, s.auxiliary, s.l0, s.dead);
                    return true;
                }},
        nullptr, WorkBudget::process(),
        {out, args.flag("resume") ? DictionaryCheckpoints::Resume::Yes : DictionaryCheckpoints::Resume::No}, writes);
    if (const auto at = t.directory.training.find("resumed_at_step"); at != t.directory.training.end())
        std::printf("went on from the state saved at step %d\n", at->get<int>());
    const SaeQuality &q = t.heldOut.quality;
    std::printf("trained %s, %d features%s, on %lld rows (read in %.1f s) in %.1f s; held out (%lld rows): %.2f %% of "
                "the variance unexplained, L0 %.2f, %d dead and %d dense features (active on more than a tenth of "
                "the rows)\n",
        t.directory.kindName().c_str(), o.width,
        o.architecture == SaeArchitecture::TopK ? (", k = " + std::to_string(o.k)).c_str() : "",
        static_cast<long long>(t.rows), t.readSeconds, t.trainSeconds, static_cast<long long>(t.heldOut.rows),
        100 * q.unexplained, q.l0, q.dead, q.dense);
    if (t.heldOut.hasLosses) {
        const SpliceLosses &l = t.heldOut.losses;
        std::printf("spliced into the model on %lld held-out tokens: %.4f nats a token, against %.4f clean and %.4f "
                    "with the site's mean: %.1f %% of the loss recovered\n",
            static_cast<long long>(l.tokens), l.spliced, l.clean, l.meanAblated, 100 * l.recovered());
    }
    const SaeDirectory &directory = t.directory;
    saveSaeDirectory(out, directory);
    std::printf("saved to %s (cfg.json, sae_weights.safetensors)\n", out.c_str());
    return 0;
}

} // namespace atlas
