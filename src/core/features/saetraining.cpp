#include "features/saetraining.h"

#include "features/siterun.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "train/adamw.h"
#include "util/error.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace atlas {

Tensor siteRows(std::shared_ptr<const Model> model, const SaeSite &site, const Input &input)
{
    const std::string tensor = saeSiteTensor(*model, site);
    return runThroughSite(std::move(model), tensor, input)->trace().tensor(tensor);
}

Tensor siteActivations(std::shared_ptr<const Model> model, const SaeSite &site, const std::string &text,
    int64_t maxRows, const std::function<bool(int64_t, int64_t)> &progress, const std::atomic<bool> *cancel,
    const WorkBudget &budget)
{
    const std::string tensor = saeSiteTensor(*model, site);
    if (maxRows < 1)
        throw Error("SAE activations: ask for at least one row");
    const std::vector<int> tokens = tokenizerForModel(*model)->encode(text);
    if (tokens.empty())
        throw Error("SAE activations: the text has no tokens");
    const int64_t D = model->config.dModel, rows = std::min<int64_t>(maxRows, int64_t(tokens.size()));
    const std::string what = "the activations of " + site.hookName() + " (" + countOf(size_t(rows), "row") + ")";
    if (const std::string why = overBudget(what, 0, double(rows) * double(D) * sizeof(float), budget); !why.empty())
        throw Error(why);
    Tensor out = Tensor::uninitialized({rows, D});
    const int64_t window = std::max(1, model->config.context);
    int64_t done = 0;
    for (int64_t start = 0; done < rows; start += window) {
        if ((cancel && cancel->load()) || (progress && !progress(done, rows)))
            throw Error("SAE activations: cancelled");
        Input input;
        const int64_t end = std::min<int64_t>(int64_t(tokens.size()), start + window);
        input.tokens.assign(tokens.begin() + start, tokens.begin() + end);
        const Tensor t = runThroughSite(model, tensor, input)->trace().tensor(tensor);
        const int64_t take = std::min(t.dim(0), rows - done);
        std::copy_n(t.data(), take * D, out.data() + done * D);
        done += take;
    }
    if (progress)
        progress(rows, rows);
    return out;
}

SparseAutoencoder unscaledDictionary(const SaeTrainingState &state)
{
    SparseAutoencoder sae = state.sae;
    const float s = state.scale;
    sae.wEnc.matrix() *= s; // reads x itself: (s x − b_dec) W_enc = (x − b_dec/s)(s W_enc)
    sae.wDec.matrix() /= s; // and writes x̂ = x̂′/s
    RowVectorMap(sae.bDec.data(), sae.inputSize()) /= s; // pre is unchanged, so θ and b_enc stay
    return sae;
}

namespace {

// Why `state` cannot go on training with these rows and options, or "".
std::string resumeProblem(const SaeTrainingState &state, const SaeTrainingOptions &o, int64_t d, float scale)
{
    if (state.sae.architecture != o.architecture)
        return std::string("it trains a ") + saeArchitectureName(state.sae.architecture) + " dictionary, not "
            + saeArchitectureName(o.architecture);
    if (state.sae.width() != o.width || state.sae.inputSize() != d)
        return "its dictionary is " + state.sae.wEnc.shapeString() + ", the run's [" + std::to_string(d) + ", "
            + std::to_string(o.width) + "]";
    if (state.sae.architecture == SaeArchitecture::TopK && state.sae.k != o.k)
        return "its k is " + std::to_string(state.sae.k) + ", the run's " + std::to_string(o.k);
    if (state.step < 1 || state.step >= o.steps)
        return "it stopped at step " + std::to_string(state.step) + " of a run of " + std::to_string(o.steps);
    if (state.scale != scale)
        return "its rows were scaled by " + std::to_string(state.scale) + ", these by " + std::to_string(scale)
            + " (other rows)";
    if (int64_t(state.quiet.size()) != o.width)
        return "it counts quiet steps for " + std::to_string(state.quiet.size()) + " features";
    if (o.architecture == SaeArchitecture::JumpRelu && state.logThreshold.numel() != o.width)
        return "its log thresholds are " + state.logThreshold.shapeString();
    return {};
}

} // namespace

