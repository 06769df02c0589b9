#include "features/features.h"

#include "engine/engine.h"
#include "engine/inputbuilder.h"
#include "features/dictionarytraining.h"
#include "features/featurecorpus.h"
#include "features/saefile.h"
#include "features/steering.h"
#include "io/jsonread.h"
#include "train/corpus.h"
#include "util/error.h"
#include "util/keptvalue.h"
#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

// The Features view: a sparse autoencoder's features at each token of the input (features/sparseautoencoder.h).
namespace atlas::views::features {

namespace {

using namespace atlas::analysis;

// The dictionary last read, kept while its files are unchanged: every token clicked reuses it.
std::shared_ptr<const SaeDirectory> dictionaryAt(const std::string &path, const std::string &site)
{
    static KeptValue<SaeDirectory> kept;
    const std::string key = path + "|" + site + "|" + dictionaryStamp(path);
    if (std::shared_ptr<const SaeDirectory> d = kept.find(key))
        return d;
    auto d = std::make_shared<const SaeDirectory>(
        loadDictionary(path, site.empty() ? std::nullopt : std::optional(saeSiteFromHook(site))));
    kept.keep(key, d);
    return d;
}

std::string plainNumber(double value) // "8", "0.5", "1e+03"
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

std::string percent(double fraction)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f %%", 100 * fraction);
    return text;
}

// What train-sae measured on held-out text (cfg.json's "atlas_training"), in a sentence; "" when it says nothing.
std::string qualityOf(const nlohmann::json &training)
{
    const nlohmann::json *held = training.is_object() ? optionalJsonMember(training, "held_out") : nullptr;
    const nlohmann::json *unexplained
        = held && held->is_object() ? optionalJsonMember(*held, "unexplained_variance") : nullptr;
    if (!unexplained || !unexplained->is_number())
        return {};
    std::string text = percent(unexplained->get<double>()) + " of the variance unexplained";
    const nlohmann::json *loss = optionalJsonMember(*held, "loss");
    if (loss && loss->is_object() && loss->contains("recovered") && (*loss)["recovered"].is_number())
        text += ", " + percent((*loss)["recovered"].get<double>()) + " of the loss recovered";
    return text + " on held-out text";
}

// Feature f's page, read from the corpus pass, with its logit effects and nearest features.
FeatureDashboard featureDashboard(const Model &model, const SparseAutoencoder &sae, const FeatureCorpusStats &s, int f)
{
    FeatureDashboard d;
    d.corpusTokens = int64_t(s.tokens.size());
    d.window = s.window;
    d.active = s.activeCount[size_t(f)];
    d.passSeconds = s.seconds;
    const int64_t C = s.contextSize();
    for (int i = 0; i < s.top; ++i) {
        const int64_t at = s.topToken[size_t(f * s.top + i)];
        if (at < 0)
            break;
        FeatureDashboard::Example e;
        e.activation = s.topActivation[size_t(f * s.top + i)];
        e.at = at;
        const float *values = s.context.data() + (int64_t(f) * s.top + i) * C;
        for (int64_t c = 0; c < C; ++c) {
            const int64_t u = at - s.before + c;
            if (u < 0 || u >= int64_t(s.tokens.size()))
                continue;
            if (u == at)
                e.centre = int(e.tokens.size());
            e.tokens.push_back(s.tokens[size_t(u)]);
            e.values.push_back(values[c]);
        }
        d.examples.push_back(std::move(e));
    }
    const float *histogram = s.histogram.data() + int64_t(f) * FeatureCorpusStats::kBins;
    d.histogram.assign(histogram, histogram + FeatureCorpusStats::kBins);
    d.logits = featureLogitEffects(model, sae, f, 8);
    d.nearest = nearestFeatures(sae, f, 8);
    return d;
}

// The dictionary's quality: its features' activity over the corpus pass, and on the held-out part of the corpus its
// reconstruction (as train-sae measures it: 10 000 rows) and the loss with it spliced in (16 contexts of tokens).
DictionaryQuality dictionaryQuality(std::shared_ptr<const Model> model, const SaeDirectory &d,
    const FeatureCorpusStats &s, const std::atomic<bool> *cancel)
{
    const auto start = Clock::now();
    DictionaryQuality q;
    q.corpusTokens = int64_t(s.tokens.size());
    q.activeCount = s.activeCount;
    for (const int64_t n : s.activeCount) {
        q.dead += n == 0;
        q.dense += double(n) > 0.1 * double(q.corpusTokens);
        q.meanActive += double(n);
    }
    q.meanActive /= double(std::max<int64_t>(1, q.corpusTokens));
    const HeldOutMeasures held = measureHeldOut(model, d.sae, d.site, d.output(), corpusHeldOut(), 10'000, cancel);
    q.heldOutRows = held.rows;
    q.unexplained = held.quality.unexplained;
    q.heldOutL0 = held.quality.l0;
    q.hasLosses = held.hasLosses;
    q.clean = held.losses.clean;
    q.spliced = held.losses.spliced;
    q.meanAblated = held.losses.meanAblated;
    q.heldOutTokens = held.losses.tokens;
    q.seconds = millisecondsSince(start) / 1000;
    return q;
}

// The `count` features whose decoder rows have the largest cosine with `direction`, largest first.
std::vector<std::pair<int, float>> alignedFeatures(const SparseAutoencoder &sae, const Tensor &direction, int count)
{
    const ConstRowVectorMap v(direction.data(), direction.numel());
    const double norm = double(v.norm());
    std::vector<float> cosine(size_t(sae.width()), 0.0f);
    for (int64_t i = 0; i < sae.width(); ++i) {
        const double n = double(sae.wDec.matrix().row(i).norm()) * norm;
        cosine[size_t(i)] = n > 0 ? float(double(sae.wDec.matrix().row(i).dot(v)) / n) : 0.0f;
    }
    std::vector<int64_t> scratch;
    std::vector<std::pair<int, float>> out;
    for (const int64_t i : largestIndices(cosine.data(), sae.width(), count, scratch))
        out.emplace_back(int(i), cosine[size_t(i)]);
    return out;
}

// What the Steer page adds with dictionary d: feature f's decoder row `strength` times, or f clamped at `strength`, or
// (with prompts on both sides) the difference of the site's means over `meansA` and `meansB` `strength` times.
NamedSteering steeringBy(std::shared_ptr<const Model> model, const SaeDirectory &d, int f, double strength, bool clamp,
    const std::vector<std::string> &meansA, const std::vector<std::string> &meansB)
{
    NamedSteering out;
    Steering &s = out.steering;
    const std::string times = plainNumber(strength), at = " at " + d.output().hookName();
    if (!meansA.empty() || !meansB.empty()) {
        if (meansA.empty() || meansB.empty())
            throw Error("steering by a difference of means: give prompts on both sides (steer_means_a and "
                        "steer_means_b, separated by |)");
        if (clamp)
            throw Error("steering: a difference of means is added, not clamped; clear steer_clamp or the prompts");
        s.site = d.output(); // a transcoder's rows are added where it writes
        s.direction = differenceOfMeans(model, s.site, meansA, meansB);
        s.strength = strength;
        out.description = "the difference of means over " + countOf(meansA.size(), "prompt") + " and "
            + countOf(meansB.size(), "prompt") + " \u00d7 " + times + at;
    } else if (clamp) {
        s = clampedFeature(d, f, strength);
        out.description = "feature " + std::to_string(f) + " clamped at " + times + at;
    } else {
        s = addedFeature(d, f, strength);
        out.description = "feature " + std::to_string(f) + " \u00d7 " + times + at;
    }
    return out;
}

// Feature f (or the difference of means over `meansA` and `meansB`, when given) steering the model from `prompt`: the
// continuations and the next-token probabilities it moves most.
FeatureSteering featureSteering(std::shared_ptr<const Model> model, const SaeDirectory &d,
    const std::vector<int> &prompt, int f, double strength, bool clamp, int tokens,
    const std::vector<std::string> &meansA, const std::vector<std::string> &meansB, SamplingOptions sampling,
    const std::atomic<bool> &cancel)
{
    FeatureSteering out;
    out.strength = strength;
    out.clamp = clamp;
    out.sampling = sampling;
    const Steering s = steeringBy(model, d, f, strength, clamp, meansA, meansB).steering;
    if (!meansA.empty()) {
        out.meansA = meansA;
        out.meansB = meansB;
        out.directionNorm = double(ConstRowVectorMap(s.direction.data(), s.direction.numel()).norm());
        out.alignedFeatures = alignedFeatures(d.sae, s.direction, 5);
    }
    Input input;
    input.tokens = prompt;
    out.moved = nextTokenShift(model, input, s, 10);
    if (cancel)
        throw Error("steering: cancelled");
    out.plain = Generator(model, prompt, sampling).continuation(tokens); // the model's own
    if (cancel)
        throw Error("steering: cancelled");
    out.steered = steeredContinuation(model, prompt, s, tokens, sampling);
    return out;
}

// The spec's dictionary ("sae"), or the model's own when it names none and the model ships one; "" for neither.
std::string dictionaryNamed(const Model &model, const ViewSpec &spec)
{
    std::string path = spec.get(kSae);
    if (path.empty()) {
        const std::vector<std::string> own = modelDictionaries(model);
        if (!own.empty())
            path = own.front();
    }
    return dictionaryPath(model, path);
}

void refuseMisfit(const Model &model, const SaeDirectory &d, const std::string &path)
{
    if (d.sae.inputSize() != model.config.dModel)
        throw Error(path + ": W_enc is " + d.sae.wEnc.shapeString() + ", but " + d.site.hookName() + " of " + model.name
            + " has " + std::to_string(model.config.dModel) + " dimensions");
}

// The feature strongest at `position` of `prompt` (its last token when out of range), as the page shows it unasked.
int strongestFeature(
    std::shared_ptr<const Model> model, const SaeDirectory &d, const std::vector<int> &prompt, int position)
{
    Input input;
    input.tokens = prompt;
    Engine run(model, input);
    run.runToEnd();
    const std::string tensor = saeSiteTensor(*model, d.site);
    const TraceEntry *entry = run.trace().find(tensor);
    if (!entry)
        throw Error("This run's trace does not keep " + tensor + ", which " + d.site.hookName() + " reads");
    const Tensor f = d.sae.encode(entry->tensor);
    const int T = int(f.dim(0)), F = int(f.dim(1));
    const int at = position < 0 || position >= T ? T - 1 : position;
    const float *row = f.data() + int64_t(at) * F;
    return int(std::max_element(row, row + F) - row);
}

AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    const std::string path = dictionaryNamed(*c.model, spec);
    if (path.empty())
        return problem("The Features view shows a sparse autoencoder's features on the input. Open a dictionary "
                       "(Open dictionary\u2026): a directory train-sae wrote or SAELens saved, or Gemma Scope's "
                       "params.npz. To train one on this model: transformer-atlas train-sae --model "
            + c.model->name + " --site blocks." + std::to_string(c.layers / 2) + ".hook_resid_post --out runs/sae");
    AnalysisRequest r;
    r.key
        = "features/" + modelIdentity(*c.model) + "/" + inputKey(c) + "/" + dictionaryStamp(path); // retrained in place
    r.pinned = {c.model->wte};
    const std::string show = spec.get(kShow);
    const bool dashboard = show == "dashboard", quality = show == "quality", steer = show == "steer";
    if (steer && (!c.causal || !c.model->config.causal || c.model->config.isEncoderDecoder()))
        return problem("Steering continues the input token by token: this model does not predict the next token");
    if (dashboard || quality)
        r.progress = std::make_shared<AnalysisProgress>();
    r.run = [model = c.model, trace = c.trace, path, site = spec.get(kSaeSite), feature = spec.get(kFeature),
                position = spec.position, dashboard, quality, steer, strength = spec.get(kSteerStrength),
                clamp = spec.get(kSteerClamp), steerTokens = spec.get(kSteerTokens), prompt = c.tokenIds,
                sampling = SamplingOptions {float(spec.get(kSteerTemperature)), 0, uint64_t(spec.get(kSteerSeed))},
                meansA = steeringPrompts(spec.get(kSteerMeansA)), meansB = steeringPrompts(spec.get(kSteerMeansB)),
                corpusTokens = spec.get(kCorpusTokens), corpusFile = spec.get(kCorpusFile), progress = r.progress,
                budget = c.budget](const std::atomic<bool> &cancel) {
        return timedResult<FeaturesAnalysis>([&](FeaturesAnalysis &result) {
            const std::shared_ptr<const SaeDirectory> d = dictionaryAt(path, site);
            const SparseAutoencoder &sae = d->sae;
            const std::string tensor = saeSiteTensor(*model, d->site);
            refuseMisfit(*model, *d, path);
            const TraceEntry *entry = trace->find(tensor);
            if (!entry)
                throw Error("This run's trace does not keep " + tensor + ", which " + d->site.hookName() + " reads");
            const Tensor f = sae.encode(entry->tensor);
            const int T = int(f.dim(0)), F = int(f.dim(1));
            result.path = path;
            result.dictionary = d->kindName() + ", " + countOf(size_t(F), "feature")
                + (d->writes ? " reading " + d->site.hookName() + ", writing " + d->writes->hookName()
                             : " over " + d->site.hookName());
            result.trainedOn = d->modelName;
            result.quality = qualityOf(d->training);
            result.width = F;
            result.position = position < 0 || position >= T ? T - 1 : position;
            const float *row = f.data() + int64_t(result.position) * F;
            std::vector<int64_t> scratch;
            const std::vector<int64_t> order = largestIndices(row, F, 12, scratch);
            for (const int64_t i : order)
                if (row[i] > 0)
                    result.strongest.emplace_back(int(i), row[i]);
            result.featureChosen = feature >= 0;
            if (feature >= F)
                throw Error("feature " + std::to_string(feature) + ": the dictionary has features 0 \u2026 "
                    + std::to_string(F - 1));
            result.feature = feature >= 0 ? feature : int(order.front());
            for (int t = 0; t < T; ++t) {
                const float *r = f.data() + int64_t(t) * F;
                result.activation.push_back(r[result.feature]);
                result.active.push_back(int(std::count_if(r, r + F, [](float v) { return v != 0.0f; })));
            }
            if (steer) {
                result.showsSteering = true;
                result.steering = featureSteering(
                    model, *d, prompt, result.feature, strength, clamp, steerTokens, meansA, meansB, sampling, cancel);
                return;
            }
            if (!dashboard && !quality)
                return;
            FeatureCorpusSource source {model, path, d, "built-in corpus", &corpusTraining(), {}};
            std::string fileText;
            std::string corpusName = "the built-in corpus";
            if (!corpusFile.empty()) { // read here, off the GUI thread; a problem names the file
                fileText = readInputText(corpusFile);
                source.corpusName = corpusFile;
                source.text = &fileText;
                corpusName = std::filesystem::path(corpusFile).filename().string();
            }
            source.options.maxTokens = corpusTokens;
            const FeatureCorpus corpus = featureCorpus(
                source,
                [&](int64_t done, int64_t total) {
                    progress->total = int(total);
                    progress->done = int(done);
                    return true;
                },
                &cancel, budget);
            if (quality) {
                result.showsQuality = true;
                result.dictionaryQuality = dictionaryQuality(model, *d, *corpus.stats, &cancel);
                result.dictionaryQuality.corpusName = corpusName;
                if (d->writes)
                    result.dictionaryQuality.writes = d->writes->hookName();
                return;
            }
            result.showsDashboard = true;
            result.dashboard = featureDashboard(*model, sae, *corpus.stats, result.feature);
            result.dashboard.corpusName = corpusName;
            result.dashboard.origin = corpus.origin == FeatureCorpus::Origin::Computed ? "run now"
                : corpus.origin == FeatureCorpus::Origin::Memory                       ? "kept from the last pass"
                                                                                       : "read from the cache";
            result.dashboard.cacheProblem = corpus.cacheProblem;
        });
    };
    return r;
}

} // namespace

