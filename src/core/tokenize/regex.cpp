#include "tokenize/regex.h"

#include "tokenize/unicodetext.h"
#include "util/error.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>

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

// PCRE2 counts backtracking, not the characters a repeat runs over, so a pattern whose every attempt reads to the
// end of the text ((?=.*c) on a text without a c) takes time growing with the square of the text within every
// limit above: 8 s for 100 KB, a quarter of an hour for 1 MB. A callout at the pattern's start runs at every
// position a match is tried from, and matching one text may take kTimeBase plus kTimePerByte for each of its bytes:
// valid patterns need about 20 ns a byte (Qwen2.5's on a novel), so only work that grows faster than the text
// meets this bound. (A callout before every item, PCRE2_AUTO_CALLOUT, would cost 40 % more on valid patterns.)
constexpr double kTimeBase = 0.05, kTimePerByte = 2e-6; // seconds
constexpr uint32_t kCalloutsPerClockRead = 64;

struct Deadline
{
    std::chrono::steady_clock::time_point end;
    uint32_t callouts = 0;
    bool passed = false;
};

int checkDeadline(pcre2_callout_block *, void *data)
{
    auto &deadline = *static_cast<Deadline *>(data);
    if (++deadline.callouts % kCalloutsPerClockRead)
        return 0;
    deadline.passed = std::chrono::steady_clock::now() > deadline.end;
    return deadline.passed ? PCRE2_ERROR_CALLOUT : 0;
}

// The pattern with a callout in front, after the option verbs such as (*UTF) or (*LIMIT_MATCH=…) that PCRE2 reads
// only at the very start. A callout that returns 0 changes no match.
std::string withStartCallout(const std::string &pattern)
{
    size_t at = 0;
    while (pattern.compare(at, 2, "(*") == 0) {
        size_t end = at + 2;
        while (end < pattern.size()
            && (std::isupper(uint8_t(pattern[end])) || std::isdigit(uint8_t(pattern[end])) || pattern[end] == '_'
                || pattern[end] == '='))
            ++end;
        if (end == pattern.size() || pattern[end] != ')')
            break;
        at = end + 1;
    }
    return pattern.substr(0, at) + "(?C)" + pattern.substr(at);
}

std::string seconds(double s)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f s", s);
    return text;
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
    const auto compile = [&](const std::string &text) {
        return pcre2_compile(reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(),
            PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &error, &offset, nullptr);
    };
    m_compiled->code = compile(withStartCallout(pattern));
    if (!m_compiled->code) {
        // Compiled again as written, so that the error's offset is the file's.
        pcre2_code_free(compile(pattern));
        throw Error("regular expression '" + pattern.substr(0, 200) + "': " + pcre2Message(error) + " at offset "
            + std::to_string(offset));
    }
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
    Deadline deadline;
    const double allowed = kTimeBase + kTimePerByte * double(text.size());
    deadline.end = std::chrono::steady_clock::now()
        + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(allowed));
    pcre2_set_callout(context.get(), &checkDeadline, &deadline);
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
        if (rc == PCRE2_ERROR_CALLOUT && deadline.passed)
            throw Error("regular expression '" + m_pattern.substr(0, 200) + "': matching a text of "
                + std::to_string(text.size()) + " bytes took more than " + seconds(allowed) + " (" + seconds(kTimeBase)
                + " and 2 microseconds a byte) searching from byte " + std::to_string(start)
                + ": the pattern's work grows faster than the text");
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
