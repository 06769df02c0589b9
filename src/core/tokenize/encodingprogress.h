#pragma once

#include <cstddef>
#include <exception>
#include <functional>

// How far the encoding of a long text has come, for a progress bar with Cancel. The session's worker opens an
// EncodingProgress around one encoding; the tokenizers, on the same thread, report as they go without knowing who
// listens: the Hugging Face pipeline after each pre-tokenized piece, and each part of the text handed to an inner
// tokenizer (a section between added or special tokens) as a Part. SentencePiece's library cannot report: its
// encoding shows nothing until it is done. With no EncodingProgress open (the command line, the tests) a report
// costs one thread-local read.
namespace atlas {

// Thrown out of an encoding whose listener answered false (Cancel): not an atlas::Error, so that no message is
// prefixed to it or shown.
struct EncodingCancelled : std::exception
{
    const char *what() const noexcept override { return "the encoding was cancelled"; }
};

class EncodingProgress
{
public:
    // `listen(done, total)` gets bytes of a text of `total` bytes, at most every 1/1000 of it; false stops the
    // encoding (EncodingCancelled).
    using Listener = std::function<bool(size_t done, size_t total)>;
    EncodingProgress(size_t total, Listener listen);
    ~EncodingProgress();
    EncodingProgress(const EncodingProgress &) = delete;
    EncodingProgress &operator=(const EncodingProgress &) = delete;

    // From a tokenizer: `done` of the `total` units (bytes, pieces) of what it is encoding now are done.
    static void reached(size_t done, size_t total);

    // From a tokenizer handing bytes [begin, end) of its `size`-byte text to an inner step: the inner step's
    // reports fill that span of this one.
    class Part
    {
    public:
        Part(size_t begin, size_t end, size_t size);
        ~Part();
        Part(const Part &) = delete;
        Part &operator=(const Part &) = delete;

    private:
        bool m_narrowed = false;
        double m_outerBegin = 0, m_outerEnd = 0;
    };

private:
    size_t m_total;
    Listener m_listen;
    size_t m_lastReported = 0;
    double m_begin = 0, m_end = 1; // the span of the whole that the innermost step's reports fill
};

} // namespace atlas
