#include "io/npy.h"

#include "io/atomicfile.h"
#include "util/error.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <optional>

namespace atlas {

static_assert(std::endian::native == std::endian::little, "'<f4' data is written as it sits in memory");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kAlign = 64; // numpy pads the preamble so that the data starts 64-byte aligned
constexpr size_t kGrowthDigits = 21;

std::string shapeTuple(const Shape &shape)
{
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

// The preamble numpy.save writes, byte for byte: magic, version, header length, then the dict padded with
// spaces and a newline. Since numpy 1.23 the dict is followed by spare spaces so that the first dimension
// can grow to 21 digits in place. Version 2.0 (a 4-byte length) only when the header exceeds 65535 bytes.
std::string preamble(const Shape &shape)
{
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shapeTuple(shape) + ", }";
    if (!shape.empty())
        dict.append(kGrowthDigits - std::min(kGrowthDigits, std::to_string(shape[0]).size()), ' ');
    for (const size_t lengthBytes : {size_t(2), size_t(4)}) {
        const size_t fixed = kMagicSize + 2 + lengthBytes;
        const size_t total = (fixed + dict.size() + 1 + kAlign - 1) / kAlign * kAlign;
        const size_t headerLength = total - fixed;
        if (lengthBytes == 2 && headerLength > 0xFFFF)
            continue;
        std::string out(kMagic, kMagicSize);
        out += static_cast<char>(lengthBytes == 2 ? 1 : 2);
        out += '\0';
        for (size_t i = 0; i < lengthBytes; ++i)
            out += static_cast<char>((headerLength >> (8 * i)) & 0xFF);
        out += dict;
        out.append(headerLength - dict.size() - 1, ' ');
        out += '\n';
        return out;
    }
    throw Error("shape " + Tensor::shapeString(shape) + " is too long for an .npy header");
}

// A reader for the Python literal numpy writes as the header: a dict of str keys whose values are str,
// bool or a tuple of ints. Nothing else is accepted.
class HeaderParser
{
public:
    HeaderParser(const std::string &path, std::string_view text)
        : m_path(path)
        , m_text(text)
    {
    }

    void parse(std::string &descr, std::optional<bool> &fortran, std::optional<Shape> &shape)
    {
        expect('{');
        while (!peek('}')) {
            const std::string key = string();
            expect(':');
            if (key == "descr")
                descr = string();
            else if (key == "fortran_order")
                fortran = boolean();
            else if (key == "shape")
                shape = tuple();
            else
                fail("unexpected key '" + key + "'");
            if (!peek('}'))
                expect(',');
        }
        expect('}');
        skipSpace();
        if (m_pos != m_text.size())
            fail("trailing text after the dict");
    }

private:
    [[noreturn]] void fail(const std::string &reason) const
    {
        const std::string_view shown = m_text.substr(0, std::min<size_t>(200, m_text.find_last_not_of(" \n") + 1));
        throw Error(m_path + ": header: " + reason + " (at byte " + std::to_string(m_pos) + " of \""
            + std::string(shown) + "\")");
    }

    void skipSpace()
    {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
    }

    bool peek(char c)
    {
        skipSpace();
        return m_pos < m_text.size() && m_text[m_pos] == c;
    }

    void expect(char c)
    {
        if (!peek(c))
            fail(std::string("expected '") + c + "'");
        ++m_pos;
    }

    std::string string()
    {
        skipSpace();
        if (m_pos >= m_text.size() || (m_text[m_pos] != '\'' && m_text[m_pos] != '"'))
            fail("expected a string");
        const char quote = m_text[m_pos++];
        const size_t end = m_text.find(quote, m_pos);
        if (end == std::string_view::npos)
            fail("unterminated string");
        std::string s(m_text.substr(m_pos, end - m_pos));
        m_pos = end + 1;
        return s;
    }

    bool boolean()
    {
        skipSpace();
        for (const auto &[word, value] : {std::pair {"True", true}, std::pair {"False", false}}) {
            if (m_text.substr(m_pos, std::strlen(word)) == word) {
                m_pos += std::strlen(word);
                return value;
            }
        }
        fail("expected True or False");
    }

    Shape tuple()
    {
        expect('(');
        Shape shape;
        while (!peek(')')) {
            int64_t d = 0;
            const size_t start = m_pos;
            while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) {
                if (__builtin_mul_overflow(d, 10, &d) || __builtin_add_overflow(d, m_text[m_pos] - '0', &d))
                    fail("dimension too large");
                ++m_pos;
            }
            if (m_pos == start)
                fail("expected a non-negative integer");
            shape.push_back(d);
            if (!peek(')'))
                expect(',');
        }
        expect(')');
        return shape;
    }

    const std::string &m_path;
    std::string_view m_text;
    size_t m_pos = 0;
};

} // namespace

