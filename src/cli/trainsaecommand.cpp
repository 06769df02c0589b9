#include "arguments.h"
#include "commands.h"
#include "engine/inputbuilder.h"
#include "features/saefile.h"
#include "features/saesplice.h"
#include "features/saetraining.h"
#include "model/builtinmodels.h"
#include "train/corpus.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>

namespace atlas {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

// Trains a sparse autoencoder on one site of a model and saves it as SAELens does (features/saefile.h). The
// activations come from the built-in corpus's training part, or a text file; the quality is measured on the corpus's
// held-out part (or the file's last tenth). (The options: commandtable.cpp.)
int trainSaeCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "train-sae");
    const auto model = loadModel(args.required("model"));
    const SaeSite site = saeSiteFromHook(args.required("site"));
    (void)saeSiteTensor(*model, site);
    const std::string out = args.required("out");
    SaeTrainingOptions o;
    o.architecture = saeArchitectureFromName(args.value("architecture", "topk"));
    o.width = args.intValue("width", 8 * model->config.dModel, 1, 1 << 20);
    o.k = args.intValue("k", 8, 1, o.width);
    o.objective.sparsity
        = args.doubleValue("sparsity", o.architecture == SaeArchitecture::JumpRelu ? 0.5 : 2.0, 0.0, 1e6);
    o.objective.bandwidth = args.doubleValue("bandwidth", 0.05, 1e-9, 1e3);
    o.initialThreshold = args.doubleValue("threshold", 0.1, 1e-6, 1e3);
    o.steps = args.intValue("steps", 2000, 1, 10'000'000);
    o.batch = args.intValue("batch", 256, 1, 1 << 20);
    o.learningRate = args.doubleValue("lr", 4e-3, 1e-9, 10.0);
    o.seed = uint64_t(args.intValue("seed", 0, 0));
    const int64_t maxRows = args.intValue("rows", 100'000, 16, 100'000'000);

    std::string text, heldOut;
    if (args.has("text-file")) {
        text = readInputText(args.value("text-file"));
        heldOut = text.substr(text.size() - text.size() / 10);
        text.resize(text.size() - heldOut.size());
    } else {
        text = corpusTraining();
        heldOut = corpusHeldOut();
    }
    const auto start = std::chrono::steady_clock::now();
    const Tensor rows = siteActivations(model, site, text, maxRows);
    const Tensor held = siteActivations(model, site, heldOut, std::max<int64_t>(16, maxRows / 10));
    std::printf("%s of %s: %lld rows of %d to train on, %lld held out, read in %.1f s\n", site.hookName().c_str(),
        model->name.c_str(), static_cast<long long>(rows.dim(0)), model->config.dModel,
        static_cast<long long>(held.dim(0)), secondsSince(start));

    const auto trainStart = std::chrono::steady_clock::now();
    const int every = std::max(1, o.steps / 10);
    std::vector<double> curve;
    const SparseAutoencoder sae = trainSparseAutoencoder(rows, o, [&](const SaeTrainingStep &s) {
        curve.push_back(s.loss);
        if (s.step % every == 0 || s.step == o.steps)
            std::printf(
                "  step %6d  loss %.5g  reconstruction %.5g  L0 %.2f\n", s.step, s.loss, s.reconstruction, s.l0);
        return true;
    });
    const double trainSeconds = secondsSince(trainStart);
    const SaeQuality q = saeQuality(sae, held);
    std::printf("trained %s, %d features%s, in %.1f s; held out: %.2f %% of the variance unexplained, L0 %.2f, "
                "%d dead and %d dense features (active on more than a tenth of the rows)\n",
        saeArchitectureName(o.architecture), o.width,
        o.architecture == SaeArchitecture::TopK ? (", k = " + std::to_string(o.k)).c_str() : "", trainSeconds,
        100 * q.unexplained, q.l0, q.dead, q.dense);

    nlohmann::json splice = nullptr;
    if (model->config.causal && !model->config.isEncoderDecoder()) {
        const SpliceLosses l = spliceLosses(model, sae, site, heldOut, 16 * int64_t(model->config.context));
        std::printf("spliced into the model on %lld held-out tokens: %.4f nats a token, against %.4f clean and %.4f "
                    "with the site's mean: %.1f %% of the loss recovered\n",
            static_cast<long long>(l.tokens), l.spliced, l.clean, l.meanAblated, 100 * l.recovered());
        splice = {{"tokens", l.tokens}, {"clean", l.clean}, {"spliced", l.spliced}, {"mean_ablated", l.meanAblated},
            {"recovered", l.recovered()}};
    }
    SaeDirectory directory {sae, site, model->name, nlohmann::json::object()};
    directory.training = {{"steps", o.steps}, {"batch", o.batch}, {"learning_rate", o.learningRate}, {"seed", o.seed},
        {"sparsity_coefficient", o.objective.sparsity}, {"bandwidth", o.objective.bandwidth}, {"rows", rows.dim(0)},
        {"source", args.has("text-file") ? args.value("text-file") : "built-in corpus"},
        {"held_out",
            {{"rows", held.dim(0)}, {"unexplained_variance", q.unexplained}, {"l0", q.l0}, {"dead", q.dead},
                {"dense", q.dense}, {"loss", splice}}},
        {"seconds", trainSeconds}, {"final_loss", curve.empty() ? 0.0 : curve.back()}};
    saveSaeDirectory(out, directory);
    std::printf("saved to %s (cfg.json, sae_weights.safetensors)\n", out.c_str());
    return 0;
}

} // namespace atlas
