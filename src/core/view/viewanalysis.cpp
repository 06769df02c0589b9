#include "view/viewanalysis.h"

#include "model/modeltokenizer.h"
#include "view/specrun.h"

#include "view/analysishelpers.h"
#include "view/analysisrequests.h"
#include "view/viewkinds.h"

#include "attention/patternparams.h"
#include "trace/names.h"
#include "util/error.h"
#include "util/text.h"

#include <algorithm>

namespace atlas {

namespace {

using namespace atlas::analysis;

} // namespace

HeadQkv analysis::headQkv(const AnalysisContext &c, int layer, int head)
{
    HeadQkv out;
    if (!c.trace || !c.program) {
        out.problem = kNothingComputed;
        return out;
    }
    if (layer < 0 || layer >= c.layers) {
        out.problem = "Layer " + std::to_string(layer) + " does not exist: the model has " + std::to_string(c.layers)
            + " layers.";
        return out;
    }
    if (const ModelConfig *config = c.model ? &c.model->config : nullptr;
        config && (config->attentionSoftcap > 0 || config->queryScaleBase > 0)) {
        out.problem = "This view reruns a head as softmax(QKᵀ/√d); " + config->modelType
            + " divides its scores by √query_pre_attn_scalar and soft-caps them, so the rerun would not be this "
              "model's attention.";
        return out;
    }
    // The queries and keys the scores use: RoPE's rotated ones when the model has them.
    const bool rotated = c.trace && c.trace->find(names::queriesOf(layer, true));
    const TraceEntry *q = c.trace ? c.trace->find(names::queriesOf(layer, rotated)) : nullptr;
    const TraceEntry *k = c.trace ? c.trace->find(names::keysOf(layer, rotated)) : nullptr;
    const TraceEntry *v = c.trace ? c.trace->find(names::layerTensor(layer, "attn.v")) : nullptr;
    if (q == nullptr || k == nullptr || v == nullptr) {
        out.problem = notComputedText(c.program.get(), names::layerTensor(layer, "attn.q"));
        return out;
    }
    if (q->tensor.rank() != 3 || head < 0 || head >= q->tensor.dim(0) || k->tensor.shape() != q->tensor.shape()
        || v->tensor.shape() != q->tensor.shape()) {
        out.problem = "Layer " + std::to_string(layer) + " has no head " + std::to_string(head) + ".";
        return out;
    }
    out.q = q->tensor;
    out.k = k->tensor;
    out.v = v->tensor;
    return out;
}

AnalysisRequest analysis::kernelsRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    const int layer = spec.layer, head = std::max(0, spec.head);
    const HeadQkv qkv = headQkv(c, layer, head);
    if (!qkv.problem.empty())
        return problem(qkv.problem);
    const int64_t T = qkv.q.dim(1);
    if (T > KernelComparisonAnalysis::kMaxTokens)
        return problem("The comparison runs this head through every kernel densely: " + std::to_string(T) + " × "
            + std::to_string(T) + " weights per kernel, computed on the spot. That is for small inputs only: this one "
            + "has " + std::to_string(T) + " tokens, the limit is "
            + std::to_string(KernelComparisonAnalysis::kMaxTokens)
            + ". Shorten the text to compare kernels (the time plot shows how they scale).");
    return headRequest<KernelComparisonAnalysis>("kernels", qkv, layer, head, c,
        [causal = c.causal, padding = c.padding](KernelComparisonAnalysis &out, const Tensor &q, const Tensor &k,
            const Tensor &v, const std::atomic<bool> &) {
            out.entries = attention::compareKernels(q.matrix(), k.matrix(), v.matrix(), causal, padding);
        });
}

AnalysisRequest analysis::approximationRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    const int layer = spec.layer, head = std::max(0, spec.head);
    const HeadQkv qkv = headQkv(c, layer, head);
    if (!qkv.problem.empty())
        return problem(qkv.problem);
    attention::ApproximationSweepOptions options;
    options.kernel = spec.approximation;
    options.seeds = ApproximationAnalysis::kSeeds;
    // A kernel that cannot be causal (Linformer) is compared bidirectionally, and says so.
    options.causal = c.causal && attention::attentionKernel(spec.approximation).causal;
    options.padding = c.padding;
    return headRequest<ApproximationAnalysis>("approximation/" + options.kernel, qkv, layer, head, c,
        [options](ApproximationAnalysis &out, const Tensor &q, const Tensor &k, const Tensor &v,
            const std::atomic<bool> &cancel) {
            attention::ApproximationSweepOptions o = options;
            o.cancel = &cancel;
            out.sweep = attention::approximation_sweep(q.matrix(), k.matrix(), v.matrix(), o);
        });
}

