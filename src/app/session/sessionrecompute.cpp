// What a checkpointed trace (engine/recompute.h) computes again for the view on screen: the session publishes the
// trace the engine kept plus the tensors the spec's view reads (view/specrun.h, recomputedForSpec), made on the
// worker. Only the current view's are held: another layer or view replaces them.
#include "session/session.h"

#include "engine/recompute.h"
#include "util/memorycheck.h"
#include "view/specrun.h"

namespace atlas {

std::vector<std::string> Session::recomputedForView() const
{
    if (!m_model || !m_program || !m_keptTrace)
        return {};
    return recomputedForSpec(m_spec, m_model->config, *m_program, *m_keptTrace);
}

bool Session::awaitsRecompute() const
{
    return recomputedForView() != m_recomputed;
}

std::string Session::recomputeRefusal(const std::vector<std::string> &names) const
{
    const size_t more = outputBytes(*m_program, names), kept = m_keptTrace->bytes();
    if (kept + more <= m_memoryBudget)
        return {};
    return "Not computed: this view reads " + std::to_string(names.size()) + " tensors computed again ("
        + formatBytes(double(more)) + ") beside the " + formatBytes(double(kept)) + " this run keeps, over the "
        + formatBytes(double(m_memoryBudget))
        + " trace budget. Raise it (Run ▸ Trace Memory Budget), use fewer tokens, or choose a view of one layer.";
}

void Session::recomputeForView()
{
    if (m_busy || !m_engine || !awaitsRecompute())
        return;
    std::vector<std::string> names = recomputedForView();
    if (names == m_recomputeAsked || !recomputeRefusal(names).empty())
        return;
    m_recomputeAsked = names;
    runJob([this, names, kept = m_keptTrace, shown = m_trace, program = m_program]() -> Commit {
        auto trace = std::make_shared<Trace>(*kept);
        std::vector<std::string> missing;
        for (const std::string &name : names)
            if (const TraceEntry *made = shown->find(name)) // recomputed for the view before
                putRecomputed(*trace, *program, name, made->tensor);
            else
                missing.push_back(name);
        if (m_cancel)
            return nullptr;
        putRecomputed(*trace, *program, missing, m_engine->recompute(missing));
        return [this, trace, names, kept] {
            if (kept != m_keptTrace) // a newer run or step
                return;
            m_trace = trace;
            m_recomputed = names;
            updateAnalysis();
            emit traceChanged();
        };
    });
}

} // namespace atlas
