#include "view/comparison.h"

#include "util/commalist.h"

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

} // namespace atlas