AnalysisRequest analysis::lshRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    const int layer = spec.layer, head = std::max(0, spec.head);
    if (!c.trace || !c.program)
        return problem(kNothingComputed);
    if (layer < 0 || layer >= c.layers)
        return problem("Layer " + std::to_string(layer) + " does not exist: the model has " + std::to_string(c.layers)
            + " layers.");
    const std::string context = names::layerTensor(layer, "attn.context");
    if (!c.trace || !c.trace->contains(context))
        return problem(notComputedText(c.program.get(), context));
    const attention::AttentionKernelSpec &kernel = c.program->attentionOf(layer);
    if (!attention::attentionKernel(kernel.kind).hashes)
        return problem("This layer runs " + kernel.kind + " attention: choose Attention ▸ lsh");
    const Trace &trace = *c.trace;
    std::vector<Tensor> tensors;
    for (const char *suffix : {"lsh.buckets", "lsh.rotations", "attn.q", "attn.probs", "attn.mask"}) {
        const TraceEntry *e = trace.find(names::layerTensor(layer, suffix));
        if (e == nullptr)
            return problem("Layer " + std::to_string(layer) + " ran LSH without a trace of its buckets (an untraced "
                + "run): run it traced.");
        tensors.push_back(e->tensor);
    }
    if (head < 0 || head >= tensors[0].dim(0))
        return problem("Layer " + std::to_string(layer) + " has no head " + std::to_string(head) + ".");
    AnalysisRequest r;
    r.key = "lsh/" + std::to_string(layer) + "/" + std::to_string(head) + (c.causal ? "/causal/" : "/")
        + paddingKey(c.padding);
    for (const Tensor &t : tensors)
        r.key += identity(t);
    r.pinned = tensors;
    r.run = [tensors, params = attention::lshParams(kernel), causal = c.causal, padding = c.padding, layer, head](
                const std::atomic<bool> &) {
        const auto start = Clock::now();
        const int64_t T = tensors[2].dim(1), rounds = tensors[0].dim(1), TT = T * T;
        const attention::LshTracedHead traced {.q = tensors[2].slice(head),
            .buckets = tensors[0].data() + head * rounds * T,
            .rotations = tensors[1].data() + head * (tensors[1].numel() / tensors[1].dim(0)),
            .weights = tensors[3].data() + head * TT,
            .mask = tensors[4].data() + head * TT,
            .params = params,
            .causal = causal,
            .padding = padding};
        auto result = std::make_shared<LshAnalysis>();
        result->layer = layer;
        result->head = head;
        result->data = attention::analyzeLshHead(traced);
        result->milliseconds = millisecondsSince(start);
        return std::shared_ptr<const ViewAnalysis>(result);
    };
    return r;
}

AnalysisRequest analysis::patternRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (c.tokens < 1)
        return problem("No input yet: type some text in the Input box.");
    attention::AttentionKernelSpec kernel;
    const bool suggested = !attention::hasFixedPattern(spec.attention);
    // A layer with a sliding window of its own (Mistral, Gemma's local layers) is suggested that window.
    const int ownWindow = suggested && c.model && c.model->config.windowed(spec.layer) && c.model->config.causal
        ? c.model->config.slidingWindow
        : 0;
    try {
        kernel = !suggested ? attention::parseAttentionKernelSpec(spec.attention, spec.attentionParams)
            : ownWindow > 0 ? attention::slidingWindowPattern(ownWindow)
                            : attention::suggestedPatternSpec("longformer", c.tokens);
    } catch (const Error &e) {
        return problem(e.what());
    }
    AnalysisRequest r;
    r.key = "pattern/" + attention::describeAttentionKernel(kernel) + "/" + std::to_string(c.tokens)
        + (c.causal ? "/causal/" : "/") + paddingKey(c.padding) + "/own" + std::to_string(ownWindow);
    r.run = [kernel, suggested, ownWindow, T = c.tokens, causal = c.causal, padding = c.padding](
                const std::atomic<bool> &) {
        const auto start = Clock::now();
        auto result = std::make_shared<PatternAnalysis>();
        result->spec = kernel;
        result->suggested = suggested;
        result->ownWindow = ownWindow;
        const int cells = T <= PatternAnalysis::kExactCells ? T : PatternAnalysis::kGridCells;
        result->summary = attention::attentionPattern(kernel, T, causal, padding, cells);
        result->formula = attention::patternFormula(kernel, causal);
        result->milliseconds = millisecondsSince(start);
        return std::shared_ptr<const ViewAnalysis>(result);
    };
    return r;
}

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
