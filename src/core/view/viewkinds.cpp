#include "view/viewkinds.h"

namespace atlas {

const std::vector<ViewKind> &viewKinds()
{
    static const std::vector<ViewKind> kinds = {
        {"attention", "Attention", "one head's attention weights as a heat map", "Attention"},
        {"heads", "All heads", "every layer × head at once", "Attention"},
        {"lines", "Token lines", "token-to-token lines of one head or all heads", "Attention"},
        {"mask", "Mask", "scores, mask and probabilities side by side", "Attention"},
        {"scaling", "Why \u221Ad", "the variance of q\u00B7k against d, and softmax with and without 1/\u221Ad",
            "Attention"},
        {"neuron", "Neuron view",
            "one query and one key: q, k and q\u2218k component by component, the score as their sum over \u221Ad",
            "Attention"},
        {"ablation", "Head ablation",
            "switch heads off: the next token, the task's loss and accuracy, and each head's importance", "Attention"},
        {"architecture", "Architecture",
            "the model's operations as a diagram with their shapes; click one to step there", "Inside the model"},
        {"next-token", "Next token", "the next-token distribution", "Inside the model"},
        {"tensor", "Tensor", "any traced tensor", "Inside the model"},
        {"positions", "Positions",
            "the model's positional encoding: what it adds or turns at each position, and how positions relate",
            "Inside the model"},
        {"experts", "Experts",
            "a mixture-of-experts layer's routing: each token's expert, the buffers filling to capacity, the load, "
            "the devices",
            "Inside the model"},
        {"sparse-ffn", "Sparse FFN",
            "a dense feed-forward layer with one neuron kept per block (Sparse is Enough): which neurons each token "
            "uses, and the error",
            "Inside the model"},
        {"objective", "Objectives",
            "a pretraining objective applied to the input: GPT's next token, BERT's masked LM, T5's span corruption, "
            "the prefix LM; what the model reads, what it must predict, and the mask it implies",
            "Pretraining"},
        {"fills", "Masked fills",
            "what a masked language model names at each hidden position: its first choices and the original",
            "Pretraining"},
        {"kernels", "Kernels", "one head under every efficient attention kernel", "Efficient attention"},
        {"lsh", "LSH", "Reformer's LSH buckets, sorted chunks and misses", "Efficient attention"},
        {"approximation", "Low-rank", "Linformer and Performer against exact softmax", "Efficient attention"},
        {"pattern", "Pattern", "the editor of a fixed sparse pattern", "Efficient attention"},
        {"memory-timeline", "Memory timeline",
            "one training step's live memory under plain backprop, checkpointing and reversible blocks", "Memory"},
        {"memory-graph", "Computation graph",
            "the layers as a chain: which are computing, kept, freed or recomputed at each op of the step", "Memory"},
        {"memory-depth", "Peak vs depth",
            "peak activation memory and step time against depth, with the O(L), O(\u221AL) and O(1) curves", "Memory"},
        {"memory-tradeoff", "Checkpoint k",
            "gradient checkpointing every k blocks, k = 1 \u2026 L: peak memory against step time", "Memory"},
        {"inversion-error", "Inversion error",
            "how exactly reversible blocks rebuild their inputs, per block, in float64, float32, float16 and bfloat16",
            "Memory"},
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