NamedSteering specSteering(std::shared_ptr<const Model> model, const ViewSpec &spec, const std::vector<int> &prompt)
{
    if (!model->config.causal || model->config.isEncoderDecoder())
        throw Error("Steering continues the input token by token: " + model->name + " does not predict the next token");
    if (prompt.empty())
        throw Error("steering: an empty prompt");
    const std::string path = dictionaryNamed(*model, spec);
    if (path.empty())
        throw Error("Steering needs a dictionary: open one in the Features view (Open dictionary\u2026) or train one "
                    "there (Train\u2026)");
    const std::shared_ptr<const SaeDirectory> d = dictionaryAt(path, spec.get(kSaeSite));
    refuseMisfit(*model, *d, path);
    const std::vector<std::string> meansA = steeringPrompts(spec.get(kSteerMeansA)),
                                   meansB = steeringPrompts(spec.get(kSteerMeansB));
    int f = spec.get(kFeature);
    if (f >= d->sae.width())
        throw Error("feature " + std::to_string(f) + ": the dictionary has features 0 \u2026 "
            + std::to_string(d->sae.width() - 1));
    if (f < 0 && meansA.empty() && meansB.empty())
        f = strongestFeature(model, *d, prompt, spec.position);
    return steeringBy(model, *d, f, spec.get(kSteerStrength), spec.get(kSteerClamp), meansA, meansB);
}

