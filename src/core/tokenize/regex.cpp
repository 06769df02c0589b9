#include "tokenize/regex.h"

#include "tokenize/unicodetext.h"
#include "util/error.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace atlas {

namespace {

std::string pcre2Message(int code)
{
    PCRE2_UCHAR buffer[256];
    pcre2_get_error_message(code, buffer, sizeof buffer);
    return reinterpret_cast<const char *>(buffer);
}

// PCRE2's own limits, lowered: a pattern from a hostile file must fail with a message, not spin for minutes.
constexpr uint32_t kMatchLimit = 5'000'000;
constexpr uint32_t kDepthLimit = 100'000;

} // namespace

struct Regex::Compiled
{
    pcre2_code *code = nullptr;
    pcre2_match_context *context = nullptr;
    ~Compiled()
    {
        pcre2_match_context_free(context);
        pcre2_code_free(code);
    }
};

Regex::Regex(const std::string &pattern)
    : m_pattern(pattern)
    , m_compiled(std::make_unique<Compiled>())
{
    int error = 0;
    PCRE2_SIZE offset = 0;
    m_compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
        PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &error, &offset, nullptr);
    if (!m_compiled->code)
        throw Error("regular expression '" + pattern.substr(0, 200) + "': " + pcre2Message(error) + " at offset "
            + std::to_string(offset));
    pcre2_jit_compile(m_compiled->code, PCRE2_JIT_COMPLETE); // when JIT is not available, matching interprets
    m_compiled->context = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(m_compiled->context, kMatchLimit);
    pcre2_set_depth_limit(m_compiled->context, kDepthLimit);
}

Regex::~Regex() = default;

std::vector<std::pair<size_t, size_t>> Regex::findAll(std::string_view text) const
{
    std::vector<std::pair<size_t, size_t>> matches;
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
        pcre2_match_data_create_from_pattern(m_compiled->code, nullptr), &pcre2_match_data_free);
    const auto *subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t start = 0;
    while (start <= text.size()) {
        // The text was checked once by the caller; PCRE2 need not check it again at every start.
        const int rc = pcre2_match(
            m_compiled->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, data.get(), m_compiled->context);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0)
            throw Error("regular expression '" + m_pattern.substr(0, 200) + "': " + pcre2Message(rc));
        const PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(data.get());
        const size_t begin = ovector[0], end = ovector[1];
        matches.emplace_back(begin, end);
        if (end > begin)
            start = end;
        else if (end < text.size())
            start = end + unicode::decodeUtf8(text, end).length;
        else
            break;
    }
    return matches;
}

} // namespace atlas
