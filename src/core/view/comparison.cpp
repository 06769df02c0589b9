#include "view/comparison.h"

#include "engine/attentiontrace.h"
#include "engine/outputhead.h"
#include "trace/trace.h"
#include "util/commalist.h"
#include "util/error.h"
#include "view/viewanalysis.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace atlas {

CompareMode compareMode(const ViewSpec &spec)
{
    if (spec.compare.empty())
        return CompareMode::None;
    if (spec.compare == "difference")
        return CompareMode::Difference;
    if (spec.compare == "heads")
        return CompareMode::Heads;
    return CompareMode::Side;
}

ViewSpec sideSpec(const ViewSpec &spec, Side side)
{
    ViewSpec out = spec;
    out.compare.clear();
    out.compareModel.clear();
    out.compareText.clear();
    out.compareAttention.clear();
    out.compareAttentionParams.clear();
    if (side == Side::A)
        return out;
    if (!spec.compareModel.empty())
        out.model = spec.compareModel;
    if (!spec.compareText.empty()) {
        out.text = spec.compareText;
        out.tokens.clear();
        out.padding.clear();
    }
    if (!spec.compareAttention.empty()) {
        out.attention = spec.compareAttention;
        out.attentionParams = spec.compareAttentionParams;
    }
    return out;
}

ViewSpec comparisonEdit(const ViewSpec &comparison, const ViewSpec &edited, Side side)
{
    ViewSpec out = edited;
    // What each run is made of stays the comparison's: a side changes its model and input only through the
    // comparison's keys. Its kernel's parameters (a pattern editor's slider) are its own: A's spec keys, or B's
    // compare_attention_params when B runs a kernel of its own.
    out.model = comparison.model;
    out.positions = comparison.positions;
    out.text = comparison.text;
    out.tokens = comparison.tokens;
    out.padding = comparison.padding;
    out.decoderText = comparison.decoderText;
    out.decoderTokens = comparison.decoderTokens;
    out.compare = comparison.compare;
    out.compareModel = comparison.compareModel;
    out.compareText = comparison.compareText;
    out.compareAttention = comparison.compareAttention;
    out.compareAttentionParams = comparison.compareAttentionParams;
    if (side == Side::B) {
        out.attention = comparison.attention;
        out.attentionParams = comparison.attentionParams;
        out.attentionLayers = comparison.attentionLayers;
        if (!comparison.compareAttention.empty() && edited.attention == comparison.compareAttention)
            out.compareAttentionParams = edited.attentionParams;
    }
    return out;
}

std::string runKeyOf(const ViewSpec &spec)
{
    ViewSpec run;
    run.view = spec.view; // with the site, which attention the run's view input describes
    run.site = spec.site;
    run.model = spec.model;
    run.positions = spec.positions;
    run.text = spec.text;
    run.tokens = spec.tokens;
    run.padding = spec.padding;
    run.decoderText = spec.decoderText;
    run.decoderTokens = spec.decoderTokens;
    run.attention = spec.attention;
    run.attentionParams = spec.attentionParams;
    run.attentionLayers = spec.attentionLayers;
    run.op = spec.op;
    return run.toJson();
}

std::string comparedChange(const ViewSpec &spec)
{
    std::string out;
    const auto add = [&](const std::string &part) { out += (out.empty() ? "" : ", ") + part; };
    if (!spec.compareModel.empty())
        add("model " + spec.compareModel);
    if (!spec.compareText.empty())
        add("text \u201C" + spec.compareText + "\u201D");
    if (!spec.compareAttention.empty())
        add("attention " + kernelCaption(spec.compareAttention, spec.compareAttentionParams));
    return out;
}

std::string kernelCaption(const std::string &kind, const std::vector<std::string> &params)
{
    return params.empty() ? kind : kind + " (" + joinedCommaList(params) + ")";
}

SpecProblem comparisonProblem(const ViewSpec &spec)
{
    if (spec.compare.empty()) {
        for (const auto &[key, set] : {std::pair {"compare_model", !spec.compareModel.empty()},
                 {"compare_text", !spec.compareText.empty()}, {"compare_attention", !spec.compareAttention.empty()},
                 {"compare_attention_params", !spec.compareAttentionParams.empty()}})
            if (set)
                return {key, "is read only with \"compare\": set \"compare\" to \"side\" or \"difference\""};
        return {};
    }
    if (!spec.compareAttentionParams.empty() && spec.compareAttention.empty())
        return {"compare_attention_params", "gives parameters without \"compare_attention\" naming their kernel"};
    if (sideSpec(spec, Side::A) == sideSpec(spec, Side::B))
        return {"compare",
            "run B is the same as run A: give \"compare_model\", \"compare_text\" or \"compare_attention\" to say how "
            "B differs"};
    if (compareMode(spec) == CompareMode::Difference) {
        const ViewKind *kind = findViewKind(spec.view);
        if (kind && !kind->drawsDifference) {
            std::vector<std::string> views;
            for (const ViewKind &k : viewKinds())
                if (k.drawsDifference)
                    views.push_back(k.kind);
            return {"compare",
                "\"difference\" is drawn by the " + joinedCommaList(views) + " view; the " + spec.view
                    + " view compares two runs side by side (\"side\")"};
        }
    }
    return {};
}

