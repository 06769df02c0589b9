#include "tokenize/regex.h"

#include "tokenize/unicodetext.h"
#include "util/error.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdint>

namespace atlas {

namespace {

std::string pcre2Message(int code)
{
    PCRE2_UCHAR buffer[256];
    pcre2_get_error_message(code, buffer, sizeof buffer);
    return reinterpret_cast<const char *>(buffer);
}

// PCRE2's own limits, lowered: a pattern from a hostile file must fail with a message, not spin for minutes. A
// valid pattern may need work in proportion to the text it matches (GPT-2's and Qwen2.5's \s*[\r\n]+ backtracks
// over a whole run of spaces before \s+(?!\S) takes it), so each match may take kMatchLimit steps plus
// kMatchStepsPerByte for each byte still to match: a 5 MB run of spaces no longer fails, while a pattern that
// backtracks without end still fails within seconds.
constexpr uint32_t kMatchLimit = 5'000'000;
constexpr uint64_t kMatchStepsPerByte = 16;
constexpr uint32_t kDepthLimit = 100'000;

uint32_t matchLimit(size_t bytesLeft)
{
    return uint32_t(std::min<uint64_t>(kMatchLimit + kMatchStepsPerByte * bytesLeft, UINT32_MAX));
}

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
    // This call's own context: its match limit follows the text left (matchLimit), and other threads match too.
    std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> context(
        pcre2_match_context_copy(m_compiled->context), &pcre2_match_context_free);
    const auto *subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t start = 0;
    while (start <= text.size()) {
        pcre2_set_match_limit(context.get(), matchLimit(text.size() - start));
        // The text was checked once by the caller; PCRE2 need not check it again at every start.
        int rc
            = pcre2_match(m_compiled->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, data.get(), context.get());
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) // the JIT's 32 KiB stack: the interpreter keeps its frames on the heap
            rc = pcre2_match(m_compiled->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                data.get(), context.get());
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0)
            throw Error("regular expression '" + m_pattern.substr(0, 200) + "': " + pcre2Message(rc) + " at byte "
                + std::to_string(start) + " of a text of " + std::to_string(text.size()) + " bytes");
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
