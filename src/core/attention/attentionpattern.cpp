#include "attention/attentionpattern.h"

#include "attention/blockattention.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/text.h"

#include <algorithm>
#include <climits>

namespace atlas::attention {

namespace {

using Run = std::pair<int, int>; // keys [first, second) of one query

// Each query's allowed keys as runs of consecutive positions, and the work of every block.
class PatternRecorder final : public PatternVisitor
{
public:
    explicit PatternRecorder(int64_t T)
        : m_rows(size_t(T))
    {
    }

    void visitBlock(
        const std::vector<int> &queries, const std::vector<int> &keys, const std::vector<KeyRule> &rules) override
    {
        const size_t nk = keys.size();
        m_computed += int64_t(queries.size()) * int64_t(nk);
        for (size_t a = 0; a < queries.size(); ++a) {
            std::vector<Run> &row = m_rows[size_t(queries[a])];
            const KeyRule *rule = rules.data() + a * nk;
            for (size_t c = 0; c < nk; ++c) {
                if (rule[c] == KeyRule::Masked)
                    continue;
                if (!row.empty() && row.back().second == keys[c])
                    ++row.back().second;
                else
                    row.push_back({keys[c], keys[c] + 1});
            }
        }
    }

    int64_t computed() const { return m_computed; }
    std::vector<std::vector<Run>> &rows() { return m_rows; }

private:
    std::vector<std::vector<Run>> m_rows; // (T)
    int64_t m_computed = 0;
};

// Sorts a query's runs and merges those that overlap or touch, so that no pair counts twice.
void mergeRuns(std::vector<Run> &runs)
{
    std::sort(runs.begin(), runs.end());
    size_t out = 0;
    for (size_t r = 0; r < runs.size(); ++r) {
        if (out > 0 && runs[r].first <= runs[out - 1].second)
            runs[out - 1].second = std::max(runs[out - 1].second, runs[r].second);
        else
            runs[out++] = runs[r];
    }
    runs.resize(out);
}

// Fills the grid of s (cells and cellEdges set) from every query's runs, one grid row per task.
void fillGrid(PatternSummary &s, std::vector<std::vector<Run>> &rows)
{
    const int g = s.cells;
    std::vector<int> cellOf(size_t(s.length));
    for (int c = 0; c < g; ++c)
        std::fill(cellOf.begin() + s.cellEdges[size_t(c)], cellOf.begin() + s.cellEdges[size_t(c) + 1], c);
    s.cellAllowed.assign(size_t(g) * size_t(g), 0);
    parallelFor(g, 1, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            int64_t *cells = s.cellAllowed.data() + r * g;
            for (int64_t i = s.cellEdges[size_t(r)]; i < s.cellEdges[size_t(r) + 1]; ++i) {
                mergeRuns(rows[size_t(i)]);
                for (const auto &[first, last] : rows[size_t(i)])
                    for (int c = cellOf[size_t(first)]; c <= cellOf[size_t(last - 1)]; ++c)
                        cells[c] += std::min<int64_t>(last, s.cellEdges[size_t(c) + 1])
                            - std::max<int64_t>(first, s.cellEdges[size_t(c)]);
            }
        }
    });
    s.density.resize(s.cellAllowed.size());
    for (int r = 0; r < g; ++r)
        for (int c = 0; c < g; ++c) {
            const size_t k = size_t(r) * size_t(g) + size_t(c);
            const int64_t area = (s.cellEdges[size_t(r) + 1] - s.cellEdges[size_t(r)])
                * (s.cellEdges[size_t(c) + 1] - s.cellEdges[size_t(c)]);
            s.allowedPairs += s.cellAllowed[k];
            s.density[k] = float(double(s.cellAllowed[k]) / double(area));
        }
}

// "{0}", "{0, 1}", "{0 … 3}": the first n blocks.
std::string firstBlocks(int n)
{
    if (n == 1)
        return "{0}";
    return n == 2 ? "{0, 1}" : "{0 … " + std::to_string(n - 1) + "}";
}

} // namespace

