#pragma once

#include "model/model.h"
#include "train/evaluation.h"
#include "util/workbudget.h"
#include "view/viewanalysis.h"

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

// What the analysis requests (view/viewanalysis.cpp, view/memoryrequests.cpp) share: keys, inputs, timing.
namespace atlas::analysis {

using Clock = std::chrono::steady_clock;

inline double millisecondsSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// "@<address><shape>": a traced tensor's identity; the request pins the tensor so the address stays its own.
inline std::string identity(const Tensor &t)
{
    std::string id = "@"; // appended piece by piece: GCC 12 misreads "@" + std::to_string(…) (-Wstringop-overflow)
    return id.append(std::to_string(reinterpret_cast<uintptr_t>(t.storage()))).append(t.shapeString());
}

// A model's identity in a request key: its weights (by the embedding's address; the request pins model.wte) and
// what a spec changes without new weights (Model::withPositions and withRouting share the weight tensors).
inline std::string modelIdentity(const Model &model)
{
    return identity(model.wte) + "/" + positionKindName(model.config.positions) + "/cf"
        + std::to_string(model.config.capacityFactor) + "/k" + std::to_string(model.config.expertTopK);
}

// A new result of type R filled by `fill`, with the time it took.
template <typename R, typename Fill> std::shared_ptr<const ViewAnalysis> timedResult(Fill fill)
{
    const auto start = Clock::now();
    auto result = std::make_shared<R>();
    fill(*result);
    result->milliseconds = millisecondsSince(start);
    return result;
}

inline std::string paddingKey(const std::vector<int> &padding)
{
    std::string key = "pad";
    for (int p : padding) // appended piece by piece: GCC 12 misreads "," + std::to_string(p) (-Wstringop-overflow)
        key.append(",").append(std::to_string(p));
    return key;
}

// The input an analysis reruns the model on: the context's token ids and padding, and an encoder–decoder's source.
inline Input inputOf(const AnalysisContext &c)
{
    Input input;
    input.tokens = c.tokenIds;
    input.padding = c.padding;
    input.source = c.sourceIds;
    input.sourcePadding = c.sourcePadding;
    return input;
}

// What a rerun of the input depends on: its padding and every token id, the source's too.
inline std::string inputKey(const AnalysisContext &c)
{
    std::string key = paddingKey(c.padding) + "/tokens";
    for (int t : c.tokenIds)
        key.append(",").append(std::to_string(t));
    if (!c.sourceIds.empty()) {
        key += "/source" + paddingKey(c.sourcePadding);
        for (int t : c.sourceIds)
            key.append(",").append(std::to_string(t));
    }
    return key;
}

// What a result computed from a model's weights alone is keyed by: every parameter's values and what a spec changes
// without new weights. Two loads of one checkpoint share it (the session loads a model again when a lesson step
// changes models).
std::string weightsFingerprint(const Model &model);

// The last few results of a costly analysis that does not depend on the input (a table of held-out scorings), shared
// by every request that needs one, so that a spec edited in place does not pay for it again.
template <typename T> class ResultCache
{
public:
    std::shared_ptr<const T> find(const std::string &key)
    {
        std::lock_guard lock(m_mutex);
        for (const auto &[k, value] : m_entries)
            if (k == key)
                return value;
        return nullptr;
    }

    void add(const std::string &key, std::shared_ptr<const T> value)
    {
        std::lock_guard lock(m_mutex);
        if (m_entries.size() >= 4)
            m_entries.erase(m_entries.begin());
        m_entries.emplace_back(key, std::move(value));
    }

    // The value under `key`, or `make()`'s, kept for next time; null, and nothing kept, when `make` returns null (a
    // cancelled computation).
    template <typename Make> std::shared_ptr<const T> findOrMake(const std::string &key, Make make)
    {
        std::shared_ptr<const T> value = find(key);
        if (!value && (value = make()))
            add(key, value);
        return value;
    }

private:
    std::mutex m_mutex;
    std::vector<std::pair<std::string, std::shared_ptr<const T>>> m_entries;
};

inline AnalysisRequest problem(std::string text)
{
    AnalysisRequest r;
    r.key = "problem";
    r.problem = std::move(text);
    return r;
}

// The request of work over the context's budget (util/workbudget.h), or none when it fits: the app offers to run it
// anyway.
inline std::optional<AnalysisRequest> overBudgetRequest(
    const AnalysisContext &c, const std::string &what, double flops, double bytes)
{
    std::string text = overBudget(what, flops, bytes, c.budget);
    if (text.empty())
        return std::nullopt;
    AnalysisRequest r = problem(std::move(text));
    r.overBudget = true;
    return r;
}

// Layer `layer`'s [H,T,d] Q, K, V for head `head`, or the problem that stops an analysis reading them (the queries
// and keys the scores use: RoPE's rotated ones when the model has them). An analysis that reruns the head as
// softmax(QKᵀ/√d) over its keys is refused where the model computes something else (Gemma's scale and soft-cap,
// gpt-oss's sinks), and, unless it says so itself (`windows` Shown), where a sliding window shorter than the text
// masks the layer.
struct HeadQkv
{
    std::string problem;
    Tensor q, k, v; // the layer's whole [H,T,d] tensors (shared with the trace)
};
enum class SlidingWindows { Refused, Shown };
HeadQkv headQkv(const AnalysisContext &c, int layer, int head, SlidingWindows windows = SlidingWindows::Refused);

// A head's (T,d) copy: the job must not read the trace's tensors after they are released.
inline Tensor headCopy(const Tensor &t, int head)
{
    Tensor out({t.dim(1), t.dim(2)});
    out.matrix() = t.slice(head);
    return out;
}

// What an analysis of one head's Q, K, V computes, given the head's (T,d) copies.
template <class Result>
using HeadWork
    = std::function<void(Result &, const Tensor &q, const Tensor &k, const Tensor &v, const std::atomic<bool> &)>;

// A request for an analysis of (layer, head)'s Q, K, V: keyed by `what`, the tensors' identity, the mask (the layer
// and head are keys the view's analysis reads); it pins the layer's tensors and hands the job copies of the head's.
// Result has `layer` and `head`.
template <class Result>
AnalysisRequest headRequest(
    const std::string &what, const HeadQkv &qkv, int layer, int head, const AnalysisContext &c, HeadWork<Result> work)
{
    AnalysisRequest r;
    r.key = what + identity(qkv.q) + identity(qkv.k) + identity(qkv.v) + (c.causal ? "/causal/" : "/")
        + paddingKey(c.padding);
    r.pinned = {qkv.q, qkv.k, qkv.v};
    r.run = [q = headCopy(qkv.q, head), k = headCopy(qkv.k, head), v = headCopy(qkv.v, head), layer, head,
                work = std::move(work)](const std::atomic<bool> &cancel) {
        const auto start = Clock::now();
        auto result = std::make_shared<Result>();
        result->layer = layer;
        result->head = head;
        work(*result, q, k, v, cancel);
        result->milliseconds = millisecondsSince(start);
        return std::shared_ptr<const ViewAnalysis>(result);
    };
    return r;
}

// The held-out scores of `model` and of `baseline` (a model's name or directory; empty: none), each computed once per
// weights and example count; a model without a task is left out. False when `cancel` turned true.
bool scoreWithBaseline(std::shared_ptr<const Model> model, const std::string &baseline, int examples,
    const std::atomic<bool> &cancel, std::vector<HeldOutScore> &out);

// A request keyed by every residual stream traced so far (and pinning them and the embedding): stepping within a
// block or switching views reruns nothing.
AnalysisRequest streamsRequest(std::string key, const AnalysisContext &c);

// The spec's target (or contrast) `key`, `target`, as a token id of `tokenizer`; −1 for "".
int targetId(const std::string &key, const std::string &target, const Tokenizer &tokenizer, int vocab);

// Where to step for the first layer whose attention weights are not traced yet; empty when every layer's are.
std::string untracedWeightsText(const AnalysisContext &c);

// A request keyed by, and pinning, every layer's traced `parts` (and the embedding): the analysis of the whole pass.
AnalysisRequest everyLayerRequest(
    const std::string &kind, const AnalysisContext &c, std::initializer_list<const char *> parts);

// Block `layer`'s attention input as the trace holds it (model/blockrecipe.h's mixingInput), for a view that sets
// it beside the block's heads: nullptr when the trace lacks it or the block's probabilities cannot be read (an FNet
// block's Fourier mixing, which has none), `why` then naming what is not computed. A one-stack model.
const TraceEntry *tracedAttentionInput(const AnalysisContext &c, int layer, std::string &why);

} // namespace atlas::analysis
