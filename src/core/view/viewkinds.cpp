#include "view/viewkinds.h"

#include "view/analysisrequests.h"
#include "view/specrun.h"

namespace atlas {

const std::vector<ViewKind> &viewKinds()
{
    using N = ViewNeeds;
    using namespace analysis;
    static const std::vector<ViewKind> kinds = {
        {.kind = "attention",
            .title = "Attention",
            .summary = "one head's attention weights as a heat map",
            .group = "Attention",
            .needs = N::LayerProbs,
            .showsSites = true,
            .showsEncoderDecoder = true},
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
        {.kind = "scaling",
            .title = "Why \u221Ad",
            .summary = "the variance of q\u00B7k against d, and softmax with and without 1/\u221Ad",
            .group = "Attention",
            .request = scalingRequest},
        {.kind = "neuron",
            .title = "Neuron view",
            .summary
            = "one query and one key: q, k and q\u2218k component by component, the score as their sum over \u221Ad",
            .group = "Attention",
            .showsSites = true,
            .showsEncoderDecoder = true},
        {.kind = "ablation",
            .title = "Head ablation",
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
        {.kind = "positions",
            .title = "Positions",
            .summary
            = "the model's positional encoding: what it adds or turns at each position, and how positions relate",
            .group = "Inside the model",
            .request = positionsRequest},
        {.kind = "experts",
            .title = "Experts",
            .summary
            = "a mixture-of-experts layer's routing: each token's expert, the buffers filling to capacity, the load, "
              "the devices",
            .group = "Inside the model",
            .request = expertsRequest},
        {.kind = "sparse-ffn",
            .title = "Sparse FFN",
            .summary
            = "a dense feed-forward layer with one neuron kept per block (Sparse is Enough): which neurons each token "
              "uses, and the error",
            .group = "Inside the model",
            .request = sparseFfnRequest},
        {.kind = "objective",
            .title = "Objectives",
            .summary
            = "a pretraining objective applied to the input: GPT's next token, BERT's masked LM, T5's span corruption, "
              "the prefix LM; what the model reads, what it must predict, and the mask it implies",
            .group = "Pretraining",
            .showsEncoderDecoder = true,
            .checkInput = objectiveInputProblem},
        {.kind = "fills",
            .title = "Masked fills",
            .summary = "what a masked language model names at each hidden position: its first choices and the original",
            .group = "Pretraining",
            .request = fillsRequest,
            .checkInput = fillsInputProblem},
        {.kind = "kernels",
            .title = "Kernels",
            .summary = "one head under every efficient attention kernel",
            .group = "Efficient attention",
            .needs = N::LayerProbs,
            .request = kernelsRequest},
        {.kind = "lsh",
            .title = "LSH",
            .summary = "Reformer's LSH buckets, sorted chunks and misses",
            .group = "Efficient attention",
            .needs = N::LayerProbs,
            .request = lshRequest},
        {.kind = "approximation",
            .title = "Low-rank",
            .summary = "Linformer and Performer against exact softmax",
            .group = "Efficient attention",
            .needs = N::LayerProbs,
            .request = approximationRequest},
        {.kind = "pattern",
            .title = "Pattern",
            .summary = "the editor of a fixed sparse pattern",
            .group = "Efficient attention",
            .request = patternRequest},
        {.kind = "memory-timeline",
            .title = "Memory timeline",
            .summary = "one training step's live memory under plain backprop, checkpointing and reversible blocks",
            .group = "Memory",
            .request = timelineRequest},
        {.kind = "memory-graph",
            .title = "Computation graph",
            .summary = "the layers as a chain: which are computing, kept, freed or recomputed at each op of the step",
            .group = "Memory",
            .request = timelineRequest},
        {.kind = "memory-depth",
            .title = "Peak vs depth",
            .summary = "peak activation memory and step time against depth, with the O(L), O(\u221AL) and O(1) curves",
            .group = "Memory",
            .request = depthRequest},
        {.kind = "memory-tradeoff",
            .title = "Checkpoint k",
            .summary = "gradient checkpointing every k blocks, k = 1 \u2026 L: peak memory against step time",
            .group = "Memory",
            .request = tradeoffRequest},
        {.kind = "inversion-error",
            .title = "Inversion error",
            .summary = "how exactly reversible blocks rebuild their inputs, per block, in float64, float32, float16 "
                       "and bfloat16",
            .group = "Memory",
            .request = inversionRequest},
    };
    return kinds;
}

const ViewKind *findViewKind(const std::string &kind)
{
    for (const ViewKind &k : viewKinds())
        if (k.kind == kind)
            return &k;
    return nullptr;
}

} // namespace atlas
