#include "io/mappedfile.h"

#include "util/error.h"
#include "util/pageadvice.h"

#include <cerrno>
#include <cstring>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace atlas {

MappedFile::MappedFile(const std::string &path, int fd)
{
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw Error(path + ": cannot stat: " + std::strerror(err));
    }
    m_size = static_cast<size_t>(st.st_size);
    if (m_size == 0) {
        ::close(fd);
        return;
    }
    void *map = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int mapErr = errno;
    ::close(fd);
    if (map == MAP_FAILED)
        throw Error(path + ": cannot map file: " + std::strerror(mapErr));
    m_data = static_cast<const unsigned char *>(map);
}

MappedFile::~MappedFile()
{
    if (m_data)
        ::munmap(const_cast<unsigned char *>(m_data), m_size);
}

void MappedFile::releasePages(const unsigned char *p, uint64_t bytes)
{
    adviseWholePages(p, bytes, size_t(::sysconf(_SC_PAGESIZE)), MADV_DONTNEED);
}

} // namespace atlas
