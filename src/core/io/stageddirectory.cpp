#include "io/stageddirectory.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "util/error.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
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

std::string StagedDirectory::refusal(const std::string &dir, const std::string &kind)
{
    std::error_code ec;
    if (fs::symlink_status(dir, ec).type() == fs::file_type::not_found || fs::is_empty(dir, ec))
        return {};
    const std::string choose = "; choose a new or empty directory, or one that transformer-atlas " + kind + " wrote";
    const fs::path markerPath = fs::path(dir) / kMarker;
    if (!fs::exists(markerPath, ec))
        return dir + ": the directory holds files that transformer-atlas did not write (it has no " + kMarker + ")"
            + choose;
    std::set<std::string> written;
    try {
        const nlohmann::json marker = parseJson(readFile(markerPath.string(), limits::kSpecBytes), markerPath.string());
        if (jsonString(marker, "program", markerPath.string()) != "transformer-atlas"
            || jsonString(marker, "output", markerPath.string()) != kind)
            return dir + ": the directory holds another kind of output than a " + kind + choose;
        const auto files = marker.find("files");
        if (files == marker.end() || !files->is_array())
            return markerPath.string() + ": key 'files' is not a list of file names" + choose;
        for (const nlohmann::json &name : *files) {
            if (!name.is_string())
                return markerPath.string() + ": key 'files' is not a list of file names" + choose;
            written.insert(name.get<std::string>());
        }
    } catch (const Error &e) {
        return std::string(e.what()) + choose;
    }
    for (const auto &entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name != kMarker && (!written.contains(name) || entry.is_symlink(ec) || !entry.is_regular_file(ec)))
            return dir + ": the directory holds " + name + ", which transformer-atlas did not write there" + choose;
    }
    if (ec)
        return dir + ": cannot list the directory: " + ec.message();
    return {};
}

StagedDirectory::StagedDirectory(const std::string &target, const std::string &kind)
    : m_kind(kind)
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
    const fs::file_status status = fs::status(path, ec);
    if (fs::exists(status)) {
        if (!fs::is_directory(status))
            throw Error(m_target + ": exists and is not a directory");
        if (const std::string why = refusal(m_target, kind); !why.empty())
            throw Error(why);
    } else if (ec && ec != std::errc::no_such_file_or_directory) {
        throw Error(m_target + ": " + ec.message());
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
    if (std::error_code ignored; fs::exists(m_target, ignored)) // a file may have appeared beside ours since
        if (const std::string why = refusal(m_target, m_kind); !why.empty())
            throw Error(why);
    std::error_code ec;
    nlohmann::json files = nlohmann::json::array();
    for (const auto &entry : fs::directory_iterator(m_staging, ec))
        files.push_back(entry.path().filename().string());
    if (ec)
        throw Error(m_target + ": cannot list the new files: " + ec.message());
    const nlohmann::json marker = {{"program", "transformer-atlas"}, {"output", m_kind}, {"files", files}};
    writeFileAtomically((fs::path(m_staging) / kMarker).string(), marker.dump(1) + "\n");
    syncDirectory(m_staging);
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
