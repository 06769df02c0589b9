#include "features/saefile.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/npz.h"
#include "io/safetensors.h"
#include "io/stageddirectory.h"
#include "util/boundednumber.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace atlas {

namespace {

constexpr const char *kConfig = "cfg.json";
constexpr const char *kWeights = "sae_weights.safetensors";
constexpr const char *kState = "training_state.safetensors";

// The run's identity, as saved: a JSON object's keys in order; names the first key whose value differs.
std::string firstDifference(const std::string &saved, const std::string &run)
{
    const nlohmann::json a = nlohmann::json::parse(saved, nullptr, false),
                         b = nlohmann::json::parse(run, nullptr, false);
    if (a.is_object() && b.is_object())
        for (const auto &[key, value] : b.items())
            if (!a.contains(key) || a[key] != value)
                return "'" + key + "' was " + (a.contains(key) ? a[key].dump() : std::string("absent")) + ", now "
                    + value.dump();
    return "another run";
}

} // namespace

SaeDirectory loadSaeDirectory(const std::string &directory)
{
    const std::string configPath = (std::filesystem::path(directory) / kConfig).string();
    const nlohmann::json cfg = parseJson(readFile(configPath, size_t(16) << 20), configPath);
    const JsonPlace place {configPath, ""};
    if (!cfg.is_object())
        place.fail("must be a JSON object");
    SaeDirectory out;
    std::string architecture = jsonString(cfg, "architecture", place, "standard");
    if (architecture == "skip_transcoder")
        place.at("architecture")
            .fail("is \"skip_transcoder\": a transcoder's skip connection (W_skip) is not read; \"transcoder\" and "
                  "\"jumprelu_transcoder\" are");
    const bool transcoder = architecture == "transcoder" || architecture == "jumprelu_transcoder";
    if (transcoder)
        architecture = architecture == "transcoder" ? "standard" : "jumprelu";
    const nlohmann::json *kwargs = optionalJsonMember(cfg, "activation_fn_kwargs");
    const std::string activation = jsonString(cfg, "activation_fn_str", place, "relu");
    if (architecture == "standard" && activation == "topk") { // SAELens 5's TopK
        out.sae.architecture = SaeArchitecture::TopK;
        if (!kwargs)
            place.at("activation_fn_kwargs").fail("is missing: a TopK SAE names its k there");
        out.sae.k = int(jsonInteger(*kwargs, "k", place.at("activation_fn_kwargs"), 1, 1 << 24, 0));
    } else {
        try {
            out.sae.architecture = saeArchitectureFromName(architecture);
        } catch (const Error &e) {
            place.at("architecture").fail(std::string("is not read here: ") + e.what());
        }
        if (out.sae.architecture == SaeArchitecture::TopK)
            out.sae.k = int(jsonInteger(cfg, "k", place, 1, 1 << 24, 0));
        if (out.sae.architecture == SaeArchitecture::TopK && out.sae.k == 0 && kwargs)
            out.sae.k = int(jsonInteger(*kwargs, "k", place.at("activation_fn_kwargs"), 1, 1 << 24, 0));
        if (out.sae.architecture == SaeArchitecture::TopK && out.sae.k == 0)
            place.at("k").fail("is missing: a TopK SAE keeps its k largest features");
    }
    // A transcoder's b_dec lives where it writes, so SAELens never takes it from the input.
    out.sae.applyDecoderBiasToInput = !transcoder && jsonBool(cfg, "apply_b_dec_to_input", place, true);
    if (const std::string n = jsonString(cfg, "normalize_activations", place, "none"); n != "none")
        place.at("normalize_activations")
            .fail("is \"" + n
                + "\": activations rescaled at run time are not read; fold the scale into the weights "
                  "and save with \"none\"");
    if (const std::string r = jsonString(cfg, "reshape_activations", place, "none"); r != "none")
        place.at("reshape_activations").fail("is \"" + r + "\": per-head (hook_z) dictionaries are not read");
    const nlohmann::json *meta = optionalJsonMember(cfg, "meta");
    // A hook named under "meta" (version 6) or at the top (version 5; a transcoder's hook_name_out in either).
    const auto site = [&](const char *key, const char *missing, const char *missingAt) {
        const nlohmann::json *hook = meta ? optionalJsonMember(*meta, key) : nullptr;
        if (!hook)
            hook = optionalJsonMember(cfg, key);
        if (!hook)
            place.at(missingAt).fail(std::string("is missing: ") + missing);
        try {
            return saeSiteFromHook(jsonString(*hook, place.at(key)));
        } catch (const Error &e) {
            place.at(key).fail(e.what());
        }
    };
    out.site = site("hook_name", "the site the dictionary reads (blocks.L.hook_resid_post …)", "meta.hook_name");
    if (transcoder) {
        out.writes = site("hook_name_out", "the site a transcoder writes (blocks.L.hook_mlp_out)", "hook_name_out");
        try {
            refuseTranscoderSites(out.site, *out.writes);
        } catch (const Error &e) {
            place.at("hook_name_out").fail(e.what());
        }
    }
    const nlohmann::json *model
        = meta ? optionalJsonMember(*meta, "model_name") : optionalJsonMember(cfg, "model_name");
    if (model && model->is_string())
        out.modelName = model->get<std::string>();
    if (const nlohmann::json *t = optionalJsonMember(cfg, "atlas_training"))
        out.training = *t;

    const std::string weightsPath = (std::filesystem::path(directory) / kWeights).string();
    const SafetensorsFile weights(weightsPath);
    const auto tensor = [&](const char *name) {
        if (!weights.contains(name))
            throw Error(weightsPath + ": no tensor " + name + " (a " + saeArchitectureName(out.sae.architecture)
                + " SAE has W_enc, b_enc, W_dec, b_dec"
                + (out.sae.architecture == SaeArchitecture::JumpRelu ? " and threshold)" : ")"));
        return weights.tensor(name, SafetensorsFile::NonFinite::Refuse);
    };
    out.sae.wEnc = tensor("W_enc");
    out.sae.bEnc = tensor("b_enc");
    out.sae.wDec = tensor("W_dec");
    out.sae.bDec = tensor("b_dec");
    if (out.sae.architecture == SaeArchitecture::JumpRelu)
        out.sae.threshold = tensor("threshold");
    out.sae.validate(weightsPath);
    const int64_t dIn = jsonInteger(cfg, "d_in", place, 1, int64_t(1) << 24, out.sae.inputSize());
    const int64_t dSae = jsonInteger(cfg, "d_sae", place, 1, int64_t(1) << 28, out.sae.width());
    if (dIn != out.sae.inputSize() || dSae != out.sae.width())
        place.fail("gives d_in " + std::to_string(dIn) + " and d_sae " + std::to_string(dSae) + ", but W_enc is "
            + out.sae.wEnc.shapeString());
    if (transcoder && jsonInteger(cfg, "d_out", place, 1, int64_t(1) << 24, out.sae.wDec.dim(1)) != out.sae.wDec.dim(1))
        place.at("d_out").fail("is not W_dec's " + out.sae.wDec.shapeString() + " second dimension");
    return out;
}

