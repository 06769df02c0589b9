#pragma once
// How a run keeps its attention. Whole: every head's scores, masked scores and probabilities as [H, T, T] tensors.
// On demand: the forward runs a tile at a time (ops::tiled_attention_forward) and keeps per layer the scored queries
// and keys, the values and each row's log-sum-exp, "attn.lse" [H, T]; any head's scores or probabilities are recomputed
// from them exactly when a view or a command asks (AttentionReadout). A T × T matrix is then never held for every
// head: 2048 tokens through a Qwen2.5-0.5B-shaped model would need 17 GB of them. Such a run keeps no [T, V] tensor
// either: its program stops at ln_f, and the logits and probabilities of a position are computed from the last
// stream when asked (engine/outputhead.h).
#include "engine/input.h"
#include "model/model.h"
#include "ops/ops.h"
#include "trace/names.h"
#include "trace/trace.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace atlas {

enum class AttentionTrace { Whole, OnDemand };

// Why the self-attention of block `layer` cannot be kept on demand: empty when it can (softmax over scaled scores,
// soft-capped or not, under a causal or padding mask, a sliding window, sinks). The rest (sparse normalisers, position
// biases, efficient kernels, spans, Sinkhorn, a funnel, token retention, two stacks) keep whole matrices.
std::string onDemandObstacle(const ModelConfig &c, const Input &input, int layer);
// The first layer's obstacle, "layer 3: …"; empty when every layer can.
std::string onDemandObstacle(const ModelConfig &c, const Input &input);

// The rule of block `layer`'s self-attention scores (a one-stack model): its scale, soft-cap, mask and sinks.
ops::ScoreRule scoreRule(const Model &m, const std::vector<int> &padding, int layer);

// The trace tensors block `layer`'s readout reads besides attn.lse: its scored queries and keys (after their norms and
// rotation). A trace that keeps only each block's input frees them; a view recomputes them (engine/recompute.h).
std::vector<std::string> readoutInputs(const ModelConfig &c, int layer);
// What a view that sets block `layer`'s attention input beside its heads recomputes: that input (model/blockrecipe.h's
// mixingInput: an FNet block's too), then readoutInputs (none in an FNet block). Nothing for an encoder–decoder, whose
// views of one stack refuse it.
std::vector<std::string> attentionInputAndReadout(const ModelConfig &c, int layer);

// A head's stage mean-pooled for display (ops::attention_pool): per block of its grid, the sum of the cells counted
// and how many they are, [grid.rows(), grid.cols()] row-major.
struct PooledCells
{
    std::vector<float> sums, counts;
    ops::PoolGrid grid;
};

// A layer's attention read back from an on-demand trace: any stage of any head, or a part of one.
class AttentionReadout
{
public:
    // Null when the trace holds no on-demand attention for `layer` (a whole trace, or the layer not run yet).
    static std::unique_ptr<AttentionReadout> find(
        const Model &m, const std::vector<int> &padding, const Trace &trace, int layer);

    int64_t heads() const { return m_q->dim(0); }
    int64_t queries() const { return m_q->dim(1); }
    int64_t keys() const { return m_k->dim(1); }
    // Head h's stage at rows [r0, r1) × keys [c0, c1), in rows of `stride` floats (ops::attention_tile).
    void tile(float *out, int64_t stride, ops::ScoreStage stage, int64_t h, int64_t r0, int64_t r1, int64_t c0,
        int64_t c1) const;
    // Head h's whole stage, [T, S].
    Tensor head(ops::ScoreStage stage, int64_t h) const;
    // Head h's stage pooled over `grid` (ops::attention_pool says which cells count), computed a few dozen rows at a
    // time with no T × S buffer. Stops early, with what it has, when `cancel` is set.
    PooledCells pooled(ops::ScoreStage stage, ops::PoolCells cells, int64_t h, const ops::PoolGrid &grid,
        const std::atomic<bool> *cancel = nullptr) const;

private:
    AttentionReadout(const Tensor &q, const Tensor &k, const Tensor &lse, ops::ScoreRule rule);

    const Tensor *m_q, *m_k, *m_lse;
    ops::ScoreRule m_rule;
};

// A layer's attention as a run keeps it, read the same way whatever that is: its whole [H, T, S] probabilities and
// masked scores, or a readout recomputing them from a layer kept on demand (a one-stack self-attention).
class LayerAttention
{
public:
    // Nothing when the trace holds neither for `layer` at `site` (a layer not run yet, or only its input kept);
    // `model` may be null when only whole tensors are to be read.
    static std::optional<LayerAttention> find(const Model *model, const std::vector<int> &padding, const Trace &trace,
        const names::AttentionSite &site, int layer);

    int64_t heads() const { return m_heads; }
    int64_t queries() const { return m_queries; }
    int64_t keys() const { return m_keys; }
    // The probabilities' trace name ("layer.3.attn.probs"), for messages.
    const std::string &name() const { return m_name; }
    // Whether `stage` (Probs or Masked) can be read: always on demand; when traced in a whole run.
    bool has(ops::ScoreStage stage) const;
    // Head h's `stage` (Probs or Masked) at query rows [r0, r1), every key: in the whole tensor, or computed into
    // `buffer`.
    const float *rows(ops::ScoreStage stage, int64_t h, int64_t r0, int64_t r1, std::vector<float> &buffer) const;

private:
    LayerAttention() = default;

    std::string m_name;
    const Tensor *m_probs = nullptr, *m_masked = nullptr;
    std::shared_ptr<const AttentionReadout> m_readout;
    int64_t m_heads = 0, m_queries = 0, m_keys = 0;
};

} // namespace atlas
