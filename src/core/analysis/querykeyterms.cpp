#include "analysis/querykeyterms.h"

#include "trace/names.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace atlas {

namespace {

// A [H, T, d] or [H, T, T] tensor of the trace, or nullptr with *problem saying why.
const Tensor *headTensor(const Trace &trace, const std::string &name, std::string *problem)
{
    if (!trace.contains(name)) {
        *problem = "Not computed yet: " + name + " (step further, or the layer ran an efficient kernel)";
        return nullptr;
    }
    const Tensor &t = trace.tensor(name);
    if (t.rank() != 3) {
        *problem = name + " has shape " + t.shapeString() + ", expected 3 dimensions";
        return nullptr;
    }
    return &t;
}

} // namespace

QueryKeyTerms queryKeyTerms(const Trace &trace, int layer, int head, int query, int key, std::string *problem,
    const names::AttentionSite &site, bool scaledScores, double divisor)
{
    problem->clear();
    QueryKeyTerms out;
    out.layer = layer;
    out.head = head;
    const auto name = [&](std::string_view what) { return names::attentionTensor(site, layer, what); };
    out.rotated = trace.contains(name("q_rot"));
    const Tensor *q = headTensor(trace, name(out.rotated ? "q_rot" : "q"), problem);
    const Tensor *k = q ? headTensor(trace, name(out.rotated ? "k_rot" : "k"), problem) : nullptr;
    const Tensor *scores = k ? headTensor(trace, name("scores"), problem) : nullptr;
    const Tensor *masked = scores ? headTensor(trace, name("masked"), problem) : nullptr;
    const Tensor *probs = masked ? headTensor(trace, name("probs"), problem) : nullptr;
    if (!probs)
        return out;
    const int H = int(q->dim(0)), T = int(q->dim(1)), S = int(k->dim(1)), d = int(q->dim(2));
    if (head < 0 || head >= H) {
        *problem = "Layer " + std::to_string(layer) + " has " + std::to_string(H) + " heads: there is no head "
            + std::to_string(head);
        return out;
    }
    if (query < 0 || query >= T || key < -1 || key >= S) {
        *problem = (S == T ? "The input has " + countOf(size_t(T), "token")
                           : "The decoder has " + countOf(size_t(T), "token") + " and the source " + std::to_string(S))
            + ": query " + std::to_string(query) + ", key " + std::to_string(key) + " do not exist";
        return out;
    }
    const ConstMatrixMap w = probs->slice(head);
    if (key < 0) {
        key = 0;
        for (int j = 1; j < S; ++j)
            key = w(query, j) > w(query, key) ? j : key;
    }
    out.query = query;
    out.key = key;
    out.dim = d;
    const ConstMatrixMap qs = q->slice(head), ks = k->slice(head);
    for (int c = 0; c < d; ++c) {
        out.q.push_back(qs(query, c));
        out.k.push_back(ks(key, c));
        out.product.push_back(qs(query, c) * ks(key, c));
        out.dot += double(qs(query, c)) * double(ks(key, c));
    }
    out.unscaled = !scaledScores;
    out.divisor = !scaledScores ? 1.0 : divisor > 0 ? divisor : double(d);
    out.scaled = out.dot / std::sqrt(out.divisor);
    out.score = scores->slice(head)(query, key);
    if (const TraceEntry *capped = trace.find(name("capped"))) { // Gemma 2's soft-cap, between scores and mask
        out.capped = true;
        out.cappedScore = capped->tensor.slice(head)(query, key);
    }
    out.bias = out.score - out.scaled;
    out.masked = std::isinf(masked->slice(head)(query, key));
    out.weight = w(query, key);
    out.largestTerms.resize(size_t(d));
    std::iota(out.largestTerms.begin(), out.largestTerms.end(), 0);
    std::stable_sort(out.largestTerms.begin(), out.largestTerms.end(),
        [&](int a, int b) { return std::abs(out.product[size_t(a)]) > std::abs(out.product[size_t(b)]); });
    return out;
}

} // namespace atlas
