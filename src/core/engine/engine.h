#pragma once

#include "engine/input.h"
#include "engine/program.h"
#include "model/model.h"
#include "trace/trace.h"

#include <functional>
#include <memory>

namespace atlas {

struct EngineOptions
{
    bool trace = true; // false: free each intermediate once no later operation reads it (no stepping back)
    size_t memoryBudget = size_t(8) << 30; // bytes the trace may hold; a larger request is refused up front
    // How the trace keeps attention (engine/attentiontrace.h). Automatic: whole matrices while the whole trace fits
    // the budget, else on demand when every layer can be.
    enum class Attention { Automatic, Whole, OnDemand } attention = Attention::Automatic;
    // Whether each block keeps only its checkpoints (Always) or only its input (InputOnly; Program::build's
    // BlockKeeping, engine/recompute.h). Automatic: its checkpoints when the trace with attention on demand is still
    // over the budget, its input when that is too.
    enum class Checkpoints { Automatic, Never, Always, InputOnly } checkpoints = Checkpoints::Automatic;
};

// Runs a model's Program one operation at a time. The trace is the engine's state: step() runs the next
// operation on tensors already in the trace, back() removes the last operation's outputs, so stepping
// forward again recomputes exactly the same tensors.
class Engine
{
public:
    // Validates the input (token ids in the vocabulary, length within the context, padding positions) and
    // the memory budget; throws atlas::Error with the reason.
    Engine(std::shared_ptr<const Model> model, Input input, EngineOptions options = {});

    const Model &model() const { return *m_model; }
    std::shared_ptr<const Model> modelPtr() const { return m_model; }
    const Input &input() const { return m_input; }
    const Program &program() const { return m_program; }
    int opCount() const { return static_cast<int>(m_program.ops.size()); }
    int cursor() const { return m_cursor; } // operations run so far; the next one is program().ops[cursor()]
    bool atEnd() const { return m_cursor == opCount(); }

    void step();
    // Runs the next op on the way to op `target`, or, on a run keeping block inputs, the feed-forward starting here as
    // one pass when `target` is past its end (Op::fused), as runTo and runToEnd do.
    void stepTowards(int target);
    void back();
    void runTo(int cursor);
    // Runs to the end; `progress(done, total)` may return false to cancel (the engine stops between ops).
    bool runToEnd(const std::function<bool(int, int)> &progress = {});

    const Trace &trace() const { return m_trace; }
    Trace &trace() { return m_trace; }
    // The model's probabilities at `positions`, [rows, V]: the trace's next_probs, or on a run kept on demand
    // computed from the last stream (engine/outputhead.h). Throws atlas::Error before the last block has run.
    Tensor nextTokenProbs(const std::vector<int> &positions) const;
    size_t estimatedTraceBytes() const { return m_program.tracedBytes(); }
    AttentionTrace attentionTrace() const { return m_attentionTrace; }
    // What the trace would have taken with every attention matrix whole, when the automatic choice kept it on demand
    // for that reason; 0 otherwise.
    size_t wholeTraceBytes() const { return m_wholeTraceBytes; }
    // Each block keeps its checkpoints or its input only; the tensors it freed are recomputed by recompute().
    bool checkpointed() const { return m_program.checkpointed(); }
    BlockKeeping blockKeeping() const { return m_program.keeping; }
    // Tensor `name`: the trace's, or one a checkpointed trace freed, computed again (engine/recompute.h). Reads only,
    // so a worker may call it while others read the trace.
    Tensor recompute(const std::string &name) const;
    std::vector<Tensor> recompute(const std::vector<std::string> &names) const; // an op they share runs once

private:
    void refuseStepOverBudget(const Op &op) const;

    std::shared_ptr<const Model> m_model;
    Input m_input;
    EngineOptions m_options;
    Program m_program;
    AttentionTrace m_attentionTrace = AttentionTrace::Whole;
    size_t m_wholeTraceBytes = 0;
    Trace m_trace;
    int m_cursor = 0;
    // A checkpointed program's tensors that op k is the last to read, or that nothing reads: freed after op k runs.
    std::vector<std::vector<std::string>> m_freedAfter;
    // A run keeping block inputs: at op k that starts a feed-forward taken whole (Op::fused), the op that ends it.
    std::vector<int> m_fusedEnd;
};

} // namespace atlas
