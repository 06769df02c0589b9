#include "io/atomicfile.h"

#include "util/error.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace atlas {

namespace {

[[noreturn]] void fail(const std::string &path, const std::string &what, int err)
{
    throw Error(path + ": " + what + ": " + std::strerror(err));
}

// The mode a plain open(O_CREAT, 0666) would give. umask() cannot be read without setting it, which races
// with other threads, so it is taken from /proc (Linux >= 4.7) with the common default as fallback.
mode_t defaultFileMode()
{
    mode_t mask = 022;
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("Umask:", 0) == 0) {
            try {
                mask = static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
            } catch (const std::exception &) {
            }
            break;
        }
    }
    return 0666 & ~mask;
}

void writeAll(int fd, std::string_view bytes, const std::string &path)
{
    const char *p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fail(path, "cannot write", errno);
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
}

// Makes the rename itself durable; a failure here is not reported because the new file is already in place.
void syncDirectory(const std::string &dir)
{
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

// A symbolic link is followed, as QSaveFile does, so that saving keeps the link and updates its target; a dangling
// link is followed too (its target is created). A loop is refused.
std::string resolveLink(const std::string &path)
{
    std::string current = path;
    for (int hops = 0; hops < 40; ++hops) {
        struct stat st;
        if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
            return current;
        std::vector<char> target(4096);
        const ssize_t n = ::readlink(current.c_str(), target.data(), target.size());
        if (n < 0 || size_t(n) >= target.size())
            fail(path, "cannot read the symbolic link", n < 0 ? errno : ENAMETOOLONG);
        std::string next(target.data(), size_t(n));
        if (!next.starts_with('/')) {
            const size_t slash = current.rfind('/');
            next = (slash == std::string::npos ? std::string() : current.substr(0, slash + 1)) + next;
        }
        current = next;
    }
    fail(path, "cannot follow the symbolic link", ELOOP);
}

// Writes into an existing special file (a device, a FIFO, /dev/stdout) as it is; there is nothing to replace.
void writeThrough(const std::string &path, std::string_view bytes)
{
    // O_NONBLOCK: a FIFO that no process reads fails at once (ENXIO) instead of waiting for ever
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENXIO)
            throw Error(path + ": is a named pipe (FIFO) or socket that no process reads");
        fail(path, "cannot open", errno);
    }
    try {
        struct stat st;
        if (::fstat(fd, &st) != 0)
            fail(path, "cannot stat", errno);
        if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) // swapped since it was looked at
            throw Error(path + ": changed while it was opened; try again");
        const int flags = ::fcntl(fd, F_GETFL);
        if (flags >= 0)
            ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
        writeAll(fd, bytes, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    if (::close(fd) != 0)
        fail(path, "cannot close", errno);
}

} // namespace

void writeFileAtomically(const std::string &userPath, std::string_view bytes)
{
    if (userPath.empty())
        throw Error("cannot write a file with an empty name");
    // A special file at the end of the links (/dev/stdout → /proc/self/fd/1 → pipe:[…], which names no file):
    // written into as it is, before its links are followed by name.
    if (struct stat followed;
        ::stat(userPath.c_str(), &followed) == 0 && !S_ISREG(followed.st_mode) && !S_ISDIR(followed.st_mode)) {
        writeThrough(userPath, bytes);
        return;
    }
    const std::string path = resolveLink(userPath);
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    if (name.empty())
        throw Error(path + ": not a file name");

    struct stat target;
    const bool exists = ::stat(path.c_str(), &target) == 0;
    if (exists && S_ISDIR(target.st_mode))
        throw Error(path + ": is a directory");
    if (exists && !S_ISREG(target.st_mode)) { // /dev/null, /dev/stdout, a FIFO: write into it, never replace it
        writeThrough(userPath, bytes);
        return;
    }

    std::string tmpl = (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + "." + name + ".tmp-XXXXXX";
    std::vector<char> tmpName(tmpl.begin(), tmpl.end());
    tmpName.push_back('\0');
    const int fd = ::mkostemp(tmpName.data(), O_CLOEXEC);
    if (fd < 0)
        fail(path, "cannot create a temporary file in " + dir, errno);

    int fdToClose = fd;
    try {
        // mkstemp creates 0600; keep the mode of the file being replaced, or what a new file would get.
        if (::fchmod(fd, exists ? (target.st_mode & 07777) : defaultFileMode()) != 0)
            fail(path, "cannot set permissions of temporary file", errno);
        writeAll(fd, bytes, path);
        if (::fsync(fd) != 0)
            fail(path, "cannot flush temporary file", errno);
        fdToClose = -1;
        if (::close(fd) != 0)
            fail(path, "cannot close temporary file", errno);
        if (::rename(tmpName.data(), path.c_str()) != 0)
            fail(path, "cannot replace file", errno);
    } catch (...) {
        if (fdToClose >= 0)
            ::close(fdToClose);
        ::unlink(tmpName.data());
        throw;
    }
    syncDirectory(dir);
}

std::string fileKind(unsigned mode)
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a named pipe (FIFO)";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "a special file";
}

int openRegularFile(const std::string &path)
{
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for ever; the type is checked on the open
    // descriptor, so the file cannot be swapped between the check and the read.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        fail(path, "cannot open", errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        fail(path, "cannot stat", err);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(path + ": is " + fileKind(st.st_mode) + ", not a regular file; give the path of a file");
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
        ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

std::string readFile(const std::string &path, size_t maxBytes)
{
    return readDescriptor(openRegularFile(path), path, maxBytes);
}

std::string readDescriptor(int fd, const std::string &path, size_t maxBytes)
{
    std::string out;
    try {
        struct stat st;
        if (::fstat(fd, &st) != 0)
            fail(path, "cannot stat", errno);
        const auto tooLarge = [&] {
            throw Error(
                path + ": file too large: more than " + std::to_string(maxBytes) + " bytes, the limit for this file");
        };
        if (static_cast<uint64_t>(st.st_size) > maxBytes)
            tooLarge();
        // Read straight into the result, sized from fstat but growing in case the file grows while it is read.
        out.resize(static_cast<size_t>(st.st_size) + 1);
        if (maxBytes < out.size())
            out.resize(maxBytes + 1);
        size_t used = 0;
        for (;;) {
            if (used > maxBytes)
                tooLarge();
            if (used == out.size())
                out.resize(out.size() * 2);
            const ssize_t n = ::read(fd, out.data() + used, out.size() - used);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                fail(path, "cannot read", errno);
            }
            if (n == 0)
                break;
            used += static_cast<size_t>(n);
        }
        out.resize(used);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return out;
}

std::string fileStamp(const std::string &path)
{
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    if (error)
        return {};
    const auto time = std::filesystem::last_write_time(path, error);
    return error ? std::string() : std::to_string(size) + "@" + std::to_string(time.time_since_epoch().count());
}

} // namespace atlas