SparseAutoencoder trainSparseAutoencoder(const Tensor &rows, const SaeTrainingOptions &o,
    const std::function<bool(const SaeTrainingStep &)> &progress, const std::atomic<bool> *cancel,
    const WorkBudget &budget, const SaeTrainingState *resume,
    const std::function<void(const SaeTrainingState &)> &checkpoint, const Tensor *targets)
{
    if (rows.rank() != 2 || rows.dim(0) < 1)
        throw Error("SAE training: no activations to train on");
    if (targets && targets->shape() != rows.shape())
        throw Error("SAE training: " + targets->shapeString() + " rows to predict from " + rows.shapeString());
    if (o.width < 1 || o.width > (1 << 20))
        throw Error("SAE training: a width of " + std::to_string(o.width) + " features; give 1 … 1048576");
    if (o.steps < 1 || o.batch < 1)
        throw Error("SAE training: give at least one step of at least one row");
    if (!(o.learningRate > 0) || !std::isfinite(o.learningRate))
        throw Error("SAE training: the learning rate must be positive");
    if (!(o.objective.auxiliary >= 0) || !std::isfinite(o.objective.auxiliary) || o.objective.auxiliaryK < 0)
        throw Error("SAE training: AuxK's coefficient and k must be finite and at least 0");
    if (o.deadAfterSteps < 1)
        throw Error("SAE training: a feature is dead after at least one step without firing");
    if (o.checkpointEvery < 0)
        throw Error("SAE training: checkpoints every " + std::to_string(o.checkpointEvery) + " steps");
    const int64_t N = rows.dim(0), d = rows.dim(1);
    const double weights = 2.0 * double(o.width) * double(d) + 2.0 * double(o.width) + double(d);
    const double batchRows = double(std::min<int64_t>(o.batch, N));
    const double bytes = sizeof(float)
        * (4 * weights + 4 * batchRows * double(o.width)
            + (targets ? batchRows * double(d) : 0.0)); // + gradients, m, v
    const std::string what = "training a dictionary of " + countOf(size_t(o.width), "feature") + " over "
        + std::to_string(d) + " dimensions";
    if (const std::string why = overBudget(what, 0, bytes, budget); !why.empty())
        throw Error(why);
    // Trained on the rows scaled by s so that their mean ‖x‖² is d (SAELens's expected_average_only_in), so that the
    // sparsity coefficients mean the same at every site; s is folded into the weights at the end.
    const double meanSquare = rows.matrix().cast<double>().squaredNorm() / double(N);
    const float s = meanSquare > 0 ? float(std::sqrt(double(d) / meanSquare)) : 1.0f;
    if (resume)
        if (const std::string why = resumeProblem(*resume, o, d, s); !why.empty())
            throw Error("SAE training: the saved state does not fit this run: " + why);
    SparseAutoencoder sae = resume ? resume->sae : initialSparseAutoencoder(o.architecture, d, o.width, o.k, o.seed);
    if (!resume)
        RowVectorMap(sae.bDec.data(), d) = (targets ? *targets : rows).matrix().colwise().mean() * s;
    sae.applyDecoderBiasToInput = !targets;
    Tensor logThreshold;
    std::map<std::string, Tensor *> parameters {
        {"W_enc", &sae.wEnc}, {"b_enc", &sae.bEnc}, {"W_dec", &sae.wDec}, {"b_dec", &sae.bDec}};
    if (o.architecture == SaeArchitecture::JumpRelu) {
        if (resume) {
            logThreshold = resume->logThreshold;
        } else {
            std::fill_n(sae.threshold.data(), sae.threshold.numel(), float(o.initialThreshold));
            logThreshold = Tensor::uninitialized(sae.threshold.shape());
            for (int64_t i = 0; i < logThreshold.numel(); ++i)
                logThreshold.data()[i] = std::log(sae.threshold.data()[i]);
        }
        parameters["log_threshold"] = &logThreshold;
    }
    AdamWOptions adam;
    adam.weightDecay = 0;
    AdamW optimizer(adam);
    if (resume)
        optimizer.restoreState(resume->moments, resume->step);
    LearningRateSchedule schedule;
    schedule.peak = float(o.learningRate);
    schedule.floor = float(o.learningRate / 10);
    schedule.warmupSteps = std::max(1, o.steps / 20);
    schedule.totalSteps = o.steps;

    std::vector<int64_t> order(static_cast<size_t>(N));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 random(o.seed);
    std::shuffle(order.begin(), order.end(), random);
    const int64_t B = std::min<int64_t>(o.batch, N);
    Tensor batch = Tensor::uninitialized({B, d}), predicted = targets ? Tensor::uninitialized({B, d}) : Tensor();
    int64_t next = 0;
    std::vector<int> quiet(size_t(o.width), 0); // steps since each feature last fired
    std::vector<bool> dead(size_t(o.width), false);
    const int first = resume ? resume->step : 0;
    if (resume) { // the batches drawn before the state was kept, replayed: the order and `random` where they were
        quiet = resume->quiet;
        for (int64_t skip = int64_t(first) * B; skip > 0;) {
            if (next == N) {
                std::shuffle(order.begin(), order.end(), random);
                next = 0;
            }
            const int64_t take = std::min(skip, N - next);
            next += take;
            skip -= take;
        }
    }
    for (int step = first; step < o.steps; ++step) {
        if (cancel && cancel->load())
            throw Error("SAE training: cancelled");
        for (int64_t b = 0; b < B; ++b) {
            if (next == N) {
                std::shuffle(order.begin(), order.end(), random);
                next = 0;
            }
            const int64_t n = order[size_t(next++)];
            batch.matrix().row(b) = rows.matrix().row(n) * s;
            if (targets)
                predicted.matrix().row(b) = targets->matrix().row(n) * s;
        }
        int deadCount = 0;
        for (size_t i = 0; i < quiet.size(); ++i) {
            dead[i] = quiet[i] >= o.deadAfterSteps;
            deadCount += dead[i] ? 1 : 0;
        }
        SaeBatchResult r = saeBatch(sae, batch, o.objective, dead, targets ? &predicted : nullptr);
        for (size_t i = 0; i < quiet.size(); ++i)
            quiet[i] = r.fired[i] ? 0 : quiet[i] + 1;
        optimizer.step(parameters, r.gradients, schedule.at(step));
        if (o.architecture == SaeArchitecture::JumpRelu)
            for (int64_t i = 0; i < logThreshold.numel(); ++i)
                sae.threshold.data()[i] = std::exp(logThreshold.data()[i]);
        if (progress && !progress({step + 1, r.loss, r.reconstruction, r.auxiliary, r.l0, deadCount}))
            throw Error("SAE training: cancelled");
        if (checkpoint && o.checkpointEvery > 0 && (step + 1) % o.checkpointEvery == 0 && step + 1 < o.steps)
            checkpoint({step + 1, s, sae, logThreshold, optimizer.state(), quiet});
    }
    SparseAutoencoder out = unscaledDictionary({o.steps, s, std::move(sae), {}, {}, {}});
    out.validate("the trained SAE");
    return out;
}

} // namespace atlas
