#include "features/saefile.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/npz.h"
#include "io/safetensors.h"
#include "io/stageddirectory.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace atlas {

namespace {

constexpr const char *kConfig = "cfg.json";
constexpr const char *kWeights = "sae_weights.safetensors";

} // namespace

SaeDirectory loadSaeDirectory(const std::string &directory)
{
    const std::string configPath = (std::filesystem::path(directory) / kConfig).string();
    const nlohmann::json cfg = parseJson(readFile(configPath, size_t(16) << 20), configPath);
    const JsonPlace place {configPath, ""};
    if (!cfg.is_object())
        place.fail("must be a JSON object");
    SaeDirectory out;
    const std::string architecture = jsonString(cfg, "architecture", place, "standard");
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
    out.sae.applyDecoderBiasToInput = jsonBool(cfg, "apply_b_dec_to_input", place, true);
    if (const std::string n = jsonString(cfg, "normalize_activations", place, "none"); n != "none")
        place.at("normalize_activations")
            .fail("is \"" + n
                + "\": activations rescaled at run time are not read; fold the scale into the weights "
                  "and save with \"none\"");
    if (const std::string r = jsonString(cfg, "reshape_activations", place, "none"); r != "none")
        place.at("reshape_activations").fail("is \"" + r + "\": per-head (hook_z) dictionaries are not read");
    const nlohmann::json *meta = optionalJsonMember(cfg, "meta");
    const nlohmann::json *hook = meta ? optionalJsonMember(*meta, "hook_name") : nullptr;
    if (!hook)
        hook = optionalJsonMember(cfg, "hook_name");
    if (!hook)
        place.at("meta.hook_name").fail("is missing: the site the dictionary reads (blocks.L.hook_resid_post …)");
    try {
        out.site = saeSiteFromHook(jsonString(*hook, place.at("hook_name")));
    } catch (const Error &e) {
        place.at("hook_name").fail(e.what());
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
    return out;
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
        return loadGemmaScope(path, *site);
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

void saveSaeDirectory(const std::string &directory, const SaeDirectory &s)
{
    s.sae.validate("the SAE to save");
    nlohmann::json cfg = {{"architecture", saeArchitectureName(s.sae.architecture)}, {"d_in", s.sae.inputSize()},
        {"d_sae", s.sae.width()}, {"dtype", "float32"}, {"device", "cpu"},
        {"apply_b_dec_to_input", s.sae.applyDecoderBiasToInput}, {"normalize_activations", "none"},
        {"reshape_activations", "none"},
        {"meta", {{"model_name", s.modelName}, {"hook_name", s.site.hookName()}, {"hook_layer", s.site.layer}}}};
    if (s.sae.architecture == SaeArchitecture::TopK)
        cfg["k"] = s.sae.k;
    if (!s.training.is_null())
        cfg["atlas_training"] = s.training;
    StagedDirectory staged(directory, "sae");
    std::map<std::string, const Tensor *> tensors {
        {"W_enc", &s.sae.wEnc}, {"b_enc", &s.sae.bEnc}, {"W_dec", &s.sae.wDec}, {"b_dec", &s.sae.bDec}};
    if (s.sae.architecture == SaeArchitecture::JumpRelu)
        tensors["threshold"] = &s.sae.threshold;
    writeSafetensors((std::filesystem::path(staged.path()) / kWeights).string(), tensors);
    writeFileAtomically((std::filesystem::path(staged.path()) / kConfig).string(), cfg.dump(2) + "\n");
    staged.commit();
}

std::string dictionaryStamp(const std::string &path)
{
    std::error_code error;
    const std::filesystem::path p(path);
    const std::filesystem::path weights = std::filesystem::is_directory(p, error) ? p / "sae_weights.safetensors" : p;
    const auto time = std::filesystem::last_write_time(weights, error);
    return error ? std::string() : std::to_string(time.time_since_epoch().count());
}

} // namespace atlas
