#include "model/builtinmodels.h"

#include "io/atomicfile.h"
#include "io/gguf.h"
#include "io/limits.h"
#include "io/modelfile.h"
#include "io/resourcepaths.h"
#include "model/ggufmodel.h"
#include "model/model.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace atlas {

namespace fs = std::filesystem;

namespace {

std::vector<std::pair<std::string, std::string>> builtinTokenizers() // name, directory
{
    std::vector<std::pair<std::string, std::string>> found;
    for (const std::string &dir : resourceSearchPath("ATLAS_TOKENIZERS_DIR", "tokenizers")) {
        std::error_code ec;
        for (const auto &entry : fs::directory_iterator(dir, ec)) {
            const std::string name = entry.path().filename().string();
            if (entry.is_directory(ec)
                && std::none_of(found.begin(), found.end(), [&](auto &f) { return f.first == name; }))
                found.emplace_back(name, entry.path().string());
        }
    }
    std::sort(found.begin(), found.end());
    return found;
}

} // namespace

std::vector<std::string> builtinModelSearchPath()
{
    return resourceSearchPath("ATLAS_MODELS_DIR", "models");
}

std::vector<BuiltinModel> builtinModels()
{
    std::vector<BuiltinModel> models;
    for (const std::string &dir : builtinModelSearchPath()) {
        std::error_code ec;
        for (const auto &entry : fs::directory_iterator(dir, ec)) {
            const fs::path config = entry.path() / "config.json";
            const bool gguf = entry.path().extension() == ".gguf" && entry.is_regular_file(ec);
            const std::string name = (gguf ? entry.path().stem() : entry.path().filename()).string();
            if ((!gguf && !fs::exists(config))
                || std::any_of(models.begin(), models.end(), [&](auto &m) { return m.name == name; }))
                continue;
            if (gguf) { // a model written by `save`, its description in general.description
                BuiltinModel m {name, entry.path().string(), ""};
                try {
                    const GgufFile file(m.directory);
                    m.description = file.has("general.description") ? file.string("general.description")
                                                                    : "(a GGUF file without general.description)";
                } catch (const Error &e) {
                    m.description = std::string("(unreadable: ") + e.what() + ")";
                }
                models.push_back(std::move(m));
                continue;
            }
            BuiltinModel m {name, entry.path().string(), ""};
            try {
                m.description
                    = ModelConfig::fromJson(readModelFile(config.string(), limits::kSpecBytes), config.string())
                          .description;
            } catch (const Error &e) {
                m.description = std::string("(unreadable: ") + e.what() + ")";
            }
            models.push_back(std::move(m));
        }
    }
    std::sort(models.begin(), models.end(), [](auto &a, auto &b) { return a.name < b.name; });
    return models;
}

std::string resolveModel(const std::string &nameOrDirectory)
{
    if (fs::is_directory(nameOrDirectory) || isGgufFile(nameOrDirectory))
        return nameOrDirectory;
    std::string names;
    for (const BuiltinModel &m : builtinModels()) {
        if (m.name == nameOrDirectory)
            return m.directory;
        names += (names.empty() ? "" : ", ") + m.name;
    }
    throw Error("model '" + nameOrDirectory + "': neither a directory, a GGUF file nor a built-in model (built-in: "
        + (names.empty() ? std::string("none found") : names) + ")");
}

namespace {

// A Hugging Face BERT or T5 names its special tokens in its tokenizer, not in config.json: the masked-LM views and the
// pretraining objectives read [MASK], [CLS], [SEP] and [PAD], or T5's sentinels <extra_id_0>, <extra_id_1> …, by name
// (ModelConfig::specialTokens), so they are taken from the directory's tokenizer, when it has one that knows them.
void namesSpecialTokensFromTokenizer(Model &model)
{
    const Family family = model.config.family;
    if ((family != Family::Bert && family != Family::T5) || !model.config.specialTokens.empty())
        return;
    std::unique_ptr<Tokenizer> tokenizer;
    try {
        tokenizer = tokenizerForModel(model);
    } catch (const Error &) {
        return; // no tokenizer: the model still runs on ids, and the views that need [MASK] say so
    }
    if (!tokenizer->canEncode())
        return;
    const auto known = [&](const std::string &name) {
        std::vector<int> ids;
        try {
            ids = tokenizer->encode(name);
        } catch (const Error &) {
            return false;
        }
        if (ids.size() != 1 || ids.front() < 0 || ids.front() >= model.config.vocab
            || tokenizer->role(ids.front()) != TokenRole::Special)
            return false;
        model.config.specialTokens.push_back({name, ids.front()});
        return true;
    };
    if (family == Family::Bert) {
        for (const char *name : {"[PAD]", "[CLS]", "[SEP]", "[MASK]"})
            known(name);
    } else { // T5: <extra_id_0> … as far as they run (100 in T5's tokenizer)
        for (const char *name : {"<pad>", "</s>", "<unk>"})
            known(name);
        for (int i = 0; i < 1000 && known("<extra_id_" + std::to_string(i) + ">"); ++i) { }
    }
    std::sort(model.config.specialTokens.begin(), model.config.specialTokens.end(),
        [](const auto &a, const auto &b) { return a.second < b.second; });
}

} // namespace

std::shared_ptr<const Model> loadModel(const std::string &nameOrDirectory)
{
    auto model = std::make_shared<Model>(Model::load(resolveModel(nameOrDirectory)));
    if (!fs::is_directory(nameOrDirectory) && !isGgufFile(nameOrDirectory)) // a built-in model's name
        model->name = nameOrDirectory;
    namesSpecialTokensFromTokenizer(*model);
    return model;
}

std::vector<std::string> builtinTokenizerNames()
{
    std::vector<std::string> names;
    for (const auto &[name, directory] : builtinTokenizers())
        names.push_back(name);
    return names;
}

std::string resolveTokenizer(const std::string &nameOrDirectory)
{
    std::error_code ec;
    if (fs::is_directory(nameOrDirectory, ec) || isGgufFile(nameOrDirectory))
        return nameOrDirectory;
    std::string names;
    for (const auto &[name, directory] : builtinTokenizers()) {
        if (name == nameOrDirectory)
            return directory;
        names += (names.empty() ? "" : ", ") + name;
    }
    for (const BuiltinModel &m : builtinModels())
        if (m.name == nameOrDirectory)
            return m.directory;
    throw Error("tokenizer '" + nameOrDirectory + "': neither a directory, a GGUF file, a built-in tokenizer ("
        + (names.empty() ? std::string("none found") : names) + ") nor a built-in model");
}

} // namespace atlas
