#pragma once

#include "tensor/tensor.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

// What a training step really allocates: every tensor buffer goes through AlignedAllocator (tensor/tensor.h),
// which tells the thread's AllocationListener. An AllocationRecorder is that listener; MemoryScopes, placed by
// the training step around each operation, say which operation is running, in which phase, and what its
// allocations are for. The recording is the measured timeline the `memory` command and the memory views show.
namespace atlas {

enum class MemoryPhase { Setup, Forward, Backward, Recompute, Optimizer };
enum class MemoryCategory {
    Parameters,
    Gradients, // of the parameters
    OptimizerState, // AdamW's moments
    StoredActivations, // kept by the forward pass for the backward pass
    RecomputedActivations, // rebuilt during the backward pass (checkpointed segments, reversible inversion)
    Workspace, // transient: intermediates freed soon after, gradients of activations
};
constexpr int kMemoryCategories = 6;
using CategoryBytes = std::array<int64_t, kMemoryCategories>;

const char *phaseName(MemoryPhase phase); // "forward", "backward", "recompute", "optimizer", "setup"
const char *categoryName(MemoryCategory category); // "stored activations" …
const char *categoryKey(MemoryCategory category); // "stored_activations" … (JSON)
// Activation memory: stored, recomputed and workspace (everything that grows with the input, not the model).
bool isActivation(MemoryCategory category);

// One unit of work of the step, in the order it ran: a forward operation, a part of the backward pass, the
// optimizer.
struct MemoryOp
{
    std::string name; // "layer.3.attn.qkv", "layer.3.mlp.down", "adamw"
    MemoryPhase phase = MemoryPhase::Setup;
    int layer = -1; // -1 outside the blocks
    double microseconds = 0; // when it began, from the start of the recording
};

// One allocation (bytes > 0) or free (bytes < 0) of a tensor buffer.
struct MemoryEvent
{
    int op = 0; // index into MemoryRecording::ops
    MemoryCategory category = MemoryCategory::Workspace; // of the buffer (a free keeps its allocation's)
    int64_t bytes = 0;
    int64_t live = 0; // bytes of every category live after this event
    int source = 0; // the op that allocated the buffer (for an allocation, `op`)
};

struct MemoryRecording
{
    std::vector<MemoryOp> ops;
    std::vector<MemoryEvent> events;
    CategoryBytes allocated {}, freed {}; // per category, over the recording (adopted buffers count as allocated)
    int64_t allocatorBytes = 0; // what the allocator handed out while recording (adopted buffers not included)
    int64_t untrackedFreeBytes = 0; // frees of buffers that were live before the recording and not adopted
    double totalMicroseconds = 0;

    // Live bytes of each category after event `event` (before the first event: all zero).
    CategoryBytes liveAt(int event) const;
    int peakEvent(bool activationsOnly) const; // the event after which live bytes were highest; -1 if none
    int64_t peakBytes(bool activationsOnly) const;
};

// Records the allocations of the thread that made it, from construction to finish(). One per thread at a time;
// a listener already installed (a test's independent counter) still hears every allocation.
class AllocationRecorder final : public AllocationListener
{
public:
    AllocationRecorder();
    ~AllocationRecorder() override;
    AllocationRecorder(const AllocationRecorder &) = delete;
    AllocationRecorder &operator=(const AllocationRecorder &) = delete;

    // A buffer live before the recording (the parameters, the optimizer's moments): counted as allocated now, in
    // the current op, so that its free is recognised and the totals include it.
    void adopt(const Tensor &tensor, MemoryCategory category);
    // Stops listening and hands over what was recorded.
    MemoryRecording finish();

    void allocated(const void *buffer, size_t bytes) override;
    void freed(const void *buffer, size_t bytes) override;

    // The recorder listening on this thread, or nullptr.
    static AllocationRecorder *current();

private:
    friend class MemoryScope;
    struct Context
    {
        int op = 0;
        MemoryCategory category = MemoryCategory::Workspace;
    };
    Context begin(std::string name, MemoryPhase phase, int layer, MemoryCategory category);
    void end(const Context &outer);
    struct LiveBuffer
    {
        int64_t bytes = 0;
        MemoryCategory category = MemoryCategory::Workspace;
        int op = 0; // the op that allocated it
    };
    void add(const void *buffer, int64_t bytes, MemoryCategory category);
    int currentOp();
    double elapsed() const;

    MemoryRecording m_recording;
    Context m_context;
    std::unordered_map<const void *, LiveBuffer> m_liveBuffers;
    int64_t m_live = 0;
    AllocationListener *m_previous = nullptr;
    std::chrono::steady_clock::time_point m_start;
    bool m_listening = true;
    bool m_resumePending = false;
};

// While it lives, the allocations of this thread belong to the named operation, phase and category (when an
// AllocationRecorder listens; otherwise it does nothing and costs a thread-local test). Nested scopes resume the
// outer operation when they end.
class MemoryScope
{
public:
    // `suffix` is a trace-name suffix ("attn.qkv") of layer `layer`, or a whole name when layer < 0.
    MemoryScope(MemoryPhase phase, int layer, std::string_view suffix, MemoryCategory category);
    // A whole operation name ("layer.3.attn.qkv") in layer `layer`.
    struct WholeName
    {
        std::string_view name;
    };
    MemoryScope(MemoryPhase phase, int layer, WholeName name, MemoryCategory category);
    ~MemoryScope();
    MemoryScope(const MemoryScope &) = delete;
    MemoryScope &operator=(const MemoryScope &) = delete;

    // Changes the category of what this scope allocates from now on.
    void setCategory(MemoryCategory category);

private:
    AllocationRecorder *m_recorder;
    AllocationRecorder::Context m_outer;
};

} // namespace atlas
