#include "attention/longformerattention.h"

#include "attention/blockattention.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace atlas::attention {

namespace {

void checkParams(const LongformerParams &p, int64_t T)
{
    const auto fail = [](const std::string &what) { throw Error("attention kernel 'longformer': " + what); };
    if (p.window < 0)
        fail("window must not be negative, got " + std::to_string(p.window));
    if (p.dilation < 1)
        fail("dilation must be at least 1, got " + std::to_string(p.dilation));
    for (int g : p.global)
        if (g < 0 || g >= T)
            fail("global position " + std::to_string(g) + " is outside the sequence of " + std::to_string(T)
                + " tokens");
}

struct ClassBlock
{
    int64_t residue, first, end; // class members first … end−1, i.e. positions residue + δ·t
};

// Blocks of up to 64 members of each residue class mod δ.
std::vector<ClassBlock> classBlocks(int64_t T, int64_t delta)
{
    std::vector<ClassBlock> blocks;
    for (int64_t r = 0; r < std::min(delta, T); ++r)
        for (int64_t t = 0, members = (T - r + delta - 1) / delta; t < members; t += kQueryRun)
            blocks.push_back({r, t, std::min(members, t + kQueryRun)});
    return blocks;
}

// Query i's rules for keys[0, nk): attended when the key is allowed (ok), not later than latest, and in the window
// [lowest, highest] or global. Restrict pointers: the rules' bytes could alias the rest, which stopped the
// compiler from vectorising the loop.
void setWindowRow(KeyRule *__restrict row, int i, const int *__restrict keys, const unsigned char *__restrict ok,
    const unsigned char *__restrict global, size_t nk, int lowest, int highest, int latest)
{
    static_assert(int(KeyRule::Masked) == 0 && int(KeyRule::Allowed) == 1);
    for (size_t c = 0; c < nk; ++c) {
        const int gap = keys[c] - i;
        const bool inWindow = gap >= lowest && gap <= highest;
        row[c] = KeyRule(ok[c] & (gap <= latest) & (inWindow | global[c]));
    }
}

} // namespace

AttentionResult longformer_attention_forward(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
    const LongformerParams &params, const AttentionOptions &options)
{
    RowState state(q.rows(), q.cols()); // first: see RowState
    const BlockAttention attention("longformer", q, k, v, options, 1.0f / std::sqrt(float(q.cols())));
    const int64_t T = q.rows(), delta = params.dilation;
    checkParams(params, T);
    std::vector<unsigned char> isGlobal(size_t(T), 0);
    for (int g : params.global)
        isGlobal[size_t(g)] = 1;
    std::vector<int> globals; // sorted, distinct
    for (int64_t t = 0; t < T; ++t)
        if (isGlobal[size_t(t)])
            globals.push_back(int(t));
    const bool causal = options.causal;
    const int64_t before = causal ? params.window : params.window / 2, after = causal ? 0 : params.window / 2;

    const std::vector<ClassBlock> blocks = classBlocks(T, delta);
    const auto windowBlock = [&](int64_t b, std::vector<int> &queries, std::vector<int> &keys) {
        const ClassBlock &c = blocks[size_t(b)];
        for (int64_t t = c.first; t < c.end; ++t)
            if (!isGlobal[size_t(c.residue + delta * t)])
                queries.push_back(int(c.residue + delta * t));
        const int64_t lo = std::max<int64_t>(0, c.first - before),
                      hi = std::min((T - c.residue + delta - 1) / delta, c.end + after);
        for (int64_t u = lo; u < hi; ++u)
            keys.push_back(int(c.residue + delta * u));
        for (int g : globals)
            if (g % delta != c.residue || (g - c.residue) / delta < lo || (g - c.residue) / delta >= hi)
                keys.push_back(g);
    };
    // j − i is a multiple of δ (the same residue class): within the window when −before·δ ≤ j − i ≤ after·δ
    // (after is 0 when causal; the bounds in int, as the positions, clamped to ±T). A global key is attended from
    // anywhere, a later one not when causal. A block's rules are set a row at a time, in a loop the compiler
    // vectorises (setWindowRow): asked per (query, key), they were a quarter of the kernel's time.
    const int lowest = int(std::max(-before * delta, -T)), highest = int(std::min(after * delta, T));
    const int latest = causal ? 0 : std::numeric_limits<int>::max(); // the largest j − i attended
    const auto windowRules = [&](BlockScratch &s) {
        const size_t nk = s.keys.size();
        s.keyFlags.resize(nk);
        for (size_t c = 0; c < nk; ++c)
            s.keyFlags[c] = isGlobal[size_t(s.keys[c])];
        for (size_t a = 0; a < s.queries.size(); ++a)
            setWindowRow(s.rules.data() + a * nk, s.queries[a], s.keys.data(), s.keyOk.data(), s.keyFlags.data(), nk,
                lowest, highest, latest);
    };
    // Global queries, 64 at a time, against every key.
    const auto globalBlock = [&](int64_t b, std::vector<int> &queries, std::vector<int> &keys) {
        queries.assign(
            globals.begin() + b * kQueryRun, globals.begin() + std::min<int64_t>(globals.size(), (b + 1) * kQueryRun));
        for (int64_t j = 0; j < (causal ? queries.back() + 1 : T); ++j)
            keys.push_back(int(j));
    };
    const auto causalRule = [causal](int i, int j) { return causal && j > i ? KeyRule::Masked : KeyRule::Allowed; };

    std::unique_ptr<DenseRecord> dense = options.dense ? std::make_unique<DenseRecord>(T) : nullptr;
    attention.passSettingRules(state, dense.get(), int64_t(blocks.size()), windowBlock, windowRules);
    attention.pass(state, dense.get(), (int64_t(globals.size()) + kQueryRun - 1) / kQueryRun, globalBlock, causalRule);
    AttentionResult result;
    BlockAttention::complete(state, dense.get(), result);
    return result;
}

} // namespace atlas::attention
