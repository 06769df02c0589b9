#include "io/resourcepaths.h"

#include <cstdlib>
#include <filesystem>

namespace atlas {

namespace fs = std::filesystem;

std::vector<std::string> resourceSearchPath(const char *environment, const char *kind)
{
    std::vector<std::string> dirs;
    if (const char *env = std::getenv(environment); env && *env)
        dirs.emplace_back(env);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        dirs.push_back((exe.parent_path().parent_path() / "share/transformer-atlas" / kind).string());
    return dirs;
}

std::string resourceDirectory(const char *environment, const char *kind)
{
    const std::vector<std::string> dirs = resourceSearchPath(environment, kind);
    for (const std::string &dir : dirs) {
        std::error_code ec;
        if (fs::is_directory(dir, ec))
            return dir;
    }
    return dirs.empty() ? std::string("share/transformer-atlas/") + kind : dirs.back();
}

std::string userCacheDirectory()
{
    const auto set = [](const char *name) {
        const char *value = std::getenv(name);
        return value && *value ? std::string(value) : std::string();
    };
    if (std::string dir = set("ATLAS_CACHE_DIR"); !dir.empty())
        return dir;
    if (const std::string xdg = set("XDG_CACHE_HOME"); !xdg.empty())
        return (fs::path(xdg) / "transformer-atlas").string();
    if (const std::string home = set("HOME"); !home.empty())
        return (fs::path(home) / ".cache/transformer-atlas").string();
    return {};
}

} // namespace atlas
