#include "io/modelfile.h"

#include "io/atomicfile.h"
#include "util/error.h"

#include <filesystem>
#include <vector>

#include <climits>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

namespace atlas {

namespace fs = std::filesystem;

namespace {

// Where `fd` leads, from /proc/self/fd (the file actually opened, so the answer cannot be raced), else "".
std::string openedPath(int fd)
{
    std::vector<char> buffer(PATH_MAX + 1);
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(link.c_str(), buffer.data(), buffer.size());
    return n > 0 && size_t(n) < buffer.size() ? std::string(buffer.data(), size_t(n)) : std::string();
}

std::string resolvedPath(const fs::path &path)
{
    std::error_code ec;
    const fs::path resolved = fs::canonical(path, ec);
    return ec ? std::string() : resolved.string();
}

bool isInside(const std::string &path, const std::string &root)
{
    return !root.empty() && path.size() > root.size() && path.starts_with(root)
        && (root.back() == '/' || path[root.size()] == '/');
}

// The link's own text, for the message ("../../blobs/ab12…"), or "" when `path` is not a link.
std::string linkText(const std::string &path)
{
    std::vector<char> buffer(PATH_MAX + 1);
    const ssize_t n = ::readlink(path.c_str(), buffer.data(), buffer.size());
    return n > 0 && size_t(n) < buffer.size() ? std::string(buffer.data(), size_t(n)) : std::string();
}

} // namespace

std::string modelLinkRoot(const std::string &directory)
{
    const std::string dir = resolvedPath(directory.empty() ? fs::path(".") : fs::path(directory));
    if (dir.empty())
        return dir;
    const fs::path snapshots = fs::path(dir).parent_path();
    std::error_code ec;
    if (snapshots.filename() == "snapshots" && fs::is_directory(snapshots.parent_path() / "blobs", ec))
        return snapshots.parent_path().string();
    return dir;
}

int openModelFile(const std::string &path)
{
    const int fd = openRegularFile(path);
    std::string opened = openedPath(fd);
    if (opened.empty())
        opened = resolvedPath(path);
    const fs::path directory = fs::path(path).parent_path();
    const std::string root = modelLinkRoot(directory.string());
    if (isInside(opened, root))
        return fd;
    ::close(fd);
    const std::string text = linkText(path);
    const std::string where = root != resolvedPath(directory.empty() ? fs::path(".") : directory)
        ? "outside the Hugging Face cache " + root
        : "outside the model's directory " + (root.empty() ? directory.string() : root);
    throw Error(path
        + (text.empty() ? ": leads through a symbolic link to " + opened
                        : ": a symbolic link to '" + text + "' (" + opened + ")")
        + ", " + where
        + ": refused (a model's files may link only within its directory, or within the Hugging Face cache holding "
          "it: snapshots/<revision>/ to blobs/)");
}

std::string readModelFile(const std::string &path, size_t maxBytes)
{
    return readDescriptor(openModelFile(path), path, maxBytes);
}

} // namespace atlas
