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

} // namespace atlas
