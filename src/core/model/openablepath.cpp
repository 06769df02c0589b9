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
    const std::vector<BuiltinModel> builtin = builtinModels();
    std::error_code ec;
    if (std::any_of(builtin.begin(), builtin.end(), [&](const BuiltinModel &m) { return m.name == path; })
        || fs::is_directory(path, ec) || isGgufFile(path))
        return {Kind::Model, path};
    if (!fs::is_regular_file(path, ec))
        return {};
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
