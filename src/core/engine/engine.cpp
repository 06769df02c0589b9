#include "engine/engine.h"

#include "engine/outputhead.h"
#include "engine/recompute.h"
#include "util/blasthreads.h"
#include "util/error.h"
#include "util/memorycheck.h"

#include <algorithm>
#include <set>

namespace atlas {

namespace {

// `what` ("the input", "the source") checked against the model: length, ids, padding positions.
void validateTokens(
    const ModelConfig &c, const std::vector<int> &tokens, const std::vector<int> &padding, const std::string &what)
{
    const int T = static_cast<int>(tokens.size());
    if (T == 0)
        throw Error(what + " is empty: give at least one token");
    if (T > c.context)
        throw Error(what + " has " + std::to_string(T) + " tokens, longer than the model's context of "
            + std::to_string(c.context) + " (n_positions)");
    for (int t = 0; t < T; ++t)
        if (tokens[t] < 0 || tokens[t] >= c.vocab)
            throw Error(what + ": token id " + std::to_string(tokens[t]) + " at position " + std::to_string(t)
                + " is outside the vocabulary [0, " + std::to_string(c.vocab) + ")");
    for (int p : padding)
        if (p < 0 || p >= T)
            throw Error(
                what + ": padding position " + std::to_string(p) + " is outside it (0.." + std::to_string(T - 1) + ")");
}

void validateInput(const ModelConfig &c, const Input &input)
{
    validateTokens(c, input.tokens, input.padding, c.isEncoderDecoder() ? "the decoder input" : "the input");
    if (!c.isEncoderDecoder()) {
        if (!input.source.empty())
            throw Error(std::string("a source text is for an encoder-decoder model; this model is ")
                + (c.causal ? "a decoder" : "an encoder") + " with one stack");
        return;
    }
    validateTokens(c, input.source, input.sourcePadding, "the source (the encoder's input)");
    if (!input.attention.empty())
        throw Error("an encoder-decoder model runs exact attention only: efficient kernels are not implemented for "
                    "two stacks");
    if (!input.ablation.empty())
        throw Error("head ablation is not implemented for encoder-decoder models");
}

} // namespace

Engine::Engine(std::shared_ptr<const Model> model, Input input, EngineOptions options)
    : m_model(std::move(model))
    , m_input(std::move(input))
    , m_options(options)
{
    if (!m_model)
        throw Error("no model");
    validateInput(m_model->config, m_input);
    for (size_t i = 0; i < m_input.attention.size(); ++i)
        attention::validateAttentionKernelSpec(m_input.attention[i]);
    m_input.ablation.validate(m_model->config);
    if (m_input.attention.size() > 1 && int(m_input.attention.size()) != m_model->config.layers)
        throw Error("give one attention kernel for every layer (" + std::to_string(m_model->config.layers)
            + "), or a single one for all");
    using Choice = EngineOptions::Attention;
    using Keep = EngineOptions::Checkpoints;
    const bool kept = m_options.checkpoints == Keep::Always || m_options.checkpoints == Keep::InputOnly;
    if (m_options.attention == Choice::OnDemand || kept)
        m_attentionTrace = AttentionTrace::OnDemand;
    const auto build = [&](BlockKeeping keeping) {
        m_program = Program::build(m_model->config, m_input, m_options.trace, 1, m_attentionTrace, keeping);
    };
    build(!m_options.trace || !kept                    ? BlockKeeping::Everything
            : m_options.checkpoints == Keep::InputOnly ? BlockKeeping::Input
                                                       : BlockKeeping::Checkpoints);
    const auto over = [&] { return m_options.trace && m_program.tracedBytes() > m_options.memoryBudget; };
    std::string whyWhole;
    if (over() && m_options.attention == Choice::Automatic && m_attentionTrace == AttentionTrace::Whole) {
        whyWhole = onDemandObstacle(m_model->config, m_input);
        if (whyWhole.empty()) {
            m_wholeTraceBytes = m_program.tracedBytes();
            m_attentionTrace = AttentionTrace::OnDemand;
            build(BlockKeeping::Everything);
        }
    }
    if (m_options.checkpoints == Keep::Automatic && m_attentionTrace == AttentionTrace::OnDemand)
        for (BlockKeeping less : {BlockKeeping::Checkpoints, BlockKeeping::Input})
            if (over()) {
                if (m_wholeTraceBytes == 0)
                    m_wholeTraceBytes = m_program.tracedBytes();
                build(less);
            }
    if (over())
        throw Error("tracing " + std::to_string(m_input.tokens.size()) + " tokens through this model needs "
            + formatBytes(double(m_program.tracedBytes()))
            + (m_program.keeping == BlockKeeping::Input              ? " keeping only each block's input"
                    : m_program.keeping == BlockKeeping::Checkpoints ? " keeping only each block's checkpoints"
                    : m_attentionTrace == AttentionTrace::OnDemand ? " with its attention and logits computed on demand"
                    : whyWhole.empty()                             ? ""
                                                                   : " (its attention kept whole: " + whyWhole + ")")
            + ", over the trace memory budget of " + formatBytes(double(m_options.memoryBudget))
            + ": use fewer tokens, raise the budget (--memory-budget GIB, or Run ▸ Trace Memory Budget in the app), or "
              "run untraced (bench --no-trace)");
    if (m_program.keeping == BlockKeeping::Input) {
        m_fusedEnd.assign(m_program.ops.size(), -1);
        for (size_t k = 0; k < m_program.ops.size(); ++k)
            if (m_program.ops[k].fused)
                m_fusedEnd[size_t(m_program.ops[k].fusedFrom)] = int(k);
    }
    if (m_program.checkpointed())
        for (const std::vector<Program::FreedOutput> &freed : m_program.freedAfter()) {
            m_freedAfter.emplace_back();
            for (const Program::FreedOutput &f : freed)
                m_freedAfter.back().push_back(f.name);
        }
}

void Engine::stepTowards(int target)
{
    const int end = m_fusedEnd.empty() || atEnd() ? -1 : m_fusedEnd[size_t(m_cursor)];
    if (end < 0 || end >= target)
        return step();
    adaptBlasThreadsToLoad();
    const OpOutput &out = m_program.ops[size_t(end)].outputs.front();
    m_trace.put(out.name, out.formula, end, m_program.ops[size_t(end)].fused(*m_model, m_trace));
    for (; m_cursor <= end; ++m_cursor) // what the group's ops were the last to read (their own outputs never made)
        for (const std::string &name : m_freedAfter[size_t(m_cursor)])
            m_trace.drop(name);
}

void Engine::step()
{
    if (atEnd())
        return;
    adaptBlasThreadsToLoad(); // as many OpenBLAS threads as idle cores (util/blasthreads.h)
    const Op &op = m_program.ops[static_cast<size_t>(m_cursor)];
    refuseStepOverBudget(op);
    std::vector<Tensor> outputs = op.run(*m_model, m_input, m_trace);
    for (size_t i = 0; i < outputs.size(); ++i)
        m_trace.put(op.outputs[i].name, op.outputs[i].formula, m_cursor, std::move(outputs[i]));
    ++m_cursor;
    if (!m_freedAfter.empty())
        for (const std::string &name : m_freedAfter[size_t(m_cursor - 1)])
            m_trace.drop(name);
    if (!m_options.trace) {
        // Free every tensor no later operation reads, except the final outputs.
        std::set<std::string> needed = {"logits", "next_probs"};
        if (m_program.producerOf("logits") < 0) // on demand: the stream the output head reads (engine/outputhead.h)
            for (const std::string &seed : outputHead(m_program).seeds)
                needed.insert(seed);
        for (size_t i = static_cast<size_t>(m_cursor); i < m_program.ops.size(); ++i)
            needed.insert(m_program.ops[i].inputs.begin(), m_program.ops[i].inputs.end());
        std::vector<std::string> unused;
        for (const TraceEntry &e : m_trace.entries())
            if (!needed.count(e.name))
                unused.push_back(e.name);
        for (const std::string &name : unused)
            m_trace.drop(name);
    }
}

// The budget's estimate takes each fused feed-forward whole (Program::tracedBytes); one op at a time, its [T, F]
// activations are made, and where they would take the trace over the budget the step is refused with the figures.
void Engine::refuseStepOverBudget(const Op &op) const
{
    if (m_fusedEnd.empty() || !m_options.trace)
        return;
    const bool insideFused = std::ranges::any_of(m_program.ops,
        [&](const Op &o) { return o.fused && o.fusedFrom <= m_cursor && m_cursor < int(&o - m_program.ops.data()); });
    if (!insideFused)
        return;
    size_t made = 0;
    for (const OpOutput &o : op.outputs)
        made += o.bytes();
    if (m_trace.bytes() + made <= m_options.memoryBudget)
        return;
    throw Error("stepping through " + op.name + " one operation at a time makes its " + formatBytes(double(made))
        + " output whole beside the " + formatBytes(double(m_trace.bytes()))
        + " the trace holds, over the trace memory budget of " + formatBytes(double(m_options.memoryBudget))
        + ": run past the feed-forward (Run to End, or a later operation), which takes it a few hundred rows at a "
          "time, or raise the budget");
}

Tensor Engine::nextTokenProbs(const std::vector<int> &positions) const
{
    return atlas::nextTokenProbs(*m_model, m_program, m_trace, m_input, positions);
}

void Engine::back()
{
    if (m_cursor == 0)
        return;
    if (!m_options.trace)
        throw Error("stepping back needs a traced run");
    --m_cursor;
    m_trace.removeOutputsOf(m_cursor);
    // A checkpointed trace freed the inputs this op was the last to read: the next step() reads them again.
    for (const std::string &in : m_program.ops[size_t(m_cursor)].inputs)
        if (!m_trace.contains(in))
            putRecomputed(m_trace, m_program, in, recompute(in));
}

Tensor Engine::recompute(const std::string &name) const
{
    return recompute(std::vector<std::string> {name}).front();
}

std::vector<Tensor> Engine::recompute(const std::vector<std::string> &names) const
{
    for (const std::string &name : names)
        if (!m_trace.contains(name) && m_program.producerOf(name) >= m_cursor)
            throw Error("'" + name + "' is not computed yet: its operation has not run");
    return recomputeTensors(*m_model, m_program, m_input, m_trace, names);
}

void Engine::runTo(int cursor)
{
    cursor = std::clamp(cursor, 0, opCount());
    while (m_cursor < cursor)
        stepTowards(cursor);
    while (m_cursor > cursor)
        back();
}

bool Engine::runToEnd(const std::function<bool(int, int)> &progress)
{
    while (!atEnd()) {
        stepTowards(opCount());
        if (progress && !progress(m_cursor, opCount()))
            return atEnd();
    }
    return true;
}

} // namespace atlas
