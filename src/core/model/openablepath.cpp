#include "model/openablepath.h"

#include "model/builtinmodels.h"
#include "model/ggufmodel.h"

#include <algorithm>
#include <filesystem>

namespace atlas {

namespace fs = std::filesystem;

OpenablePath openablePath(const std::string &path)
{
    using Kind = OpenablePath::Kind;
    std::error_code ec;
    if (fs::is_directory(path, ec) || isGgufFile(path))
        return {Kind::Model, path};
    if (!fs::is_regular_file(path, ec)) { // a built-in model's name, read from its folder only then (a drag asks often)
        const std::vector<BuiltinModel> builtin = builtinModels();
        const bool named
            = std::any_of(builtin.begin(), builtin.end(), [&](const BuiltinModel &m) { return m.name == path; });
        return named ? OpenablePath {Kind::Model, path} : OpenablePath {};
    }
    const fs::path file(path);
    const std::string folder = file.has_parent_path() ? file.parent_path().string() : std::string(".");
    if (file.filename() == "config.json"
        || (file.extension() == ".safetensors" && fs::is_regular_file(fs::path(folder) / "config.json", ec)))
        return {Kind::Model, folder};
    if (file.extension() == ".md")
        return {Kind::Lesson, path};
    if (file.extension() == ".json")
        return {Kind::ViewSpec, path};
    return {};
}

} // namespace atlas
