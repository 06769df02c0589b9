#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace atlas {

// A file mapped read-only for the object's lifetime (the model readers': safetensors, GGUF). The descriptor it is
// given is closed once the file is mapped. An empty file maps to no bytes.
class MappedFile
{
public:
    // Maps the file open on `fd`, which it closes; throws atlas::Error "PATH: cannot stat|map …".
    MappedFile(const std::string &path, int fd);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;

    const unsigned char *data() const { return m_data; }
    size_t size() const { return m_size; }

    // Drops the mapping's pages wholly inside [p, p + bytes) from this process's memory once they are read: the file
    // stays mapped (a page read again comes back from the file), but a checkpoint's pages no longer sit beside its
    // float32 copy, so reading a model peaks at about its float32 size instead of that plus the file.
    static void releasePages(const unsigned char *p, uint64_t bytes);

private:
    const unsigned char *m_data = nullptr;
    size_t m_size = 0;
};

} // namespace atlas
