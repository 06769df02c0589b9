#include "viewmodel/lessonpage.h"

#include "lesson/lessoncheck.h"
#include "logitlens/logitlens.h"
#include "view/viewanalysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace atlas {

namespace {

using nlohmann::json;

constexpr int kNextTokenBars = 10; // as the Next token view's bars

// Seven significant digits: a float's value as the view prints it (four) and more, in a third of the text. −∞ (a
// masked score) and NaN are null, which JSON has for them.
json number(float value)
{
    if (!std::isfinite(value))
        return nullptr;
    char text[32];
    std::snprintf(text, sizeof text, "%.7g", double(value));
    return std::strtod(text, nullptr);
}

json labels(const QStringList &list)
{
    json out = json::array();
    for (const QString &s : list)
        out.push_back(s.toStdString());
    return out;
}

json values(const float *data, size_t count)
{
    json out = json::array();
    for (size_t i = 0; i < count; ++i)
        out.push_back(number(data[i]));
    return out;
}

// Head `head` of an [H, T, S] tensor, flat, row by row.
json headValues(const Tensor &t, int head)
{
    const size_t cells = size_t(t.dim(1)) * size_t(t.dim(2));
    return values(t.data() + size_t(head) * cells, cells);
}

// "1" for each cell of head `head` no weight may reach: −∞ in attn.masked, or outside an efficient kernel's pattern
// (attn.mask, 1 = attended, where the kernel traces no attn.masked); else "0".
std::string maskedCells(const Tensor &mask, bool pattern, int head)
{
    const size_t cells = size_t(mask.dim(1)) * size_t(mask.dim(2));
    const float *v = mask.data() + size_t(head) * cells;
    std::string out(cells, '0');
    for (size_t i = 0; i < cells; ++i)
        if (pattern ? !(v[i] > 0) : v[i] == -std::numeric_limits<float>::infinity())
            out[i] = '1';
    return out;
}

const Tensor *siteTensor(const ViewInput &input, int layer, std::string_view suffix)
{
    const TraceEntry *e = input.trace ? input.trace->find(siteTensorName(input, layer, suffix)) : nullptr;
    return e && e->tensor.rank() == 3 ? &e->tensor : nullptr;
}

// Every head of the site's scores, mask and probabilities in layers [first, last], each null where the stepper has
// not computed it. The attention and heads views need the probabilities; the mask view draws what there is (a step
// stopped before the softmax).
json attentionFigure(const ViewInput &input, const ViewSpec &spec, bool needsProbabilities)
{
    const char *const kinds[] = {"attn.probs", "attn.masked", "attn.scores", "attn.mask"};
    const Tensor *own = nullptr;
    for (const char *kind : kinds)
        if (own == nullptr && (!needsProbabilities || kind == kinds[0]))
            own = siteTensor(input, spec.layer, kind);
    if (own == nullptr || spec.head < 0 || spec.head >= own->dim(0))
        return nullptr;
    const size_t perLayer = 2 * size_t(own->numel());
    int first = 0, last = input.layers - 1;
    if (perLayer * size_t(input.layers) > kLessonPageValueLimit)
        first = last = spec.layer;
    if (perLayer > kLessonPageValueLimit)
        return nullptr;
    const int T = int(own->dim(1)), S = int(own->dim(2));
    json probs = json::array(), scores = json::array(), masked = json::array();
    bool pattern = false;
    const auto heads = [](const Tensor *t, const auto &perHead) {
        if (t == nullptr)
            return json(nullptr);
        json out = json::array();
        for (int h = 0; h < int(t->dim(0)); ++h)
            out.push_back(perHead(*t, h));
        return out;
    };
    for (int l = 0; l < input.layers; ++l) {
        const auto traced = [&](const char *kind) {
            const Tensor *t = l >= first && l <= last ? siteTensor(input, l, kind) : nullptr;
            return t != nullptr && t->shape() == own->shape() ? t : nullptr;
        };
        const Tensor *m = traced("attn.masked");
        const Tensor *kernelPattern = m ? nullptr : traced("attn.mask");
        pattern = pattern || kernelPattern != nullptr;
        probs.push_back(heads(traced("attn.probs"), headValues));
        scores.push_back(heads(traced("attn.scores"), headValues));
        masked.push_back(heads(m ? m : kernelPattern,
            [&](const Tensor &t, int h) { return json(maskedCells(t, kernelPattern != nullptr, h)); }));
    }
    std::vector<int> keyPadding;
    for (int k = 0; k < S; ++k)
        if (isKeyPadding(input, k))
            keyPadding.push_back(k);
    return json {{"draw", spec.view}, {"layer", spec.layer}, {"head", spec.head}, {"layers", input.layers},
        {"heads", int(own->dim(0))}, {"queries", labels(tokenLabels(input, T))}, {"keys", labels(keyLabels(input, S))},
        {"site", siteTitle(input).toStdString()}, {"probs", std::move(probs)}, {"scores", std::move(scores)},
        {"masked", std::move(masked)}, {"pattern", pattern}, {"causal", input.causal}, {"keyPadding", keyPadding},
        {"cross", input.site.cross}, {"exactZeros", sparseNormaliserName(input).toStdString()}};
}

json tensorFigure(const ViewInput &input, const ViewSpec &spec)
{
    const TraceEntry *e = input.trace ? input.trace->find(spec.tensor) : nullptr;
    if (e == nullptr || e->tensor.rank() < 1 || e->tensor.rank() > 3
        || size_t(e->tensor.numel()) > kLessonPageValueLimit || e->tensor.numel() == 0)
        return nullptr;
    const Tensor &t = e->tensor;
    const int rank = t.rank();
    const int cols = int(t.dim(rank - 1)), rows = rank >= 2 ? int(t.dim(rank - 2)) : 1;
    const int slices = rank == 3 ? int(t.dim(0)) : 1;
    const int T = int(input.tokens.size());
    // The slice the app's Tensor view shows first: the spec's head (a rank-3 tensor's first index).
    return json {{"draw", "tensor"}, {"name", spec.tensor}, {"formula", e->formula}, {"shape", t.shapeString()},
        {"slices", slices}, {"slice", std::clamp(spec.head, 0, slices - 1)}, {"rows", rows}, {"cols", cols},
        {"rowLabels", labels(rank >= 2 && rows == T ? tokenLabels(input, T) : numberedLabels(rows))},
        {"colLabels", labels(numberedLabels(cols))}, {"values", values(t.data(), size_t(t.numel()))}};
}

json nextTokenFigure(const ViewInput &input, const ViewSpec &spec)
{
    if (!input.trace)
        return nullptr;
    const TraceEntry *whole = input.trace->find("next_probs"); // a decoder's rows, whatever the site shows
    const int T = whole ? int(whole->tensor.dim(0)) : int(input.tokenIds.size());
    if (T == 0)
        return nullptr;
    json positions = json::array();
    constexpr int kRowsAtOnce = 64; // a run kept on demand computes its rows from the last stream, a few at a time
    for (int first = 0; first < T; first += kRowsAtOnce) {
        std::vector<int> rows(size_t(std::min(kRowsAtOnce, T - first)));
        std::iota(rows.begin(), rows.end(), first);
        QString problem;
        const Tensor probs = findNextTokenProbs(input, rows, &problem);
        if (probs.rank() != 2 || probs.dim(1) == 0)
            return nullptr;
        const int V = int(probs.dim(1));
        std::vector<int> order(size_t(V), 0);
        for (size_t r = 0; r < rows.size(); ++r) {
            const float *p = probs.data() + r * size_t(V);
            std::iota(order.begin(), order.end(), 0);
            const int k = std::min(kNextTokenBars, V);
            std::partial_sort(order.begin(), order.begin() + k, order.end(), [p](int a, int b) { return p[a] > p[b]; });
            json bars = json::array();
            for (int i = 0; i < k; ++i)
                bars.push_back({{"token", vocabularyLabel(input, order[size_t(i)]).toStdString()},
                    {"id", order[size_t(i)]}, {"p", number(p[order[size_t(i)]])}});
            positions.push_back(std::move(bars));
        }
    }
    return json {{"draw", "next-token"}, {"position", spec.position < 0 ? T - 1 : std::min(spec.position, T - 1)},
        {"tokens", labels(tokenLabels(input, T))}, {"bars", std::move(positions)}};
}

json logitLensFigure(const ViewInput &input, const ViewSpec &)
{
    const auto *analysis = input.analysisAs<LogitLensAnalysis>();
    if (analysis == nullptr)
        return nullptr;
    const LogitLens &lens = analysis->lens;
    json rows = json::array();
    for (int r = 0; r < lens.rows(); ++r) {
        json cells = json::array();
        for (int t = 0; t < lens.tokens; ++t) {
            json top = json::array();
            for (int k = 0; k < lens.topK; ++k)
                top.push_back(
                    {vocabularyLabel(input, lens.topId(r, t, k)).toStdString(), number(lens.topProb(r, t, k))});
            cells.push_back({{"top", std::move(top)}, {"entropy", number(lens.entropy[size_t(r) * lens.tokens + t])}});
        }
        const int blocks = lens.blocks[size_t(r)];
        rows.push_back({{"label", blocks == 0 ? std::string("embedding") : "block " + std::to_string(blocks)},
            {"stream", lens.streams[size_t(r)]}, {"cells", std::move(cells)}});
    }
    return json {
        {"draw", "logit-lens"}, {"tokens", labels(tokenLabels(input, lens.tokens))}, {"rows", std::move(rows)}};
}

} // namespace

