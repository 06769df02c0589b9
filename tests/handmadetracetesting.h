#pragma once

#include "engine/engine.h"
#include "viewtesting.h"

#include <QStringList>

#include <limits>
#include <memory>

// A trace made by hand for the views' tests: two layers of two heads over kT tokens with attention, scores and the
// next token's probabilities whose values the tests can reason about, and the ViewInput a view reads it from.
namespace atlas::testing {

constexpr int kT = 5;
constexpr int kV = 10;

// Causal attention of one head: row i spreads over keys 0..i; query 4 puts 0.9 on key 1.
inline Tensor handMadeProbs(int heads, int tokens, bool zero = false)
{
    Tensor a({heads, tokens, tokens});
    for (int h = 0; h < heads; ++h) {
        MatrixMap m = a.slice(h);
        for (int i = 0; i < tokens && !zero; ++i) {
            for (int j = 0; j <= i; ++j)
                m(i, j) = 1.0f / float(i + 1);
        }
    }
    if (!zero && tokens == kT) {
        MatrixMap m = a.slice(0);
        m.row(4).setZero();
        m(4, 1) = 0.9f;
        m(4, 4) = 0.1f;
    }
    return a;
}

inline std::shared_ptr<Trace> handMadeTrace(bool zeroAttention = false, int tokens = kT)
{
    auto trace = std::make_shared<Trace>();
    Tensor q({2, tokens, 4});
    for (int64_t i = 0; i < q.numel(); ++i)
        q.data()[i] = float(i) * 0.25f - 3.0f;
    trace->put("layer.0.attn.q", "Q_h = Q[:, h·d : (h+1)·d]", 3, q);
    trace->put("layer.0.attn.probs", "A = softmax(S')", 6, handMadeProbs(2, tokens, zeroAttention));
    trace->put("layer.1.attn.probs", "A = softmax(S')", 16, handMadeProbs(2, tokens, zeroAttention));

    Tensor masked({2, tokens, tokens});
    for (int h = 0; h < 2; ++h)
        for (int i = 0; i < tokens; ++i)
            for (int j = 0; j < tokens; ++j)
                masked.slice(h)(i, j) = j > i ? -std::numeric_limits<float>::infinity() : float(i - j) - 1.0f;
    trace->put("layer.0.attn.masked", "S' = S where allowed, else -inf", 5, masked);

    Tensor next({tokens, kV});
    for (int t = 0; t < tokens; ++t) {
        // Row t: id (t + k) % V gets weight proportional to (k + 1): a known, distinct order per row.
        float sum = 0;
        for (int k = 0; k < kV; ++k)
            sum += float(k + 1);
        for (int k = 0; k < kV; ++k)
            next.data()[t * kV + (t + k) % kV] = float(k + 1) / sum;
    }
    trace->put("next_probs", "p = softmax(Z)", 30, next);
    return trace;
}

inline ViewInput handMadeInput(std::shared_ptr<const Trace> trace, int tokens = kT)
{
    ViewInput in;
    in.trace = std::move(trace);
    const QStringList words = {"The", " cat", " sat", " on", " mat"};
    for (int t = 0; t < tokens; ++t)
        in.tokens << (t < words.size() ? words[t] : QStringLiteral("w%1").arg(t));
    in.vocabLabel = [](int id) { return QStringLiteral("'v%1' (#%1)").arg(id); };
    in.layers = 2;
    in.heads = 2;
    in.program = testing::programFor(2, 2, tokens);
    return in;
}

inline ViewSpec viewSpecOf(const std::string &kind)
{
    ViewSpec s;
    s.view = kind;
    return s;
}

} // namespace atlas::testing
