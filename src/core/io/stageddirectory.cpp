#include "io/stageddirectory.h"

#include "util/error.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

namespace atlas {

namespace fs = std::filesystem;

namespace {

void syncDirectory(const fs::path &dir)
{
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

} // namespace

StagedDirectory::StagedDirectory(const std::string &target, const std::string &marker)
{
    stage(target, [&marker](const std::string &dir) -> std::string {
        std::error_code ec;
        if (fs::is_empty(dir, ec) || fs::exists(fs::path(dir) / marker, ec))
            return {};
        return dir + ": the directory holds other files (no " + marker
            + "); choose a new or empty directory, or one an earlier run wrote";
    });
}

StagedDirectory::StagedDirectory(const std::string &target, const std::vector<std::string> &ownFiles)
{
    stage(target, [&ownFiles](const std::string &dir) -> std::string {
        std::error_code ec;
        for (const auto &entry : fs::directory_iterator(dir, ec)) {
            const std::string name = entry.path().filename().string();
            if (std::find(ownFiles.begin(), ownFiles.end(), name) == ownFiles.end())
                return dir + ": the directory holds " + name
                    + ", which this command does not write; choose a new or empty directory, or one it wrote";
        }
        return {};
    });
}

void StagedDirectory::stage(const std::string &target, const std::function<std::string(const std::string &)> &refusal)
{
    if (target.empty())
        throw Error("the output directory needs a name");
    std::error_code ec;
    fs::path path(target);
    if (fs::is_symlink(path, ec)) // replace what the link points to, and keep the link
        path = fs::canonical(path, ec);
    path = fs::absolute(path, ec).lexically_normal();
    if (!path.has_filename())
        path = path.parent_path();
    m_target = path.string();
    if (fs::exists(path, ec)) {
        if (!fs::is_directory(path, ec))
            throw Error(m_target + ": exists and is not a directory");
        if (const std::string why = refusal(m_target); !why.empty())
            throw Error(why);
    }
    const fs::path parent = path.parent_path();
    fs::create_directories(parent, ec);
    if (ec)
        throw Error(parent.string() + ": cannot create directory: " + ec.message());
    const std::string prefix = "." + path.filename().string() + ".tmp-";
    for (const auto &entry : fs::directory_iterator(parent, ec)) // orphans of killed runs
        if (entry.path().filename().string().starts_with(prefix))
            fs::remove_all(entry.path(), ec);
    std::string tmpl = (parent / (prefix + "XXXXXX")).string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    if (!::mkdtemp(name.data()))
        throw Error(parent.string() + ": cannot create a directory to write into: " + std::strerror(errno));
    m_staging = name.data();
    ::chmod(m_staging.c_str(), 0755 & ~0022); // mkdtemp makes 0700; a dump is as readable as any directory
}

StagedDirectory::~StagedDirectory()
{
    std::error_code ec;
    if (!m_staging.empty())
        fs::remove_all(m_staging, ec); // uncommitted files, or after commit the old content
}

void StagedDirectory::commit()
{
    if (m_committed)
        throw Error(m_target + ": already committed");
    syncDirectory(m_staging);
    std::error_code ec;
    if (!fs::exists(m_target, ec)) {
        if (::rename(m_staging.c_str(), m_target.c_str()) != 0)
            throw Error(m_target + ": cannot move the new directory into place: " + std::strerror(errno));
        m_staging.clear();
    } else if (::renameat2(AT_FDCWD, m_staging.c_str(), AT_FDCWD, m_target.c_str(), RENAME_EXCHANGE) != 0) {
        if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
            throw Error(m_target + ": cannot swap in the new directory: " + std::strerror(errno));
        const std::string old = m_staging + "-old";
        if (::rename(m_target.c_str(), old.c_str()) != 0)
            throw Error(m_target + ": cannot move the old directory aside: " + std::strerror(errno));
        if (::rename(m_staging.c_str(), m_target.c_str()) != 0) {
            const int err = errno;
            ::rename(old.c_str(), m_target.c_str());
            throw Error(m_target + ": cannot move the new directory into place: " + std::strerror(err));
        }
        m_staging = old; // the destructor removes the old content
    }
    // after an exchange, m_staging holds the old content, which the destructor removes
    m_committed = true;
    syncDirectory(fs::path(m_target).parent_path());
    std::error_code ignored;
    if (!m_staging.empty())
        fs::remove_all(m_staging, ignored);
    m_staging.clear();
}

} // namespace atlas
