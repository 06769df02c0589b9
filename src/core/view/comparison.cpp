#include "view/comparison.h"

#include "trace/trace.h"
#include "util/commalist.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace atlas {

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
    if (spec.compare == "difference") {
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

HeadsCompared headsCompared(const Trace &a, const Trace &b, const names::AttentionSite &site, int layers)
{
    const auto both = [&](const std::string &name) {
        const TraceEntry *ea = a.find(name), *eb = b.find(name);
        if (!ea || !eb)
            throw Error(std::string("run ") + (ea ? "B" : "A") + " has no " + name + " (run it to the end)");
        if (ea->tensor.shape() != eb->tensor.shape())
            throw Error(name + " is " + ea->tensor.shapeString() + " in run A and " + eb->tensor.shapeString()
                + " in run B: compare two runs of one length and one model shape");
        return std::pair<const Tensor &, const Tensor &>(ea->tensor, eb->tensor);
    };
    HeadsCompared out;
    out.layers = layers;
    for (int layer = 0; layer < layers; ++layer) {
        const auto [pa, pb] = both(names::attentionTensor(site, layer, "probs"));
        if (pa.rank() != 3)
            throw Error(names::attentionTensor(site, layer, "probs") + " is not [heads, queries, keys]");
        const int64_t H = pa.dim(0), T = pa.dim(1), S = pa.dim(2);
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
            for (int64_t q = 0; q < T; ++q) {
                const float *ra = pa.data() + (h * T + q) * S, *rb = pb.data() + (h * T + q) * S;
                double row = 0;
                for (int64_t k = 0; k < S; ++k)
                    row += std::fabs(double(ra[k]) - double(rb[k]));
                sum += row / 2;
            }
            out.distance[size_t(layer) * size_t(H) + size_t(h)] = T > 0 ? float(sum / double(T)) : 0.0f;
        }
    }
    try {
        const auto [la, lb] = both("logits");
        const int64_t T = la.dim(0), V = la.dim(1);
        for (int64_t t = 0; t < T; ++t) {
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
    } catch (const Error &e) {
        out.nextTokenProblem = e.what();
    }
    return out;
}

} // namespace atlas