void writeNpy(const std::string &path, const Tensor &tensor)
{
    if (Tensor::count(tensor.shape()) != tensor.numel())
        throw Error(path + ": shape " + tensor.shapeString() + " does not match the tensor's data");
    std::string file = preamble(tensor.shape());
    const size_t headerSize = file.size();
    file.resize(headerSize + tensor.bytes());
    if (tensor.bytes() > 0) // a zero-element tensor has no data pointer, and memcpy from null is undefined
        std::memcpy(file.data() + headerSize, tensor.data(), tensor.bytes());
    writeFileAtomically(path, file);
}

Tensor readNpy(const std::string &path)
{
    return parseNpy(readFile(path), path);
}

Tensor parseNpy(std::string_view file, const std::string &path)
{
    if (file.size() < kMagicSize + 4 || file.compare(0, kMagicSize, kMagic, kMagicSize) != 0)
        throw Error(path + ": not an .npy file (bad magic)");
    const auto byte = [&](size_t i) { return static_cast<uint64_t>(static_cast<unsigned char>(file[i])); };
    const uint64_t major = byte(6);
    if (major < 1 || major > 3)
        throw Error(path + ": unsupported .npy version " + std::to_string(major) + "." + std::to_string(byte(7)));
    const size_t lengthBytes = major == 1 ? 2 : 4;
    if (file.size() < 8 + lengthBytes)
        throw Error(path + ": truncated .npy preamble");
    uint64_t headerLength = 0;
    for (size_t i = 0; i < lengthBytes; ++i)
        headerLength |= byte(8 + i) << (8 * i);
    const uint64_t dataStart = 8 + lengthBytes + headerLength;
    if (dataStart > file.size())
        throw Error(path + ": header length " + std::to_string(headerLength) + " exceeds the file size");

    std::string descr;
    std::optional<bool> fortran;
    std::optional<Shape> shape;
    HeaderParser(path, std::string_view(file).substr(8 + lengthBytes, headerLength)).parse(descr, fortran, shape);
    if (descr.empty() || !fortran || !shape)
        throw Error(path + ": header: missing 'descr', 'fortran_order' or 'shape'");
    if (descr != "<f4")
        throw Error(path + ": dtype '" + descr + "' is not supported (only '<f4', little-endian float32)");
    if (*fortran && shape->size() > 1)
        throw Error(path + ": Fortran-order arrays are not supported");

    uint64_t bytes = sizeof(float);
    for (int64_t d : *shape) {
        if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
            throw Error(path + ": shape " + Tensor::shapeString(*shape) + " is too large");
    }
    if (bytes != file.size() - dataStart)
        throw Error(path + ": shape " + Tensor::shapeString(*shape) + " needs " + std::to_string(bytes)
            + " bytes of data but the file holds " + std::to_string(file.size() - dataStart));
    Tensor out(*shape);
    if (bytes > 0) // a zero-element tensor has no data pointer
        std::memcpy(out.data(), file.data() + dataStart, bytes);
    return out;
}

} // namespace atlas
