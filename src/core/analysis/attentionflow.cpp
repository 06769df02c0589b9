#include "analysis/attentionflow.h"

#include "engine/attentiontrace.h"
#include "util/error.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>

namespace atlas {

HeadFusion headFusionFromName(const std::string &name)
{
    if (name == "mean")
        return HeadFusion::Mean;
    if (name == "max")
        return HeadFusion::Max;
    if (name == "min")
        return HeadFusion::Min;
    throw Error("head fusion \"" + name + "\": use mean, max or min");
}

const char *headFusionName(HeadFusion fusion)
{
    switch (fusion) {
    case HeadFusion::Mean:
        return "mean";
    case HeadFusion::Max:
        return "max";
    case HeadFusion::Min:
        return "min";
    }
    return "mean";
}

std::vector<Eigen::MatrixXd> combinedAttention(const Trace &trace, const names::AttentionSite &site, int layers,
    HeadFusion fusion, const Model *model, const std::vector<int> &padding)
{
    std::vector<Eigen::MatrixXd> out;
    using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    std::vector<float> buffer;
    for (int l = 0; l < layers; ++l) {
        // A layer kept on demand: each head's probabilities recomputed from its queries, keys and log-sum-exp.
        const std::optional<LayerAttention> attention = LayerAttention::find(model, padding, trace, site, l);
        if (!attention)
            break;
        const int64_t H = attention->heads(), T = attention->queries();
        if (attention->keys() != T)
            throw Error(attention->name() + ": rollout needs a square attention (queries and keys of one sequence)");
        Eigen::MatrixXd combined = Eigen::MatrixXd::Zero(T, T);
        for (int64_t h = 0; h < H; ++h) {
            const float *a = attention->rows(ops::ScoreStage::Probs, h, 0, T, buffer);
            const Eigen::MatrixXd head = Eigen::Map<const RowMajor>(a, T, T).cast<double>();
            if (h == 0 || fusion == HeadFusion::Mean)
                combined = h == 0 ? head : Eigen::MatrixXd(combined + head);
            else if (fusion == HeadFusion::Max)
                combined = combined.cwiseMax(head);
            else
                combined = combined.cwiseMin(head);
        }
        if (fusion == HeadFusion::Mean)
            combined /= double(H);
        else // rows back to sums of 1, as the mean's are (a row with nothing allowed stays 0)
            for (int64_t i = 0; i < T; ++i)
                if (const double s = combined.row(i).sum(); s > 0)
                    combined.row(i) /= s;
        out.push_back(std::move(combined));
    }
    if (out.empty())
        throw Error(names::attentionTensor(site, 0, "probs")
            + ": no layer's attention is held (a run keeping only each block's input needs its queries and keys "
              "recomputed first)");
    return out;
}

Eigen::MatrixXd withResidual(const Eigen::MatrixXd &combined)
{
    const Eigen::MatrixXd a = combined + Eigen::MatrixXd::Identity(combined.rows(), combined.cols());
    const Eigen::VectorXd sums = a.rowwise().sum();
    return sums.asDiagonal().inverse() * a;
}

std::vector<Eigen::MatrixXd> augmentedAttention(
    const Trace &trace, const names::AttentionSite &site, int layers, HeadFusion fusion)
{
    std::vector<Eigen::MatrixXd> out;
    for (const Eigen::MatrixXd &combined : combinedAttention(trace, site, layers, fusion))
        out.push_back(withResidual(combined));
    return out;
}

std::vector<Eigen::MatrixXd> attentionRollout(const std::vector<Eigen::MatrixXd> &augmented)
{
    std::vector<Eigen::MatrixXd> rollout;
    for (const Eigen::MatrixXd &a : augmented)
        rollout.push_back(rollout.empty() ? a : Eigen::MatrixXd(a * rollout.back()));
    return rollout;
}

std::string attentionFlowProblem(int layers, int tokens)
{
    const long edges = long(layers) * long(tokens) * long(tokens);
    if (tokens > kMaxFlowTokens || edges > kMaxFlowEdges)
        return "attention flow runs an exact maximum flow for up to " + std::to_string(kMaxFlowTokens) + " tokens and "
            + std::to_string(kMaxFlowEdges) + " edges (layers × tokens²); this input has " + std::to_string(tokens)
            + " tokens and " + std::to_string(edges) + " edges";
    return {};
}

namespace {

// Dinic's maximum flow on the layer graph, capacities in double: BFS levels, then blocking flows by DFS.
class MaxFlow
{
public:
    explicit MaxFlow(int nodes)
        : m_adjacent(size_t(nodes))
        , m_level(size_t(nodes))
        , m_next(size_t(nodes))
    {
    }

