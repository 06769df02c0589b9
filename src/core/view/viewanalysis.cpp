#include "view/viewanalysis.h"

#include "util/text.h"
#include "view/analysisrequests.h"
#include "view/specrun.h"
#include "view/viewkinds.h"

#include <algorithm>

namespace atlas {

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
    return kind && kind->request ? kind->request(spec, context) : AnalysisRequest {};
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
    const int op = program ? program->producerOf(traceName) : -1;
    if (op < 0)
        return "The trace has no tensor named '" + traceName + "' (docs/trace-names.md lists the names)";
    const Op &producer = program->ops[size_t(op)];
    const std::string where = producer.layer >= 0 ? " in layer " + std::to_string(producer.layer) : "";
    return "Not computed yet: step to " + producer.label + where + " (" + traceName + ")";
}

} // namespace atlas
