#include "tokenize/encodingprogress.h"

#include <algorithm>

namespace atlas {

namespace {

thread_local EncodingProgress *t_open = nullptr; // the encoding under way on this thread, if one listens

} // namespace

EncodingProgress::EncodingProgress(size_t total, Listener listen)
    : m_total(total)
    , m_listen(std::move(listen))
{
    t_open = this;
}

EncodingProgress::~EncodingProgress()
{
    t_open = nullptr;
}

void EncodingProgress::reached(size_t done, size_t total)
{
    EncodingProgress *open = t_open;
    if (!open || total == 0)
        return;
    const double fraction = double(std::min(done, total)) / double(total);
    const auto bytes = size_t((open->m_begin + (open->m_end - open->m_begin) * fraction) * double(open->m_total));
    if (bytes < open->m_lastReported + std::max<size_t>(1, open->m_total / 1000) && bytes < open->m_total)
        return;
    open->m_lastReported = bytes;
    if (!open->m_listen(std::min(bytes, open->m_total), open->m_total))
        throw EncodingCancelled();
}

EncodingProgress::Part::Part(size_t begin, size_t end, size_t size)
{
    EncodingProgress *open = t_open;
    if (!open || size == 0)
        return;
    m_narrowed = true;
    m_outerBegin = open->m_begin;
    m_outerEnd = open->m_end;
    const double span = m_outerEnd - m_outerBegin;
    open->m_begin = m_outerBegin + span * double(begin) / double(size);
    open->m_end = m_outerBegin + span * double(std::min(end, size)) / double(size);
}

EncodingProgress::Part::~Part()
{
    if (EncodingProgress *open = t_open; open && m_narrowed) {
        open->m_begin = m_outerBegin;
        open->m_end = m_outerEnd;
    }
}

} // namespace atlas
