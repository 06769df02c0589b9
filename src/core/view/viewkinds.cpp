#include "view/viewkinds.h"

namespace atlas {

const std::vector<ViewKind> &viewKinds()
{
    static const std::vector<ViewKind> kinds = {
        {"attention", "Attention", "one head's attention weights as a heat map"},
        {"heads", "All heads", "every layer × head at once"},
        {"lines", "Token lines", "token-to-token lines of one head or all heads"},
        {"mask", "Mask", "scores, mask and probabilities side by side"},
        {"next-token", "Next token", "the next-token distribution"},
        {"tensor", "Tensor", "any traced tensor"},
        {"kernels", "Kernels", "one head under every efficient attention kernel"},
        {"lsh", "LSH", "Reformer's LSH buckets, sorted chunks and misses"},
        {"approximation", "Low-rank", "Linformer and Performer against exact softmax"},
        {"pattern", "Pattern", "the editor of a fixed sparse pattern"},
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
