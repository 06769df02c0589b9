#include "view/analysisrequests.h"

#include "util/error.h"
#include "view/analysishelpers.h"

#include <mutex>

namespace atlas {

namespace {

using namespace atlas::analysis;

// The importance table takes L·H + 1 scorings of the task; a head toggled on and off must not pay for it again.
// Entries hold their model, so the weights' address in the key cannot be reused by another model.
class ImportanceCache
{
public:
    std::shared_ptr<const HeadImportance> find(const std::string &key)
    {
        std::lock_guard lock(m_mutex);
        for (const Entry &e : m_entries)
            if (e.key == key)
                return e.importance;
        return nullptr;
    }

    void add(const std::string &key, std::shared_ptr<const Model> model, std::shared_ptr<const HeadImportance> value)
    {
        std::lock_guard lock(m_mutex);
        if (m_entries.size() >= 4)
            m_entries.erase(m_entries.begin());
        m_entries.push_back({key, std::move(model), std::move(value)});
    }

private:
    struct Entry
    {
        std::string key;
        std::shared_ptr<const Model> model;
        std::shared_ptr<const HeadImportance> importance;
    };
    std::mutex m_mutex;
    std::vector<Entry> m_entries;
};

ImportanceCache &importanceCache()
{
    static ImportanceCache cache;
    return cache;
}

} // namespace

AnalysisRequest analysis::ablationRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    const int T = int(c.tokenIds.size());
    if (T > HeadAblationAnalysis::kMaxTokens)
        return problem("The Head ablation view reruns up to " + std::to_string(HeadAblationAnalysis::kMaxTokens)
            + " tokens; the input has " + std::to_string(T) + ".");
    const int position = spec.position < 0 ? T - 1 : spec.position;
    if (position >= T)
        return problem("position " + std::to_string(spec.position) + " is past the input's last token ("
            + std::to_string(T - 1) + ").");
    std::vector<HeadRef> heads;
    try {
        heads = parseHeadList(spec.ablateHeads, c.model->config.layers, c.model->config.heads, "ablate_heads");
    } catch (const Error &e) {
        return problem(e.what());
    }
    const HeadAblation::Mode mode = parseAblationMode(spec.ablation, "ablation");
    AnalysisRequest r;
    const std::string modelKey = "ablation/" + modelIdentity(*c.model) + "/" + spec.ablation;
    r.key = modelKey + "/" + headListText(heads) + "/at" + std::to_string(position) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    r.run = [model = c.model, input = inputOf(c), heads, mode, position, modelKey, text = spec.ablation](
                const std::atomic<bool> &cancel) -> std::shared_ptr<const ViewAnalysis> {
        return timedResult<HeadAblationAnalysis>([&](HeadAblationAnalysis &result) {
            result.model = model->name;
            result.heads = heads;
            result.mode = text;
            result.position = position;
            if (!model->config.task.empty()) {
                result.importance = importanceCache().find(modelKey);
                if (!result.importance) {
                    auto importance = std::make_shared<const HeadImportance>(headImportance(
                        model, mode, HeadAblationAnalysis::kExamples, [&](int, int) { return !cancel.load(); }));
                    if (importance->without.empty())
                        return; // cancelled: the session drops the result
                    importanceCache().add(modelKey, model, importance);
                    result.importance = importance;
                }
            }
            const HeadAblation ablation
                = makeHeadAblation(model, heads, mode, ablationReferences(*model, input.tokens));
            // The whole model's scores are the importance table's baseline (same examples): not measured again.
            result.comparison = compareAblation(model, input, position, ablation, HeadAblationAnalysis::kExamples,
                result.importance ? &result.importance->baseline : nullptr);
        });
    };
    return r;
}

} // namespace atlas
