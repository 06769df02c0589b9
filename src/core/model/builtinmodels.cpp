#include "model/builtinmodels.h"

#include "io/atomicfile.h"
#include "io/limits.h"
#include "model/model.h"
#include "util/error.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace atlas {

namespace fs = std::filesystem;

std::vector<std::string> builtinModelSearchPath()
{
    std::vector<std::string> dirs;
    if (const char *env = std::getenv("ATLAS_MODELS_DIR"))
        dirs.emplace_back(env);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        dirs.push_back((exe.parent_path() / "models").string());
        dirs.push_back((exe.parent_path().parent_path() / "share/transformer-atlas/models").string());
    }
    dirs.emplace_back(ATLAS_BUILTIN_MODELS_DIR);
    return dirs;
}

std::vector<BuiltinModel> builtinModels()
{
    std::vector<BuiltinModel> models;
    for (const std::string &dir : builtinModelSearchPath()) {
        std::error_code ec;
        for (const auto &entry : fs::directory_iterator(dir, ec)) {
            const fs::path config = entry.path() / "config.json";
            const std::string name = entry.path().filename().string();
            if (!fs::exists(config)
                || std::any_of(models.begin(), models.end(), [&](auto &m) { return m.name == name; }))
                continue;
            BuiltinModel m {name, entry.path().string(), ""};
            try {
                m.description
                    = ModelConfig::fromJson(readFile(config.string(), limits::kSpecBytes), config.string()).description;
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
    if (fs::is_directory(nameOrDirectory))
        return nameOrDirectory;
    std::string names;
    for (const BuiltinModel &m : builtinModels()) {
        if (m.name == nameOrDirectory)
            return m.directory;
        names += (names.empty() ? "" : ", ") + m.name;
    }
    throw Error("model '" + nameOrDirectory + "': neither a directory nor a built-in model (built-in: "
        + (names.empty() ? std::string("none found") : names) + ")");
}

std::shared_ptr<const Model> loadModel(const std::string &nameOrDirectory)
{
    auto model = std::make_shared<Model>(Model::load(resolveModel(nameOrDirectory)));
    if (!fs::is_directory(nameOrDirectory))
        model->name = nameOrDirectory;
    return model;
}

} // namespace atlas
