#pragma once
// The hand-made causal traces and inputs of the heat-map view tests (tst_views, tst_offguithread).
#include "view/viewspec.h"
#include "viewtesting.h"

#include <QColor>
#include <QStringList>

#include <cmath>
#include <limits>
#include <memory>
#include <string>

namespace atlas::testing {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// A hand-made trace: scores S, masked S' (causal: −∞ above the diagonal) and row-softmax probabilities for
// each layer, all [H, T, T]. Head h of layer l gets its own scores so heads are distinguishable.
inline std::shared_ptr<Trace> makeTrace(int layers, int heads, int tokens, bool withProbs = true)
{
    auto trace = std::make_shared<Trace>();
    for (int l = 0; l < layers; ++l) {
        Tensor scores(Shape {heads, tokens, tokens});
        Tensor masked(Shape {heads, tokens, tokens});
        Tensor probs(Shape {heads, tokens, tokens});
        for (int h = 0; h < heads; ++h) {
            for (int i = 0; i < tokens; ++i) {
                float sum = 0.0f;
                for (int j = 0; j < tokens; ++j) {
                    const float s = 2.0f * std::sin(0.7f * i + 1.3f * j + 0.9f * l + 0.5f * h);
                    scores.slice(h)(i, j) = s;
                    masked.slice(h)(i, j) = j <= i ? s : kNegInf;
                    probs.slice(h)(i, j) = j <= i ? std::exp(s) : 0.0f;
                    sum += probs.slice(h)(i, j);
                }
                for (int j = 0; j < tokens; ++j)
                    probs.slice(h)(i, j) /= sum;
            }
        }
        const std::string prefix = "layer." + std::to_string(l) + ".attn.";
        trace->put(prefix + "scores", "S = QK^T / sqrt(d)", 3 * l, std::move(scores));
        trace->put(prefix + "masked", "S' = S + M", 3 * l + 1, std::move(masked));
        if (withProbs)
            trace->put(prefix + "probs", "A = softmax(S')", 3 * l + 2, std::move(probs));
    }
    return trace;
}

inline ViewInput makeInput(std::shared_ptr<const Trace> trace, int layers, int heads, const QStringList &tokens)
{
    ViewInput input;
    input.trace = std::move(trace);
    input.tokens = tokens;
    input.layers = layers;
    input.heads = heads;
    input.causal = true;
    input.program = programFor(layers, heads, int(tokens.size()));
    return input;
}

inline ViewSpec makeSpec(const std::string &view, int layer, int head)
{
    ViewSpec spec;
    spec.view = view;
    spec.layer = layer;
    spec.head = head;
    return spec;
}

// The distance between two colours, summed over red, green and blue (0 … 765).
inline int colorDistance(QRgb a, QRgb b)
{
    return std::abs(qRed(a) - qRed(b)) + std::abs(qGreen(a) - qGreen(b)) + std::abs(qBlue(a) - qBlue(b));
}

} // namespace atlas::testing