    void addEdge(int from, int to, double capacity)
    {
        m_adjacent[size_t(from)].push_back(int(m_edges.size()));
        m_edges.push_back({to, capacity});
        m_adjacent[size_t(to)].push_back(int(m_edges.size()));
        m_edges.push_back({from, 0.0});
    }

    double run(int source, int sink)
    {
        for (Edge &e : m_edges) // every edge back to its capacity (the graph is reused for each sink)
            e.flow = 0;
        double total = 0;
        while (levels(source, sink)) {
            std::fill(m_next.begin(), m_next.end(), 0);
            while (const double pushed = push(source, sink, std::numeric_limits<double>::infinity()))
                total += pushed;
        }
        return total;
    }

private:
    static constexpr double kEpsilon = 1e-15;
    struct Edge
    {
        int to;
        double capacity;
        double flow = 0;
    };

    bool levels(int source, int sink)
    {
        std::fill(m_level.begin(), m_level.end(), -1);
        std::queue<int> queue;
        queue.push(source);
        m_level[size_t(source)] = 0;
        while (!queue.empty()) {
            const int v = queue.front();
            queue.pop();
            for (int id : m_adjacent[size_t(v)]) {
                const Edge &e = m_edges[size_t(id)];
                if (m_level[size_t(e.to)] < 0 && e.capacity - e.flow > kEpsilon) {
                    m_level[size_t(e.to)] = m_level[size_t(v)] + 1;
                    queue.push(e.to);
                }
            }
        }
        return m_level[size_t(sink)] >= 0;
    }

    double push(int v, int sink, double limit)
    {
        if (v == sink)
            return limit;
        for (int &i = m_next[size_t(v)]; i < int(m_adjacent[size_t(v)].size()); ++i) {
            const int id = m_adjacent[size_t(v)][size_t(i)];
            Edge &e = m_edges[size_t(id)];
            if (m_level[size_t(e.to)] != m_level[size_t(v)] + 1 || e.capacity - e.flow <= kEpsilon)
                continue;
            if (const double pushed = push(e.to, sink, std::min(limit, e.capacity - e.flow)); pushed > kEpsilon) {
                e.flow += pushed;
                m_edges[size_t(id ^ 1)].flow -= pushed;
                return pushed;
            }
        }
        return 0;
    }

    std::vector<Edge> m_edges; // an edge and its reverse at ids 2k and 2k + 1
    std::vector<std::vector<int>> m_adjacent;
    std::vector<int> m_level, m_next;
};

} // namespace

AttentionFlow attentionFlow(const std::vector<Eigen::MatrixXd> &augmented, int output, const std::atomic<bool> *cancel)
{
    if (augmented.empty())
        throw Error("attention flow: no layer's attention is traced");
    const int L = int(augmented.size()), T = int(augmented.front().rows());
    if (const std::string why = attentionFlowProblem(L, T); !why.empty())
        throw Error(why);
    if (output < 0 || output >= T)
        throw Error("attention flow: position " + std::to_string(output) + " is not in 0 … " + std::to_string(T - 1));
    // Node (l, p) = l · T + p, for the input tokens (l = 0) and each layer's positions; edges point down the layers.
    MaxFlow graph((L + 1) * T);
    for (int l = 1; l <= L; ++l)
        for (int p = 0; p < T; ++p)
            for (int q = 0; q < T; ++q)
                if (const double c = augmented[size_t(l - 1)](p, q); c > 0)
                    graph.addEdge(l * T + p, (l - 1) * T + q, c);
    AttentionFlow flow;
    flow.raw.assign(size_t(T), 0.0);
    for (int j = 0; j < T; ++j) {
        if (cancel && cancel->load())
            throw Error("attention flow: cancelled");
        flow.raw[size_t(j)] = graph.run(L * T + output, j);
    }
    double sum = 0;
    for (double v : flow.raw)
        sum += v;
    flow.normalised = flow.raw;
    if (sum > 0)
        for (double &v : flow.normalised)
            v /= sum;
    return flow;
}

} // namespace atlas