std::string SaeDirectory::kindName() const
{
    return std::string(saeArchitectureName(sae.architecture)) + (writes ? " transcoder" : "");
}

SaeDirectory loadGemmaScope(const std::string &npz, const SaeSite &site)
{
    std::map<std::string, Tensor> arrays = readNpz(npz);
    SaeDirectory out;
    out.site = site;
    out.sae.architecture = SaeArchitecture::JumpRelu;
    out.sae.applyDecoderBiasToInput = false;
    const auto take = [&](const char *name) {
        const auto it = arrays.find(name);
        if (it == arrays.end())
            throw Error(npz + ": no array " + name
                + " (Gemma Scope's params.npz holds W_enc, W_dec, b_enc, b_dec and threshold)");
        for (int64_t i = 0; i < it->second.numel(); ++i)
            if (!std::isfinite(it->second.data()[i]))
                throw Error(
                    npz + ": " + name + " holds a value that is not a finite number, at element " + std::to_string(i));
        return std::move(it->second);
    };
    out.sae.wEnc = take("W_enc");
    out.sae.wDec = take("W_dec");
    out.sae.bEnc = take("b_enc");
    out.sae.bDec = take("b_dec");
    out.sae.threshold = take("threshold");
    out.sae.validate(npz);
    return out;
}

SaeDirectory loadDictionary(const std::string &path, const std::optional<SaeSite> &site)
{
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
        SaeDirectory d = loadSaeDirectory(path);
        if (site && !(*site == d.site))
            throw Error(path + ": the dictionary reads " + d.site.hookName() + ", not " + site->hookName());
        return d;
    }
    if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npz") == 0) {
        if (!site)
            throw Error(
                path + ": a params.npz does not say where it reads: give the site (blocks.L.hook_resid_post …)");
        SaeDirectory d = loadGemmaScope(path, *site);
        if (site->kind == SaeSiteKind::MlpIn)
            d.writes = SaeSite {SaeSiteKind::MlpOut, site->layer};
        return d;
    }
    throw Error(path + ": not a dictionary (a SAELens directory with cfg.json, or Gemma Scope's params.npz)");
}