std::string steeringSummary(const ViewSpec &spec)
{
    const std::string strength = plainNumber(spec.get(kSteerStrength));
    if (!spec.get(kSteerMeansA).empty() || !spec.get(kSteerMeansB).empty())
        return "a difference of means \u00d7 " + strength;
    const int f = spec.get(kFeature);
    const std::string feature = f >= 0 ? "feature " + std::to_string(f) : "the strongest feature at the token";
    return feature + (spec.get(kSteerClamp) ? " clamped at " : " \u00d7 ") + strength;
}

std::vector<std::string> steeringPrompts(const std::string &text)
{
    std::vector<std::string> out;
    for (std::string p : splitPrompts(text)) {
        p.erase(0, p.find_first_not_of(" \t\n"));
        p.erase(p.find_last_not_of(" \t\n") + 1);
        if (!p.empty())
            out.push_back(p);
    }
    return out;
}

ViewKind kind()
{
    return {.kind = "features",
        .title = "Features",
        .summary = "a sparse autoencoder's features on the input: the strongest at a token, one feature over every "
                   "token",
        .group = "Circuits",
        .request = request,
        .analysisKeys = {"position", kSae.name, kSaeSite.name, kFeature.name, kShow.name, kCorpusTokens.name,
            kCorpusFile.name, kSteerStrength.name, kSteerClamp.name, kSteerTokens.name, kSteerMeansA.name,
            kSteerMeansB.name, kSteerTemperature.name, kSteerSeed.name},
        .after = "patching",
        .keys = {{.field = kSae,
                     .type = "string",
                     .meaning = "features view: the dictionary, a SAELens directory (cfg.json, "
                                "sae_weights.safetensors; what train-sae writes) or Gemma Scope's params.npz, or the "
                                "name of one the model ships (its folder's saes/NAME); empty: the model's first, if "
                                "it ships one",
                     .ownedByView = true},
            {.field = kSaeSite,
                .type = "string",
                .meaning = "features view: where a params.npz reads, as SAELens names it (blocks.L.hook_resid_post, "
                           "hook_resid_pre, hook_resid_mid, hook_attn_out, hook_mlp_out, or ln2.hook_normalized, "
                           "where it is a transcoder writing hook_mlp_out); a directory's cfg.json says it",
                .ownedByView = true},
            {.field = kFeature,
                .type = "int",
                .meaning = "features view: the feature drawn over every token; −1 = the strongest at `position`",
                .minimum = -1,
                .rule = ">= 0, or -1 for the strongest",
                .ownedByView = true},
            {.field = kShow,
                .type = "string",
                .meaning = "features view: `text`, the features on the input; `dashboard`, feature `feature`'s page "
                           "over the built-in corpus (its strongest examples, its histogram, the tokens it raises and "
                           "lowers, the nearest features); `quality`, the dictionary's dead and dense features over "
                           "the corpus, its variance unexplained and the loss recovered on held-out text; `steer`, the "
                           "model's continuation of the input with and without feature `feature` added at the "
                           "dictionary's site, greedy or sampled (features/steering.h)",
                .choices = {"text", "dashboard", "quality", "steer"},
                .ownedByView = true},
            {.field = kCorpusTokens,
                .type = "int ≥ 1",
                .meaning = "features view: the corpus tokens the dashboard's pass reads (at most 10000000); the pass "
                           "is kept on disk, in the user's cache",
                .minimum = 1,
                .rule = "1 … 10000000",
                .check =
                    [](const ViewSpec &s) {
                        return s.get(kCorpusTokens) > 10'000'000 ? std::string("corpus_tokens: at most 10000000")
                                                                 : std::string();
                    },
                .ownedByView = true},
            {.field = kCorpusFile,
                .type = "string",
                .meaning = "features view: the corpus of the dashboard and quality pages, a UTF-8 text file; empty: "
                           "the built-in corpus (the quality page's held-out measures stay on the built-in corpus's "
                           "held-out part)",
                .ownedByView = true},
            {.field = kSteerStrength,
                .type = "number ≥ 0",
                .meaning = "features view, steer: how many times the feature's decoder row is added to the stream "
                           "at every position; with `steer_clamp`, the value the feature is clamped at (0 switches it "
                           "off)",
                .maximum = 1e4,
                .zeroAllowed = true,
                .ownedByView = true},
            {.field = kSteerClamp,
                .type = "bool",
                .meaning = "features view, steer: clamp the feature at `steer_strength` (the site re-encoded and the "
                           "difference its decoder row makes added) instead of adding its row",
                .ownedByView = true},
            {.field = kSteerTokens,
                .type = "int ≥ 1",
                .meaning = "features view, steer: the tokens each continuation adds (through the KV cache, the "
                           "steering made at every position; stops at the context's end)",
                .minimum = 1,
                .rule = "1 … 512",
                .check =
                    [](const ViewSpec &s) {
                        return s.get(kSteerTokens) > 512 ? std::string("steer_tokens: at most 512") : std::string();
                    },
                .ownedByView = true},
            {.field = kSteerMeansA,
                .type = "string",
                .meaning = "features view, steer: prompts separated by |; with `steer_means_b`, the steering adds "
                           "`steer_strength` times the difference of the site's mean rows over these and over those "
                           "(every position of every prompt) instead of a feature's row",
                .ownedByView = true},
            {.field = kSteerMeansB,
                .type = "string",
                .meaning = "features view, steer: the prompts whose mean site row is taken away (separated by |)",
                .ownedByView = true},
            {.field = kSteerTemperature,
                .type = "number ≥ 0",
                .meaning = "features view, steer: 0, both continuations take the most likely token; above 0, both "
                           "sample softmax(z / T) from `steer_seed`, so that they part where the steering moves the "
                           "odds",
                .maximum = 5,
                .zeroAllowed = true,
                .ownedByView = true},
            {.field = kSteerSeed,
                .type = "int ≥ 0",
                .meaning = "features view, steer: the seed both sampled continuations draw from",
                .ownedByView = true}}};
}

} // namespace atlas::views::features
