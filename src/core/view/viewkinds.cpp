#include "view/viewkinds.h"

#include "util/error.h"
#include "view/analysisrequests.h"
#include "view/specrun.h"

namespace atlas {

namespace {

// Where `kind` stands in `kinds`; −1 when none describes it. The one place a view's name is looked up.
int indexIn(const std::vector<ViewKind> &kinds, const std::string &kind)
{
    for (size_t i = 0; i < kinds.size(); ++i)
        if (kinds[i].kind == kind)
            return int(i);
    return -1;
}

// The kinds whose descriptors are still written here; a view folder's (src/views/NAME/) describes itself.
std::vector<ViewKind> listedKinds()
{
    using N = ViewNeeds;
    using namespace analysis;
    return {
        {.kind = "attention",
            .title = "Attention",
            .summary = "one head's attention weights as a heat map",
            .group = "Attention",
            .needs = N::LayerProbs,
            .showsSites = true,
            .showsEncoderDecoder = true,
            .drawsDifference = true},
        {.kind = "heads",
            .title = "All heads",
            .summary = "every layer × head at once",
            .group = "Attention",
            .needs = N::FirstLayerProbs,
            .showsSites = true,
            .showsEncoderDecoder = true,
            .everyHead = true},
        {.kind = "lines",
            .title = "Token lines",
            .summary = "token-to-token lines of one head or all heads",
            .group = "Attention",
            .needs = N::LayerProbs,
            .showsSites = true,
            .showsEncoderDecoder = true,
            .everyHead = true},
        {.kind = "mask",
            .title = "Mask",
            .summary = "scores, mask and probabilities side by side",
            .group = "Attention",
            .needs = N::LayerScores,
            .showsSites = true,
            .showsEncoderDecoder = true},
        {.kind = "neuron",
            .title = "Neuron",
            .summary
            = "one query and one key: q, k and q\u2218k component by component, the score as their sum over \u221Ad",
            .group = "Attention",
            .showsSites = true,
            .showsEncoderDecoder = true},
        {.kind = "ablation",
            .title = "Ablation",
            .summary = "switch heads off: the next token, the task's loss and accuracy, and each head's importance",
            .group = "Attention",
            .request = ablationRequest},
        {.kind = "architecture",
            .title = "Architecture",
            .summary = "the model's operations as a diagram with their shapes; click one to step there",
            .group = "Inside the model",
            .showsEncoderDecoder = true},
        {.kind = "next-token",
            .title = "Next token",
            .summary = "the next-token distribution",
            .group = "Inside the model",
            .needs = N::NextProbs,
            .showsEncoderDecoder = true},
        {.kind = "tensor",
            .title = "Tensor",
            .summary = "any traced tensor",
            .group = "Inside the model",
            .needs = N::SpecTensor,
            .showsEncoderDecoder = true},
        {.kind = "objective",
            .title = "Objectives",
            .summary
            = "a pretraining objective applied to the input: GPT's next token, BERT's masked LM, T5's span corruption, "
              "the prefix LM; what the model reads, what it must predict, and the mask it implies",
            .group = "Pretraining",
            .showsEncoderDecoder = true,
            .checkInput = objectiveInputProblem},
        {.kind = "memory-timeline",
            .title = "Memory timeline",
            .summary = "one training step's live memory under plain backprop, checkpointing and reversible blocks",
            .group = "Memory",
            .showsEncoderDecoder = true,
            .request = timelineRequest},
        {.kind = "memory-graph",
            .title = "Computation graph",
            .summary = "the layers as a chain: which are computing, kept, freed or recomputed at each op of the step",
            .group = "Memory",
            .showsEncoderDecoder = true,
            .request = timelineRequest},
        {.kind = "memory-depth",
            .title = "Peak vs depth",
            .summary = "peak activation memory and step time against depth, with the O(L), O(\u221AL) and O(1) curves",
            .group = "Memory",
            .showsEncoderDecoder = true,
            .request = depthRequest},
        {.kind = "memory-tradeoff",
            .title = "Checkpoint k",
            .summary = "gradient checkpointing every k blocks, k = 1 \u2026 L: peak memory against step time",
            .group = "Memory",
            .showsEncoderDecoder = true,
            .request = tradeoffRequest},
        {.kind = "inversion-error",
            .title = "Inversion error",
            .summary = "how exactly reversible blocks rebuild their inputs, per block, in float64, float32, float16 "
                       "and bfloat16",
            .group = "Memory",
            .request = inversionRequest},
    };
}

// Each folder's kind after the kind its `after` names, else after its group's last kind (else last of all).
std::vector<ViewKind> withFolderKinds(std::vector<ViewKind> kinds, std::vector<ViewKind> folders)
{
    const auto place = [&](const ViewKind &k) {
        if (!k.after.empty())
            return kinds.begin() + indexIn(kinds, k.after) + 1;
        auto at = kinds.end();
        for (auto it = kinds.begin(); it != kinds.end(); ++it)
            if (it->group == k.group)
                at = it + 1;
        return at;
    };
    while (!folders.empty()) { // a folder may follow another folder's kind: place those whose anchor is in
        const size_t before = folders.size();
        for (auto it = folders.begin(); it != folders.end();)
            if (it->after.empty() || indexIn(kinds, it->after) >= 0) {
                kinds.insert(place(*it), std::move(*it));
                it = folders.erase(it);
            } else {
                ++it;
            }
        if (folders.size() == before)
            throw Error("the view kind '" + folders.front().kind + "' follows '" + folders.front().after
                + "', which no view describes");
    }
    return kinds;
}

} // namespace

const std::vector<ViewKind> &viewKinds()
{
    static const std::vector<ViewKind> kinds = withFolderKinds(listedKinds(), viewFolderKinds());
    return kinds;
}

int viewKindIndex(const std::string &kind)
{
    return indexIn(viewKinds(), kind);
}

const ViewKind *findViewKind(const std::string &kind)
{
    const int index = viewKindIndex(kind);
    return index < 0 ? nullptr : &viewKinds()[size_t(index)];
}

} // namespace atlas