std::vector<std::string> modelDictionaries(const Model &model)
{
    std::vector<std::string> names;
    std::error_code error;
    const std::filesystem::path folder = std::filesystem::path(model.directory) / "saes";
    if (model.directory.empty() || !std::filesystem::is_directory(folder, error))
        return names;
    for (const auto &entry : std::filesystem::directory_iterator(folder, error))
        if (entry.is_directory(error) && std::filesystem::exists(entry.path() / kConfig, error))
            names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string dictionaryPath(const Model &model, const std::string &sae)
{
    std::error_code error;
    if (sae.empty() || std::filesystem::exists(sae, error) || model.directory.empty())
        return sae;
    const std::filesystem::path own = std::filesystem::path(model.directory) / "saes" / sae;
    return std::filesystem::is_directory(own, error) ? own.string() : sae;
}

void saveSaeDirectory(
    const std::string &directory, const SaeDirectory &s, const SaeTrainingState *state, const std::string &run)
{
    s.sae.validate("the SAE to save");
    const std::string architecture = saeArchitectureName(s.sae.architecture);
    if (s.writes && s.sae.architecture == SaeArchitecture::TopK)
        throw Error("the SAE to save: SAELens has no TopK transcoder to save it as");
    if (s.writes && s.sae.applyDecoderBiasToInput)
        throw Error("the SAE to save: a transcoder does not take b_dec from its input");
    nlohmann::json cfg = {{"architecture",
                              !s.writes                                             ? architecture
                                  : s.sae.architecture == SaeArchitecture::Standard ? std::string("transcoder")
                                                                                    : architecture + "_transcoder"},
        {"d_in", s.sae.inputSize()}, {"d_sae", s.sae.width()}, {"dtype", "float32"}, {"device", "cpu"},
        {"apply_b_dec_to_input", s.sae.applyDecoderBiasToInput}, {"normalize_activations", "none"},
        {"reshape_activations", "none"},
        {"meta", {{"model_name", s.modelName}, {"hook_name", s.site.hookName()}, {"hook_layer", s.site.layer}}}};
    if (s.sae.architecture == SaeArchitecture::TopK)
        cfg["k"] = s.sae.k;
    if (s.writes) {
        cfg["hook_name_out"] = s.writes->hookName();
        cfg["hook_layer_out"] = s.writes->layer;
        cfg["d_out"] = s.sae.wDec.dim(1);
    }
    if (!s.training.is_null())
        cfg["atlas_training"] = s.training;
    StagedDirectory staged(directory, "sae");
    std::map<std::string, const Tensor *> tensors {
        {"W_enc", &s.sae.wEnc}, {"b_enc", &s.sae.bEnc}, {"W_dec", &s.sae.wDec}, {"b_dec", &s.sae.bDec}};
    if (s.sae.architecture == SaeArchitecture::JumpRelu)
        tensors["threshold"] = &s.sae.threshold;
    writeSafetensors((std::filesystem::path(staged.path()) / kWeights).string(), tensors);
    writeFileAtomically((std::filesystem::path(staged.path()) / kConfig).string(), cfg.dump(2) + "\n");
    if (state) {
        std::map<std::string, const Tensor *> kept {{"W_enc", &state->sae.wEnc}, {"b_enc", &state->sae.bEnc},
            {"W_dec", &state->sae.wDec}, {"b_dec", &state->sae.bDec}};
        if (state->sae.architecture == SaeArchitecture::JumpRelu) {
            kept["threshold"] = &state->sae.threshold;
            kept["log_threshold"] = &state->logThreshold;
        }
        for (const auto &[name, t] : state->moments)
            kept["adam." + name] = &t;
        Tensor quiet({int64_t(state->quiet.size())});
        std::copy(state->quiet.begin(), state->quiet.end(), quiet.data()); // exact: at most 10 000 000 steps
        kept["quiet"] = &quiet;
        char scale[32]; // 9 significant digits: the float itself again
        std::snprintf(scale, sizeof scale, "%.9g", double(state->scale));
        writeSafetensors((std::filesystem::path(staged.path()) / kState).string(), kept,
            {{"step", std::to_string(state->step)}, {"scale", scale}, {"run", run}});
    }
    staged.commit();
}

std::string savedTrainingRun(const std::string &directory)
{
    const std::string path = (std::filesystem::path(directory) / kState).string();
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error))
        return {};
    try {
        const SafetensorsFile file(path);
        const auto it = file.metadata().find("run");
        return it == file.metadata().end() ? std::string() : it->second;
    } catch (const Error &) {
        return {};
    }
}

