#include "train/checkpointdirectory.h"

#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

namespace atlas {

namespace fs = std::filesystem;

namespace {

constexpr const char *kPointer = "checkpoint.json";
constexpr const char *kSets = "checkpoints";
// The files of a checkpoint that also make DIR a model directory, replaced after each commit (tokenizer.model: a
// task with a tokenizer of its own, train/task.h).
constexpr const char *kModelFiles[] = {"model.safetensors", "config.json", "tokenizer.model"};
// Files of the layout before checkpoint sets, stale once DIR has a checkpoint.json.
constexpr const char *kLegacyFiles[] = {"optimizer.safetensors", "trainer.json"};
// Written first into every staged checkpoint: only a directory carrying it is ever removed from checkpoints/.
constexpr const char *kMark = ".transformer-atlas-checkpoint";
// What a checkpoint's directory may hold besides the mark (Trainer::save's files and their temporaries).
constexpr const char *kCheckpointFiles[]
    = {"config.json", "model.safetensors", "optimizer.safetensors", "trainer.json", "tokenizer.model"};

[[noreturn]] void failErrno(const std::string &path, const std::string &what)
{
    throw Error(path + ": " + what + ": " + std::strerror(errno));
}

void syncPath(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

// `target` replaced by a hard link to `source` (a copy where the file system has no hard links), atomically.
void replaceWithLink(const fs::path &source, const fs::path &target)
{
    std::string tmpl = (target.parent_path() / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data()); // reserves a unique name
    if (fd < 0)
        failErrno(target.string(), "cannot create a temporary file");
    ::close(fd);
    ::unlink(name.data());
    if (::link(source.c_str(), name.data()) != 0) {
        writeFileAtomically(target.string(), readFile(source.string()));
        return;
    }
    if (::rename(name.data(), target.c_str()) != 0) {
        ::unlink(name.data());
        failErrno(target.string(), "cannot replace file");
    }
}

// A temporary file this program makes in DIR (writeFileAtomically's ".NAME.tmp-XXXXXX", the write test): DIR may be
// a directory the user chose for other things too, so only these names are removed there.
bool isOurTemporary(const std::string &name)
{
    for (const char *file : {"config.json", "model.safetensors", "optimizer.safetensors", "trainer.json",
             "tokenizer.model", "checkpoint.json", "write-test"})
        if (name.starts_with(std::string(".") + file + ".tmp-"))
            return true;
    return false;
}

// A directory in checkpoints/ this program wrote: it carries the mark and holds only a checkpoint's files (regular
// files, never links), so a user's directory of the same name, or one a user added a file to, is kept.
bool isOurCheckpoint(const fs::path &dir)
{
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(dir, ec)) || !fs::is_regular_file(fs::symlink_status(dir / kMark, ec)))
        return false;
    for (const auto &entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        bool known = name == kMark;
        for (const char *file : kCheckpointFiles)
            known = known || name == file || name.starts_with(std::string(".") + file + ".tmp-");
        if (!known || !fs::is_regular_file(fs::symlink_status(entry.path(), ec)))
            return false;
    }
    return !ec;
}

// Removes one of our checkpoints, its mark last: a kill part-way leaves the mark beside what remains (removed at the
// next clean-up) or an empty directory, never a marked checkpoint's files without their mark.
void removeCheckpoint(const fs::path &dir)
{
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(dir, ec))
        if (entry.path().filename() != kMark)
            fs::remove(entry.path(), ec);
    fs::remove(dir / kMark, ec);
    fs::remove(dir, ec);
}

} // namespace

CheckpointDirectory::CheckpointDirectory(std::string directory)
    : m_directory(std::move(directory))
{
    if (m_directory.empty())
        throw Error("a checkpoint directory needs a name");
}

std::string CheckpointDirectory::current() const
{
    const fs::path pointer = fs::path(m_directory) / kPointer;
    std::error_code ec;
    if (!fs::exists(pointer, ec))
        return m_directory;
    const nlohmann::json j = parseJson(readFile(pointer.string(), limits::kSpecBytes), pointer.string());
    const std::string relative = jsonString(j, "checkpoint", pointer.string());
    const fs::path rel(relative);
    const auto first = rel.begin();
    if (rel.is_absolute() || std::distance(rel.begin(), rel.end()) != 2 || *first != kSets
        || !rel.filename().string().starts_with("step-"))
        throw Error(pointer.string() + ": key 'checkpoint': '" + relative + "' is not a directory in " + kSets + "/");
    const fs::path dir = fs::path(m_directory) / rel;
    if (!fs::is_directory(dir, ec))
        throw Error(pointer.string() + ": key 'checkpoint': " + dir.string() + " is missing");
    return dir.string();
}

