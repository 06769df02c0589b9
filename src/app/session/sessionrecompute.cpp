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
    const std::shared_ptr<const Trace> prefetched = m_prefetched;
    runJob([this, names, kept = m_keptTrace, shown = m_trace, prefetched, program = m_program]() -> Commit {
        auto trace = std::make_shared<Trace>(*kept);
        std::vector<std::string> missing;
        for (const std::string &name : names)
            if (const TraceEntry *made = shown->find(name)) // recomputed for the view before
                putRecomputed(*trace, *program, name, made->tensor);
            else if (const TraceEntry *early = prefetched ? prefetched->find(name) : nullptr) // beside the last layer
                putRecomputed(*trace, *program, name, early->tensor);
            else
                missing.push_back(name);
        if (m_cancel)
            return nullptr;
        putRecomputed(*trace, *program, missing, m_engine->recompute(missing));
        // What was made for the layer left, and beside it, stays at hand: prefetchNeighbours keeps what it needs.
        auto carried = std::make_shared<Trace>();
        for (const Trace *made : {shown.get(), prefetched.get()})
            if (made)
                for (const TraceEntry &e : made->entries())
                    if (!kept->contains(e.name) && !trace->contains(e.name) && !carried->contains(e.name))
                        putRecomputed(*carried, *program, e.name, e.tensor);
        return [this, trace, carried, names, kept] {
            if (kept != m_keptTrace) // a newer run or step
                return;
            m_trace = trace;
            m_recomputed = names;
            m_prefetched = carried;
            updateAnalysis();
            emit traceChanged();
        };
    });
}

std::vector<std::string> Session::prefetched() const
{
    std::vector<std::string> names;
    if (m_prefetched)
        for (const TraceEntry &e : m_prefetched->entries())
            names.push_back(e.name);
    return names;
}

const Tensor *Session::prefetchedTensor(const std::string &name) const
{
    const TraceEntry *e = m_prefetched ? m_prefetched->find(name) : nullptr;
    return e ? &e->tensor : nullptr;
}

void Session::prefetchNeighbours()
{
    if (m_busy || !m_engine || !m_model || !m_program || !m_keptTrace || m_program->keeping != BlockKeeping::Input
        || awaitsRecompute())
        return;
    const ViewKind *kind = findViewKind(m_spec.view);
    if (!kind || (kind->needs != ViewNeeds::LayerProbs && kind->needs != ViewNeeds::LayerScores)
        || m_model->config.isEncoderDecoder())
        return;
    std::vector<std::string> names;
    for (const int layer : {m_spec.layer + 1, m_spec.layer - 1})
        if (layer >= 0 && layer < m_model->config.layers)
            for (std::string &name : readoutInputs(m_model->config, layer))
                if (!m_trace->contains(name) && isRecomputable(*m_program, *m_keptTrace, name))
                    names.push_back(std::move(name));
    if (names.empty() || names == m_prefetchAsked)
        return;
    std::vector<std::string> held = m_recomputed; // the view's, and these beside them
    held.insert(held.end(), names.begin(), names.end());
    if (!recomputeRefusal(held).empty())
        return;
    m_prefetchAsked = names;
    runJob(
        [this, names, kept = m_keptTrace, before = m_prefetched, program = m_program]() -> Commit {
            auto prefetched = std::make_shared<Trace>();
            std::vector<std::string> missing;
            for (const std::string &name : names)
                if (const TraceEntry *made = before ? before->find(name) : nullptr) // the layer left, or made before
                    putRecomputed(*prefetched, *program, name, made->tensor);
                else
                    missing.push_back(name);
            try {
                putRecomputed(*prefetched, *program, missing, m_engine->recompute(missing));
            } catch (const std::exception &) { // unasked work: the next step recomputes, and says why if it fails
                return nullptr;
            }
            return [this, prefetched, kept] {
                if (kept == m_keptTrace)
                    m_prefetched = prefetched;
            };
        },
        true);
}

} // namespace atlas