std::optional<SaeTrainingState> readSaeTrainingState(const std::string &directory, const std::string &run)
{
    const std::string path = (std::filesystem::path(directory) / kState).string();
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error))
        return std::nullopt;
    const SaeDirectory saved = loadSaeDirectory(directory);
    const SafetensorsFile file(path);
    const auto meta = [&](const char *key) {
        const auto it = file.metadata().find(key);
        if (it == file.metadata().end())
            throw Error(path + ": its metadata has no '" + key + "'");
        return it->second;
    };
    if (meta("run") != run)
        throw Error(path + ": the state of another run (" + firstDifference(meta("run"), run)
            + "): run train-sae with the options of the run it continues, or choose another --out");
    SaeTrainingState state;
    state.step = boundedInteger(meta("step"), path + ": metadata 'step'", 1, 10'000'000);
    state.scale = float(boundedNumber(meta("scale"), path + ": metadata 'scale'", 1e-30, 1e30));
    const auto tensor = [&](const std::string &name, const Shape &shape) {
        if (!file.contains(name))
            throw Error(path + ": tensor '" + name + "' is missing");
        Tensor t = file.tensor(name, SafetensorsFile::NonFinite::Refuse);
        if (t.shape() != shape)
            throw Error(path + ": tensor '" + name + "' has shape " + t.shapeString() + ", expected "
                + Tensor::shapeString(shape));
        return t;
    };
    state.sae = saved.sae;
    for (const auto &[name, field] : std::initializer_list<std::pair<const char *, Tensor SparseAutoencoder::*>> {
             {"W_enc", &SparseAutoencoder::wEnc}, {"b_enc", &SparseAutoencoder::bEnc},
             {"W_dec", &SparseAutoencoder::wDec}, {"b_dec", &SparseAutoencoder::bDec}})
        state.sae.*field = tensor(name, (saved.sae.*field).shape());
    std::map<std::string, Tensor *> parameters {
        {"W_enc", &state.sae.wEnc}, {"b_enc", &state.sae.bEnc}, {"W_dec", &state.sae.wDec}, {"b_dec", &state.sae.bDec}};
    if (saved.sae.architecture == SaeArchitecture::JumpRelu) {
        state.sae.threshold = tensor("threshold", saved.sae.threshold.shape());
        state.logThreshold = tensor("log_threshold", saved.sae.threshold.shape());
        parameters["log_threshold"] = &state.logThreshold;
    }
    for (const auto &[name, p] : parameters)
        for (const char *kind : {"m.", "v."}) {
            Tensor moment = tensor(std::string("adam.") + kind + name, p->shape());
            if (kind[0] == 'v'
                && std::any_of(moment.data(), moment.data() + moment.numel(), [](float v) { return v < 0; }))
                throw Error(path + ": tensor 'adam.v." + name + "' holds a negative second moment");
            state.moments[kind + name] = std::move(moment);
        }
    const Tensor quiet = tensor("quiet", {state.sae.width()});
    for (int64_t i = 0; i < quiet.numel(); ++i) {
        const float q = quiet.data()[i];
        if (!(q >= 0) || q > 1e7f || q != std::floor(q))
            throw Error(path + ": tensor 'quiet' holds " + std::to_string(q) + " at " + std::to_string(i)
                + ", not a count of steps");
        state.quiet.push_back(int(q));
    }
    for (const auto &[name, entry] : file.entries())
        if (!parameters.count(name) && name != "threshold" && name != "quiet"
            && !(name.rfind("adam.", 0) == 0 && state.moments.count(name.substr(5))))
            throw Error(path + ": tensor '" + name + "' belongs to no part of the state");
    state.sae.validate(path);
    return state;
}

std::string dictionaryStamp(const std::string &path)
{
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::path p(path);
    const std::string where = fs::absolute(p, error).string() + "=";
    if (!fs::is_directory(p, error))
        return where + fileStamp(path);
    return where + fileStamp((p / kConfig).string()) + "," + fileStamp((p / kWeights).string());
}

} // namespace atlas