void CheckpointDirectory::checkOwned() const
{
    const fs::path dir(m_directory);
    std::error_code ec;
    if (!fs::is_directory(dir, ec) || fs::exists(dir / kPointer, ec) || fs::exists(dir / "trainer.json", ec))
        return;
    // A run killed in its first save, before checkpoint.json: checkpoints/ holds only our marked or empty stages.
    if (fs::is_directory(fs::symlink_status(dir / kSets, ec)) && !fs::exists(dir / "config.json", ec)
        && !fs::exists(dir / "model.safetensors", ec)) {
        bool ours = true;
        for (const auto &entry : fs::directory_iterator(dir / kSets, ec))
            ours = ours && (isOurCheckpoint(entry.path()) || fs::is_empty(entry.path(), ec));
        if (ours && !ec)
            return;
    }
    for (const char *name : {"config.json", "model.safetensors", "optimizer.safetensors", "tokenizer.model", kSets})
        if (fs::exists(fs::symlink_status(dir / name, ec)))
            throw Error(m_directory + ": holds " + name
                + " but no training run's state (checkpoint.json): it is not a directory transformer-atlas train "
                  "wrote, and its files are not replaced; choose a new or empty directory, or a training run's "
                  "directory");
}

void CheckpointDirectory::checkWritable() const
{
    checkOwned();
    std::error_code ec;
    fs::create_directories(m_directory, ec);
    if (ec)
        throw Error(m_directory + ": cannot create the output directory: " + ec.message());
    std::string tmpl = (fs::path(m_directory) / ".write-test.tmp-XXXXXX").string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0)
        failErrno(m_directory, "cannot write in the output directory");
    ::close(fd);
    ::unlink(name.data());
}

std::string CheckpointDirectory::stage() const
{
    checkOwned();
    const fs::path sets = fs::path(m_directory) / kSets;
    std::error_code ec;
    fs::create_directories(sets, ec);
    if (ec)
        throw Error(sets.string() + ": cannot create directory: " + ec.message());
    std::string tmpl = (sets / ".tmp-XXXXXX").string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    if (!::mkdtemp(name.data()))
        failErrno(sets.string(), "cannot create a directory for the checkpoint");
    // Created in place, not renamed into it: its presence is the mark, so a kill at any moment leaves an empty
    // directory (removed as empty) or a marked one.
    const std::string mark = (fs::path(name.data()) / kMark).string();
    const int fd = ::open(mark.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        failErrno(mark, "cannot mark the checkpoint");
    static const char text[] = "{\"program\": \"transformer-atlas\", \"output\": \"checkpoint\"}\n";
    const bool written = ::write(fd, text, sizeof text - 1) == ssize_t(sizeof text - 1);
    ::close(fd);
    if (!written)
        failErrno(mark, "cannot mark the checkpoint");
    return std::string(name.data());
}

void CheckpointDirectory::commit(const std::string &staged, int step) const
{
    const fs::path dir(m_directory), sets = dir / kSets;
    char number[32];
    std::snprintf(number, sizeof number, "step-%06d-", step);
    const std::string suffix = fs::path(staged).filename().string().substr(5); // after ".tmp-": unique
    const std::string name = number + suffix;
    syncPath(staged);
    if (::rename(staged.c_str(), (sets / name).c_str()) != 0)
        failErrno((sets / name).string(), "cannot rename the new checkpoint into place");
    syncPath(sets.string());
    const nlohmann::json pointer = {{"checkpoint", std::string(kSets) + "/" + name}, {"step", step}};
    writeFileAtomically((dir / kPointer).string(), pointer.dump(2) + "\n"); // the commit
    std::error_code ec;
    for (const char *file : kModelFiles)
        if (fs::exists(sets / name / file, ec))
            replaceWithLink(sets / name / file, dir / file);
    syncPath(m_directory);
    removeStale();
}

void CheckpointDirectory::removeStale() const
{
    const fs::path dir(m_directory), sets = dir / kSets;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return;
    const bool hasPointer = fs::exists(dir / kPointer, ec);
    std::string keep;
    if (hasPointer) {
        try {
            keep = fs::path(current()).filename().string();
        } catch (const Error &) {
            return; // an unreadable pointer: remove nothing, resume reports it
        }
    }
    for (const auto &entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (isOurTemporary(name))
            fs::remove(entry.path(), ec);
    }
    if (hasPointer)
        for (const char *file : kLegacyFiles)
            fs::remove(dir / file, ec);
    if (!fs::is_directory(sets, ec))
        return;
    for (const auto &entry : fs::directory_iterator(sets, ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with(".tmp-") && !(name.starts_with("step-") && name != keep))
            continue;
        if (isOurCheckpoint(entry.path()))
            removeCheckpoint(entry.path());
        else // only when empty (a kill before the mark was made, or after it was removed): otherwise not ours, kept
            fs::remove(entry.path(), ec);
    }
}

} // namespace atlas