namespace {

// One layer's attention of one run, whole or kept on demand.
LayerAttention layerOf(const ComparedRun &run, const names::AttentionSite &site, int layer, const char *side)
{
    std::optional<LayerAttention> found = LayerAttention::find(run.model, run.input.padding, *run.trace, site, layer);
    if (!found)
        throw Error(std::string("run ") + side + " has no " + names::attentionTensor(site, layer, "probs")
            + " (run it to the end)");
    return std::move(*found);
}

std::string shapeText(const LayerAttention &a)
{
    return "[" + std::to_string(a.heads()) + ", " + std::to_string(a.queries()) + ", " + std::to_string(a.keys()) + "]";
}

// A run's logits at positions [first, first + count): rows of its traced logits, or computed by its output head from
// the last stream (a run kept on demand keeps no [T, V] tensor).
Tensor logitRows(const ComparedRun &run, int64_t first, int64_t count, const char *side)
{
    std::vector<int> positions(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
        positions[size_t(i)] = int(first + i);
    if (const TraceEntry *logits = run.trace->find("logits"))
        return rowsOf(logits->tensor, positions);
    if (!run.model || !run.program)
        throw Error(std::string("run ") + side + " has no logits (run it to the end)");
    return nextTokenLogits(*run.model, *run.program, *run.trace, run.input, positions);
}

// Rows of queries read at once: the on-demand readout's tile.
constexpr int64_t kRowBlock = 64;

} // namespace

HeadsCompared headsCompared(const ComparedRun &a, const ComparedRun &b, const names::AttentionSite &site, int layers,
    const std::atomic<bool> *cancel, AnalysisProgress *progress)
{
    HeadsCompared out;
    out.layers = layers;
    if (progress)
        progress->total = layers + 1; // every layer, then the logits
    std::vector<float> bufferA, bufferB;
    for (int layer = 0; layer < layers; ++layer) {
        const LayerAttention pa = layerOf(a, site, layer, "A"), pb = layerOf(b, site, layer, "B");
        if (pa.heads() != pb.heads() || pa.queries() != pb.queries() || pa.keys() != pb.keys())
            throw Error(pa.name() + " is " + shapeText(pa) + " in run A and " + shapeText(pb)
                + " in run B: compare two runs of one length and one model shape");
        const int64_t H = pa.heads(), T = pa.queries(), S = pa.keys();
        if (layer == 0) {
            out.heads = int(H);
            out.queries = int(T);
            out.distance.assign(size_t(layers) * size_t(H), 0.0f);
        } else if (H != out.heads) {
            throw Error("layer " + std::to_string(layer) + " has " + std::to_string(H) + " heads, layer 0 "
                + std::to_string(out.heads) + ": compared head by head, every layer needs as many");
        }
        for (int64_t h = 0; h < H; ++h) {
            double sum = 0;
            for (int64_t r0 = 0; r0 < T; r0 += kRowBlock) {
                if (cancel && *cancel)
                    return out;
                const int64_t r1 = std::min(T, r0 + kRowBlock);
                const float *ra = pa.rows(ops::ScoreStage::Probs, h, r0, r1, bufferA),
                            *rb = pb.rows(ops::ScoreStage::Probs, h, r0, r1, bufferB);
                for (int64_t q = 0; q < r1 - r0; ++q) {
                    double row = 0;
                    for (int64_t k = 0; k < S; ++k)
                        row += std::fabs(double(ra[q * S + k]) - double(rb[q * S + k]));
                    sum += row / 2;
                }
            }
            out.distance[size_t(layer) * size_t(H) + size_t(h)] = T > 0 ? float(sum / double(T)) : 0.0f;
        }
        if (progress)
            ++progress->done;
    }
    try {
        const int64_t T = out.queries;
        for (int64_t first = 0; first < T; first += kRowBlock) {
            if (cancel && *cancel)
                return out;
            const int64_t count = std::min(kRowBlock, T - first);
            const Tensor la = logitRows(a, first, count, "A"), lb = logitRows(b, first, count, "B");
            if (la.shape() != lb.shape())
                throw Error("the logits are " + la.shapeString() + " in run A and " + lb.shapeString()
                    + " in run B: compare two runs of one length and one model shape");
            const int64_t V = la.dim(1);
            for (int64_t t = 0; t < count; ++t) {
                const float *ra = la.data() + t * V, *rb = lb.data() + t * V;
                const auto logSumExp = [V](const float *r, int64_t &best) {
                    best = int64_t(std::max_element(r, r + V) - r);
                    double sum = 0;
                    for (int64_t v = 0; v < V; ++v)
                        sum += std::exp(double(r[v]) - double(r[best]));
                    return double(r[best]) + std::log(sum);
                };
                int64_t bestA = 0, bestB = 0;
                const double za = logSumExp(ra, bestA), zb = logSumExp(rb, bestB);
                double kl = 0;
                for (int64_t v = 0; v < V; ++v) {
                    const double logPa = double(ra[v]) - za, logPb = double(rb[v]) - zb;
                    kl += std::exp(logPa) * (logPa - logPb);
                }
                out.nextTokenKl.push_back(std::max(0.0, kl));
                out.sameTopToken.push_back(bestA == bestB);
            }
        }
    } catch (const Error &e) {
        out.nextTokenKl.clear();
        out.sameTopToken.clear();
        out.nextTokenProblem = e.what();
    }
    if (progress)
        ++progress->done;
    return out;
}

} // namespace atlas
