#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

namespace atlas::fuzz {

// The fuzzer's bytes as a file the parsers can open by path (/proc/self/fd/N of a memfd): no disk, no cleanup.
class MemoryFile
{
public:
    MemoryFile(const uint8_t *data, size_t size)
        : m_fd(::memfd_create("atlas-fuzz", MFD_CLOEXEC))
    {
        if (m_fd < 0)
            std::abort();
        size_t done = 0;
        while (done < size) {
            const ssize_t n = ::write(m_fd, data + done, size - done);
            if (n <= 0)
                std::abort();
            done += size_t(n);
        }
    }
    ~MemoryFile() { ::close(m_fd); }
    MemoryFile(const MemoryFile &) = delete;
    MemoryFile &operator=(const MemoryFile &) = delete;

    std::string path() const { return "/proc/self/fd/" + std::to_string(m_fd); }

private:
    int m_fd;
};

} // namespace atlas::fuzz