const std::vector<LessonPageView> &lessonPageViews()
{
    static const std::vector<LessonPageView> views {
        {"attention", [](auto &input, auto &spec) { return attentionFigure(input, spec, true); },
            "Hover a cell to read its numbers."},
        {"mask", [](auto &input, auto &spec) { return attentionFigure(input, spec, false); },
            "Hover a cell to read its numbers."},
        {"heads", [](auto &input, auto &spec) { return attentionFigure(input, spec, true); },
            "Hover a cell to read its numbers."},
        {"tensor", tensorFigure, "Hover a cell to read its numbers."},
        {"next-token", nextTokenFigure, "Hover a bar to read it."},
        {"logit-lens", logitLensFigure, "Hover a cell to read its top tokens."},
    };
    return views;
}

const LessonPageView *lessonPageView(const ViewSpec &spec)
{
    if (!spec.compare.empty())
        return nullptr; // two runs: the app's picture shows both
    for (const LessonPageView &v : lessonPageViews())
        if (v.view == spec.view)
            return &v;
    return nullptr;
}

json lessonPageQuestions(const LessonStep &step, const ViewInput &input, const ViewSpec &spec, bool answers)
{
    json out = json::array();
    for (const LessonQuestion &q : step.questions) {
        json item {{"prompt", q.prompt}};
        if (q.kind == LessonQuestion::Kind::Choose) {
            item["kind"] = "choose";
            item["choices"] = q.choices;
            item["multiple"] = q.correct.size() > 1;
            if (answers)
                item["correct"] = q.correct, item["explanation"] = q.explanation;
        } else {
            const PredictAnswer answer = predictAnswer(*input.trace, q, spec, input.model->config);
            item["kind"] = "predict";
            item["query"] = q.query;
            item["layer"] = q.layer >= 0 ? q.layer : spec.layer;
            item["head"] = q.head >= 0 ? q.head : spec.head;
            item["keys"] = labels(keyLabels(input, int(answer.row.size())));
            item["answer"] = answer.key;
            item["row"] = values(answer.row.data(), answer.row.size());
            if (answers)
                item["explanation"] = q.explanation;
        }
        out.push_back(std::move(item));
    }
    return out;
}

} // namespace atlas
