#include "io/npz.h"

#include "io/mappedfile.h"
#include "io/modelfile.h"
#include "io/npy.h"
#include "util/error.h"

#include <algorithm>
#include <string_view>

namespace atlas {

namespace {

class ZipReader
{
public:
    ZipReader(const std::string &path, const unsigned char *data, size_t size)
        : m_path(path)
        , m_data(data)
        , m_size(size)
    {
    }

    uint64_t u16(uint64_t at) const { return number(at, 2); }
    uint64_t u32(uint64_t at) const { return number(at, 4); }
    uint64_t u64(uint64_t at) const { return number(at, 8); }
    std::string_view bytes(uint64_t at, uint64_t n) const
    {
        need(at, n);
        return {reinterpret_cast<const char *>(m_data + at), size_t(n)};
    }
    size_t size() const { return m_size; }
    [[noreturn]] void fail(const std::string &why) const { throw Error(m_path + ": " + why); }

private:
    void need(uint64_t at, uint64_t n) const
    {
        if (at > m_size || n > m_size - at)
            fail("not a whole .npz archive: a record at byte " + std::to_string(at) + " runs past its end ("
                + std::to_string(m_size) + " bytes)");
    }
    uint64_t number(uint64_t at, int n) const
    {
        need(at, uint64_t(n));
        uint64_t v = 0;
        for (int i = n - 1; i >= 0; --i)
            v = (v << 8) | m_data[at + uint64_t(i)];
        return v;
    }

    const std::string &m_path;
    const unsigned char *m_data;
    size_t m_size;
};

constexpr uint64_t kEndOfDirectory = 0x06054b50, kZip64Locator = 0x07064b50, kZip64End = 0x06064b50,
                   kDirectoryEntry = 0x02014b50, kLocalHeader = 0x04034b50;

} // namespace

std::map<std::string, Tensor> readNpz(const std::string &path)
{
    const MappedFile file(path, openModelFile(path));
    const ZipReader z(path, file.data(), file.size());
    // The end-of-directory record: the last 22 bytes, or earlier when a comment (at most 65535 bytes) follows it.
    if (z.size() < 22)
        z.fail("not a .npz archive (too short for a zip file)");
    uint64_t end = z.size() - 22;
    const uint64_t lowest = end > 65535 ? end - 65535 : 0;
    while (z.u32(end) != kEndOfDirectory) {
        if (end == lowest)
            z.fail("not a .npz archive (no zip end-of-directory record)");
        --end;
    }
    if (z.u16(end + 4) != 0 || z.u16(end + 6) != 0)
        z.fail("a split (multi-disk) zip archive is not read");
    uint64_t count = z.u16(end + 10), directory = z.u32(end + 16);
    if (end >= 20 && z.u32(end - 20) == kZip64Locator) { // zip64: the real counts and offset
        const uint64_t at = z.u64(end - 20 + 8);
        if (z.u32(at) != kZip64End)
            z.fail("a zip64 locator that points at no zip64 end-of-directory record");
        count = z.u64(at + 32);
        directory = z.u64(at + 48);
    }
    if (count > 4096)
        z.fail(std::to_string(count) + " members: an .npz of a dictionary holds a handful");
    std::map<std::string, Tensor> out;
    uint64_t at = directory;
    for (uint64_t i = 0; i < count; ++i) {
        if (z.u32(at) != kDirectoryEntry)
            z.fail("a damaged zip directory (entry " + std::to_string(i) + ")");
        const uint64_t flags = z.u16(at + 8), method = z.u16(at + 10), nameLength = z.u16(at + 28),
                       extraLength = z.u16(at + 30), commentLength = z.u16(at + 32);
        uint64_t compressed = z.u32(at + 20), size = z.u32(at + 24), local = z.u32(at + 42);
        const std::string name(z.bytes(at + 46, nameLength));
        // zip64's extended information: the fields above that hold 0xFFFFFFFF, in this order
        for (uint64_t e = at + 46 + nameLength; e + 4 <= at + 46 + nameLength + extraLength;) {
            const uint64_t id = z.u16(e), length = z.u16(e + 2);
            if (id == 1) {
                uint64_t field = e + 4;
                for (uint64_t *v : {&size, &compressed, &local})
                    if (*v == 0xFFFFFFFF) {
                        *v = z.u64(field);
                        field += 8;
                    }
            }
            e += 4 + length;
        }
        const std::string member = path + ": " + name;
        if (flags & 1)
            throw Error(member + ": an encrypted member is not read");
        if (method != 0)
            throw Error(member
                + ": compressed (np.savez_compressed); save the arrays with np.savez, which stores them "
                  "as they are");
        if (compressed != size)
            throw Error(member + ": a stored member whose sizes differ");
        if (z.u32(local) != kLocalHeader)
            throw Error(member + ": its local header is not where the directory says");
        const uint64_t data = local + 30 + z.u16(local + 26) + z.u16(local + 28);
        if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0)
            throw Error(member + ": not a .npy member");
        const std::string key = name.substr(0, name.size() - 4);
        if (out.count(key))
            throw Error(member + ": the archive holds it twice");
        out.emplace(key, parseNpy(z.bytes(data, size), member));
        at += 46 + nameLength + extraLength + commentLength;
    }
    return out;
}

} // namespace atlas
