#include "trace/allocationrecorder.h"

#include "trace/names.h"

#include <algorithm>

namespace atlas {

namespace {

AllocationRecorder *&currentRecorder()
{
    static thread_local AllocationRecorder *recorder = nullptr;
    return recorder;
}

} // namespace

const char *phaseName(MemoryPhase phase)
{
    switch (phase) {
    case MemoryPhase::Setup:
        return "setup";
    case MemoryPhase::Forward:
        return "forward";
    case MemoryPhase::Backward:
        return "backward";
    case MemoryPhase::Recompute:
        return "recompute";
    case MemoryPhase::Optimizer:
        return "optimizer";
    }
    return "setup";
}

const char *categoryName(MemoryCategory category)
{
    static const char *const names[kMemoryCategories] = {"parameters", "gradients", "optimizer state",
        "stored activations", "recomputed activations", "transient workspace"};
    return names[int(category)];
}

const char *categoryKey(MemoryCategory category)
{
    static const char *const keys[kMemoryCategories]
        = {"parameters", "gradients", "optimizer_state", "stored_activations", "recomputed_activations", "workspace"};
    return keys[int(category)];
}

bool isActivation(MemoryCategory category)
{
    return category == MemoryCategory::StoredActivations || category == MemoryCategory::RecomputedActivations
        || category == MemoryCategory::Workspace;
}

CategoryBytes MemoryRecording::liveAt(int event) const
{
    CategoryBytes live {};
    for (int i = 0; i <= event && i < int(events.size()); ++i)
        live[size_t(events[size_t(i)].category)] += events[size_t(i)].bytes;
    return live;
}

int MemoryRecording::peakEvent(bool activationsOnly) const
{
    int best = -1;
    int64_t bestBytes = -1, running = 0;
    for (int i = 0; i < int(events.size()); ++i) {
        const MemoryEvent &e = events[size_t(i)];
        if (activationsOnly && isActivation(e.category))
            running += e.bytes;
        const int64_t now = activationsOnly ? running : e.live;
        if (now > bestBytes) {
            bestBytes = now;
            best = i;
        }
    }
    return best;
}

int64_t MemoryRecording::peakBytes(bool activationsOnly) const
{
    const int event = peakEvent(activationsOnly);
    if (event < 0)
        return 0;
    if (!activationsOnly)
        return events[size_t(event)].live;
    const CategoryBytes live = liveAt(event);
    int64_t total = 0;
    for (int c = 0; c < kMemoryCategories; ++c)
        if (isActivation(MemoryCategory(c)))
            total += live[size_t(c)];
    return total;
}

AllocationRecorder::AllocationRecorder()
    : m_previous(allocationListener())
    , m_start(std::chrono::steady_clock::now())
{
    allocationListener() = this;
    currentRecorder() = this;
    m_recording.ops.push_back({"setup", MemoryPhase::Setup, -1, 0.0});
}

AllocationRecorder::~AllocationRecorder()
{
    if (m_listening)
        finish();
}

AllocationRecorder *AllocationRecorder::current()
{
    return currentRecorder();
}

MemoryRecording AllocationRecorder::finish()
{
    if (m_listening) {
        allocationListener() = m_previous;
        currentRecorder() = nullptr;
        m_listening = false;
        m_recording.totalMicroseconds = elapsed();
    }
    return std::move(m_recording);
}

void AllocationRecorder::add(const void *buffer, int64_t bytes, MemoryCategory category)
{
    const int op = currentOp();
    m_liveBuffers[buffer] = {bytes, category, op};
    m_live += bytes;
    m_recording.allocated[size_t(category)] += bytes;
    m_recording.events.push_back({op, category, bytes, m_live, op});
}

int AllocationRecorder::currentOp()
{
    if (m_resumePending) {
        // The outer operation goes on after a nested one: a new entry of the same name, so that operations stay
        // in order of time.
        const MemoryOp resumed = m_recording.ops[size_t(m_context.op)];
        m_recording.ops.push_back({resumed.name, resumed.phase, resumed.layer, elapsed()});
        m_context.op = int(m_recording.ops.size()) - 1;
        m_resumePending = false;
    }
    return m_context.op;
}

double AllocationRecorder::elapsed() const
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - m_start).count();
}

void AllocationRecorder::adopt(const Tensor &tensor, MemoryCategory category)
{
    if (tensor.data() != nullptr && !m_liveBuffers.count(tensor.data()))
        add(tensor.data(), int64_t(tensor.bytes()), category);
}

void AllocationRecorder::allocated(const void *buffer, size_t bytes)
{
    if (m_previous)
        m_previous->allocated(buffer, bytes);
    m_recording.allocatorBytes += int64_t(bytes);
    add(buffer, int64_t(bytes), m_context.category);
}

void AllocationRecorder::freed(const void *buffer, size_t bytes)
{
    if (m_previous)
        m_previous->freed(buffer, bytes);
    const auto it = m_liveBuffers.find(buffer);
    if (it == m_liveBuffers.end()) {
        m_recording.untrackedFreeBytes += int64_t(bytes);
        return;
    }
    const LiveBuffer freedBuffer = it->second;
    m_liveBuffers.erase(it);
    m_live -= freedBuffer.bytes;
    m_recording.freed[size_t(freedBuffer.category)] += freedBuffer.bytes;
    m_recording.events.push_back({currentOp(), freedBuffer.category, -freedBuffer.bytes, m_live, freedBuffer.op});
}

AllocationRecorder::Context AllocationRecorder::begin(
    std::string name, MemoryPhase phase, int layer, MemoryCategory category)
{
    const Context outer = m_context;
    m_recording.ops.push_back({std::move(name), phase, layer, elapsed()});
    m_context = {int(m_recording.ops.size()) - 1, category};
    m_resumePending = false;
    return outer;
}

void AllocationRecorder::end(const Context &outer)
{
    m_context = outer;
    m_resumePending = true; // a new entry only if the outer operation allocates or frees again
}

MemoryScope::MemoryScope(MemoryPhase phase, int layer, std::string_view suffix, MemoryCategory category)
    : m_recorder(AllocationRecorder::current())
{
    if (m_recorder)
        m_outer = m_recorder->begin(
            layer >= 0 ? names::layerTensor(layer, suffix) : std::string(suffix), phase, layer, category);
}

MemoryScope::MemoryScope(MemoryPhase phase, int layer, WholeName name, MemoryCategory category)
    : m_recorder(AllocationRecorder::current())
{
    if (m_recorder)
        m_outer = m_recorder->begin(std::string(name.name), phase, layer, category);
}

MemoryScope::~MemoryScope()
{
    if (m_recorder && AllocationRecorder::current() == m_recorder)
        m_recorder->end(m_outer);
}

void MemoryScope::setCategory(MemoryCategory category)
{
    if (m_recorder)
        m_recorder->m_context.category = category;
}

} // namespace atlas