std::string bigBirdRule(const BigBirdParams &p)
{
    const std::string half = std::to_string((p.windowBlocks - 1) / 2);
    std::vector<std::string> parts;
    if (p.globalBlocks > 0)
        parts.push_back(firstBlocks(p.globalBlocks));
    if (p.windowBlocks > 0)
        parts.push_back(p.windowBlocks == 1 ? "{a}" : "{b : |a − b| ≤ " + half + "}");
    if (p.randomBlocks > 0)
        parts.push_back(std::to_string(p.randomBlocks) + " random");
    std::string keys = parts.empty() ? "no blocks" : parts.front();
    for (size_t i = 1; i < parts.size(); ++i)
        keys += " ∪  " + parts[i];
    std::string out = "block a = ⌊i/" + std::to_string(p.block) + "⌋  attends key blocks  " + keys;
    if (p.globalBlocks > 0)
        out += ";  blocks " + firstBlocks(p.globalBlocks) + " attend every key";
    return out;
}

std::string longformerRule(const LongformerParams &p, bool causal)
{
    const std::string w = std::to_string(causal ? p.window : p.window / 2);
    std::string window;
    if (p.dilation == 1)
        window = causal ? "i − " + w + " ≤ j ≤ i" : "|i − j| ≤ " + w;
    else
        window = "j = i + " + std::to_string(p.dilation) + "m with " + (causal ? "−" + w + " ≤ m ≤ 0" : "|m| ≤ " + w);
    if (p.global.empty())
        return window;
    return "j ∈ G  or  i ∈ G  or  " + window + "   (G = {" + shownNumbers(p.global, ", ", 6) + "})";
}

std::string fixedRule(const FixedParams &p)
{
    const std::string l = std::to_string(p.stride);
    const std::string block = "⌊j/" + l + "⌋ = ⌊i/" + l + "⌋";
    if (p.summary == 0)
        return block;
    const std::string last = std::to_string(p.stride - p.summary);
    return block + "  or  j mod " + l + (p.summary == 1 ? " = " : " ≥ ") + last;
}

int PatternSummary::cellOf(int64_t t) const
{
    return int(std::upper_bound(cellEdges.begin(), cellEdges.end(), t) - cellEdges.begin()) - 1;
}

bool PatternSummary::allowed(int64_t i, int64_t j) const
{
    return cellAllowed[size_t(cellOf(i)) * size_t(cells) + size_t(cellOf(j))] > 0;
}

bool hasFixedPattern(const std::string &kind)
{
    const auto &kernels = attentionKernels();
    return std::any_of(
        kernels.begin(), kernels.end(), [&](const AttentionKernelKind &k) { return k.kind == kind && k.fixedPattern; });
}

PatternSummary attentionPattern(
    const AttentionKernelSpec &spec, int64_t T, bool causal, const std::vector<int> &padding, int gridCells)
{
    if (!hasFixedPattern(spec.kind))
        throw Error("attention pattern: kernel '" + spec.kind
            + "' has no fixed pattern (bigbird, longformer, strided and fixed have; LSH's depends on the queries)");
    if (T < 1 || T > INT_MAX)
        throw Error("attention pattern: the length must be in [1, 2^31), got " + std::to_string(T));
    if (gridCells < 1)
        throw Error("attention pattern: the grid needs at least 1 cell, got " + std::to_string(gridCells));
    const MatrixRM zeros = MatrixRM::Zero(T, 1); // (T,1): the kernels' rules never read q, k or v
    const ConstMatrixMap x(zeros.data(), T, 1);
    PatternRecorder recorder(T);
    AttentionOptions options;
    options.causal = causal;
    options.padding = padding;
    options.patternVisitor = &recorder;
    attention_kernel_forward(spec, x, x, x, options);

    PatternSummary s;
    s.length = T;
    s.computedPairs = recorder.computed();
    s.fullPairs = causal ? T * (T + 1) / 2 : T * T;
    s.cells = int(std::min<int64_t>(gridCells, T));
    for (int64_t c = 0; c <= s.cells; ++c)
        s.cellEdges.push_back(c * T / s.cells);
    fillGrid(s, recorder.rows());
    return s;
}

std::string patternFormula(const AttentionKernelSpec &spec, bool causal)
{
    const AttentionKernelKind &kernel = attentionKernel(spec.kind);
    if (!kernel.rule)
        throw Error("attention pattern: kernel '" + spec.kind + "' has no fixed pattern");
    const std::string out = kernel.rule(spec, causal);
    return causal ? out + ",  and j ≤ i" : out;
}

} // namespace atlas::attention
