#include "view/viewanalysis.h"

#include "trace/names.h"

#include "util/error.h"
#include "util/text.h"
#include "view/analysisrequests.h"
#include "view/specrun.h"
#include "view/viewkinds.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <variant>

namespace atlas {

namespace {

// The JSON object of the spec's values of the keys `kind`'s analysis reads, but those of `leaveOut`.
std::string analysisValues(const ViewSpec &spec, const ViewKind &kind, const std::vector<std::string> &leaveOut)
{
    nlohmann::ordered_json values = nlohmann::ordered_json::object();
    for (const std::string &name : kind.analysisKeys) {
        if (std::find(leaveOut.begin(), leaveOut.end(), name) != leaveOut.end())
            continue;
        const SpecKey *key = findSpecKey(name);
        if (key == nullptr) // tst_viewspec checks every descriptor's names
            throw Error("the " + kind.kind + " view's analysis reads an unknown key '" + name + "'");
        std::visit([&](const auto &f) { values[name] = fieldValue(spec, f); }, key->field);
    }
    return values.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace

const char *const kNothingComputed = "Nothing computed yet: type a text and press Run (Ctrl+R).";

AnalysisRequest analysisRequest(const ViewSpec &spec, const AnalysisContext &context)
{
    return spec.compare.empty() ? analysis::ownRequest(spec, context) : analysis::comparisonRequest(spec, context);
}

AnalysisRequest analysis::ownRequest(const ViewSpec &spec, const AnalysisContext &context)
{
    if (context.model) // every analysis runs one stack
        if (std::string problem = encoderDecoderProblem(spec.view, context.model->config, context.model->name);
            !problem.empty()) {
            AnalysisRequest r;
            r.key = "encoder-decoder/" + spec.view;
            r.problem = sentenceCased(problem);
            return r;
        }
    const ViewKind *kind = findViewKind(spec.view);
    if (!kind || !kind->request)
        return {};
    AnalysisRequest r = kind->request(spec, context);
    if (!r.key.empty()) {
        const std::string values = analysisValues(spec, *kind, {});
        r.key += "|" + values;
        r.settings = spec.view + " " + values;
    }
    return r;
}

std::string analysisSettings(const ViewSpec &spec, const std::vector<std::string> &leaveOut)
{
    const ViewKind *kind = findViewKind(spec.view);
    return spec.view + " " + (kind ? analysisValues(spec, *kind, leaveOut) : std::string());
}

std::shared_ptr<const ViewAnalysis> runAnalysisNow(const AnalysisRequest &request, std::string *problem)
{
    problem->clear();
    if (!request.problem.empty()) {
        *problem = request.problem;
        return nullptr;
    }
    if (!request.run)
        return nullptr;
    try {
        const std::atomic<bool> never {false};
        return request.run(never);
    } catch (const std::exception &e) {
        *problem = e.what();
        return nullptr;
    }
}

std::string notComputedText(const Program *program, const std::string &traceName)
{
    if (!program) // no model has run yet (a view drawn before its first run reaches it)
        return kNothingComputed;
    const int op = program->producerOf(traceName);
    int layer = -1;
    std::string suffix;
    if (op < 0 && names::splitLayerTensor(traceName, &layer, &suffix) && suffix.starts_with("attn.")
        && program->producerOf(names::layerTensor(layer, "attn.lse")) >= 0)
        return "This run keeps its attention on demand, not every head's whole matrices (they would be over the trace "
               "memory budget), and this view reads "
            + traceName
            + " whole. The Attention view shows any head; or use fewer tokens, or raise the budget (Run ▸ "
              "Trace Memory Budget)";
    if (op < 0 && names::splitLayerTensor(traceName, &layer, &suffix) && suffix.starts_with("attn.")
        && program->producerOf(names::layerTensor(layer, "fourier.out")) >= 0)
        return "Block " + std::to_string(layer)
            + " of this model mixes its tokens by a Fourier transform (FNet), with no attention, and this view reads "
            + traceName + ". The Fourier mixing view shows the block's mixing";
    if (op < 0 && (traceName == "logits" || traceName == "next_probs")) // on demand (engine/outputhead.h)
        if (const int norm = program->producerOf("ln_f"); norm >= 0)
            return "Not computed yet: step to " + program->ops[size_t(norm)].label + " (this run computes " + traceName
                + " of a position when asked, from the stream the output head reads)";
    if (op < 0)
        return "The trace has no tensor named '" + traceName + "' (docs/trace-names.md lists the names)";
    const Op &producer = program->ops[size_t(op)];
    const std::string where = producer.layer >= 0 ? " in layer " + std::to_string(producer.layer) : "";
    const bool freed
        = std::ranges::any_of(producer.outputs, [&](const OpOutput &o) { return o.name == traceName && !o.kept; });
    return "Not computed yet: step to " + producer.label + where + " (" + traceName + ")"
        + (freed ? "; past it, this long run keeps only each block's checkpoints and computes " + traceName
                    + " again for a view that shows it"
                 : std::string());
}

} // namespace atlas
