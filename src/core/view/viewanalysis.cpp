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

// The spec's layer routed at the spec's capacity factor (analysis/expertrouting.h): a forward pass of the model on the
// input with the factor changed, so every layer before it routes at that factor too.
AnalysisRequest analysis::expertsRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (int(c.tokenIds.size()) > ExpertsAnalysis::kMaxTokens)
        return problem("The Experts view routes up to " + std::to_string(ExpertsAnalysis::kMaxTokens)
            + " tokens; the input has " + std::to_string(c.tokenIds.size()) + ".");
    const ModelConfig &config = c.model->config;
    const int layer = std::clamp(spec.layer, 0, config.layers - 1);
    try {
        if (spec.capacityFactor > 0 || spec.expertTopK > 0)
            (void)c.model->withRouting(spec.capacityFactor, spec.expertTopK, "capacity_factor / expert_top_k");
        if (const std::string why = expertLayerProblem(config, layer); !why.empty())
            throw Error(why);
    } catch (const Error &e) {
        return problem(std::string("The Experts view shows a mixture-of-experts layer: ") + e.what() + ".");
    }
    AnalysisRequest r;
    r.key = "experts/" + modelIdentity(*c.model) + "/" + std::to_string(layer) + "/cf"
        + std::to_string(spec.capacityFactor) + "/k" + std::to_string(spec.expertTopK) + "/d"
        + std::to_string(spec.devices) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    r.run = [model = c.model, input = inputOf(c), layer, factor = spec.capacityFactor, topK = spec.expertTopK,
                devices = spec.devices](const std::atomic<bool> &cancel) {
        return timedResult<ExpertsAnalysis>([&](ExpertsAnalysis &result) {
            result.routing = expertRouting(*model, input, layer, factor, topK, devices, &cancel);
        });
    };
    return r;
}

// The spec's dense feed-forward layer made sparse, one neuron per block of `block_size` (analysis/ffnsparsity.h).
AnalysisRequest analysis::sparseFfnRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    const int layer = std::clamp(spec.layer, 0, c.model->config.layers - 1);
    if (const std::string why = ffnSparsityProblem(c.model->config, *c.trace, layer); !why.empty())
        return problem("The Sparse FFN view needs a dense feed-forward layer: " + why + ".");
    const TraceEntry &act = *c.trace->find(names::layerTensor(layer, "mlp.act"));
    const TraceEntry &down = *c.trace->find(names::layerTensor(layer, "mlp.down"));
    if (spec.blockSize > act.tensor.dim(1))
        return problem("block_size " + std::to_string(spec.blockSize) + " is more than the layer's "
            + std::to_string(act.tensor.dim(1)) + " neurons.");
    AnalysisRequest r;
    r.key = "sparse-ffn/" + modelIdentity(*c.model) + "/" + std::to_string(layer) + "/n"
        + std::to_string(spec.blockSize) + "/" + identity(act.tensor) + identity(down.tensor);
    r.pinned = {c.model->wte, act.tensor, down.tensor};
    r.run = [model = c.model, trace = c.trace, layer, n = spec.blockSize](const std::atomic<bool> &) {
        return timedResult<SparseFfnAnalysis>(
            [&](SparseFfnAnalysis &result) { result.sparsity = ffnSparsity(*model, *trace, layer, n); });
    };
    return r;
}

// Every layer's heads counted for exact zeros: the whole forward pass must be traced.
AnalysisRequest analysis::sparseAttentionRequest(const ViewSpec &, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    if (const std::string why = attentionSparsityProblem(*c.model, *c.trace); !why.empty()) {
        if (const std::string untraced = untracedWeightsText(c); !untraced.empty())
            return problem(untraced);
        return problem("The Sparsity view cannot count this model's heads: " + why + ".");
    }
    AnalysisRequest r = everyLayerRequest("sparse-attention", c, {"attn.probs", "attn.masked"});
    r.run = [model = c.model, trace = c.trace](const std::atomic<bool> &) {
        return timedResult<SparseAttentionAnalysis>(
            [&](SparseAttentionAnalysis &result) { result.sparsity = attentionSparsity(*model, *trace); });
    };
    return r;
}

// The masked LM's fills at each hidden position: the model rerun on the input, corrupted from the spec's seed when its
// objective is "mlm".
AnalysisRequest analysis::fillsRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (const std::string why = maskedFillsProblem(c.model->config, c.model->name); !why.empty())
        return problem("The Masked fills view shows what a masked language model names: " + why + ".");
    if (!spec.objective.empty() && spec.objective != "mlm")
        return problem("The Masked fills view fills the masked LM's corruption or the [MASK]s you type; the "
            + spec.objective + " objective hides nothing for it to fill: choose the masked LM in the Objectives view.");
    const bool corrupted = spec.objective == "mlm";
    const int k = std::min(spec.topK, FillsAnalysis::kMaxFills);
    AnalysisRequest r;
    r.key = "fills/" + modelIdentity(*c.model) + (corrupted ? "/seed" + std::to_string(spec.seed) : "/typed") + "/k"
        + std::to_string(k) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    r.run = [model = c.model, input = inputOf(c), corrupted, seed = spec.seed, k](const std::atomic<bool> &cancel) {
        return timedResult<FillsAnalysis>([&](FillsAnalysis &result) {
            result.corrupted = corrupted;
            result.seed = seed;
            result.fills = maskedFills(model, input.tokens, input.padding,
                corrupted ? std::optional<uint64_t>(uint64_t(seed)) : std::nullopt, k, &cancel);
        });
    };
    return r;
}

// The input's text split by the model's tokenizer and by another; ids given instead of text are decoded first.
AnalysisRequest analysis::tokenizerRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model)
        return problem(kNothingComputed);
    AnalysisRequest r;
    r.key = "tokenizer/" + c.model->directory + "|" + c.model->name + "/" + spec.compareTokenizer + "/"
        + (spec.tokens.empty() ? "text:" + spec.text : "tokens/" + inputKey(c));
    r.run = [model = c.model, other = spec.compareTokenizer, text = spec.text, tokens = spec.tokens](
                const std::atomic<bool> &) {
        return timedResult<TokenizerAnalysis>([&](TokenizerAnalysis &result) {
            const std::unique_ptr<Tokenizer> own = tokenizerForModel(*model);
            const std::string name = model->name.empty() ? model->directory : model->name;
            result.comparison = compareTokenizers(*own, name, other, tokens.empty() ? text : own->decode(tokens));
        });
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
