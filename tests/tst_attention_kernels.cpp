// Every efficient-attention kernel against its paper's definition, written out independently here in double
// precision on small sequences: hand-enumerated masks, the dense softmax over exactly the allowed keys, and
// the limits in which a kernel must reproduce full attention.
#include "attention/attentionkernel.h"
#include "attention/fullattention.h"
#include "attention/patternparams.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>
#include <array>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

using namespace atlas;
using namespace atlas::testing;
using namespace atlas::attention;

namespace {

using MatrixD = Eigen::MatrixXd;
using Allowed = std::function<bool(int, int)>; // may query i attend key j

ConstMatrixMap view(const MatrixRM &m)
{
    return ConstMatrixMap(m.data(), m.rows(), m.cols());
}

double maxDiff(const MatrixD &expected, const Tensor &actual)
{
    return (expected - actual.matrix().cast<double>()).cwiseAbs().maxCoeff();
}

MatrixD maskOf(int T, const Allowed &allowed)
{
    MatrixD m = MatrixD::Zero(T, T);
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j)
            m(i, j) = allowed(i, j) ? 1.0 : 0.0;
    return m;
}

// "10010" rows -> a 0/1 matrix
MatrixD literalMask(const std::vector<const char *> &rows)
{
    MatrixD m(int64_t(rows.size()), int64_t(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i)
        for (size_t j = 0; j < rows.size(); ++j)
            m(int64_t(i), int64_t(j)) = rows[i][j] == '1' ? 1.0 : 0.0;
    return m;
}

// softmax(q kᵀ/√d) over the allowed keys only, in double; a row with no allowed key is 0.
std::pair<MatrixD, MatrixD> softmaxAttention(
    const MatrixRM &q, const MatrixRM &k, const MatrixRM &v, const MatrixD &mask)
{
    const MatrixD s = q.cast<double>() * k.cast<double>().transpose() / std::sqrt(double(q.cols()));
    MatrixD w = MatrixD::Zero(s.rows(), s.cols());
    for (int64_t i = 0; i < s.rows(); ++i) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < s.cols(); ++j)
            if (mask(i, j) != 0)
                mx = std::max(mx, s(i, j));
        for (int64_t j = 0; j < s.cols(); ++j)
            if (mask(i, j) != 0)
                sum += (w(i, j) = std::exp(s(i, j) - mx));
        if (sum > 0)
            w.row(i) /= sum;
    }
    return {w * v.cast<double>(), w};
}

// Checks a kernel's context, weights and mask against the dense softmax over `mask`.
void expectSoftmaxOver(const AttentionResult &r, const MatrixRM &q, const MatrixRM &k, const MatrixRM &v,
    const MatrixD &mask, const char *what)
{
    const auto [ctx, w] = softmaxAttention(q, k, v, mask);
    QVERIFY2(maxDiff(mask, r.mask) == 0.0, what);
    QVERIFY2(maxDiff(ctx, r.context) < 2e-5, what);
    QVERIFY2(maxDiff(w, r.weights) < 2e-6, what);
}

template <typename F> QString errorOf(F f)
{
    try {
        f();
    } catch (const Error &e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

AttentionResult run(const std::string &kind, std::vector<std::string> params, const MatrixRM &q, const MatrixRM &k,
    const MatrixRM &v, AttentionOptions options)
{
    options.dense = true;
    return attention_kernel_forward(parseAttentionKernelSpec(kind, params), view(q), view(k), view(v), options);
}

// Reformer's LSH attention written out from the paper for given rotations (rounds,d,b/2) and buckets.
struct LshReference
{
    MatrixD ctx, w, mask;
};

LshReference lshReference(const MatrixRM &q, const MatrixRM &v, const Tensor &buckets, int chunk, bool causal,
    const std::vector<int> &padding)
{
    const int T = int(q.rows()), rounds = int(buckets.dim(0));
    const double rootD = std::sqrt(double(q.cols()));
    MatrixD khat = q.cast<double>();
    khat.rowwise().normalize();
    const MatrixD s = q.cast<double>() * khat.transpose() / rootD;
    std::vector<MatrixD> outs;
    std::vector<std::vector<double>> lse(static_cast<size_t>(rounds), std::vector<double>(static_cast<size_t>(T)));
    std::vector<std::vector<std::vector<int>>> sets(
        static_cast<size_t>(rounds), std::vector<std::vector<int>>(static_cast<size_t>(T)));
    LshReference ref {MatrixD::Zero(T, q.cols()), MatrixD::Zero(T, T), MatrixD::Zero(T, T)};
    for (int r = 0; r < rounds; ++r) {
        std::vector<int> order(static_cast<size_t>(T));
        std::iota(order.begin(), order.end(), 0);
        const float *b = buckets.data() + r * T;
        std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return b[x] < b[y]; });
        MatrixD out = MatrixD::Zero(T, q.cols());
        for (int p = 0; p < T; ++p) {
            const int i = order[size_t(p)], c = p / chunk;
            std::vector<int> keys, others;
            for (int pp = std::max(0, (c - 1) * chunk); pp < std::min(T, (c + 1) * chunk); ++pp) {
                const int j = order[size_t(pp)];
                if ((causal && j > i) || std::count(padding.begin(), padding.end(), j))
                    continue;
                keys.push_back(j);
                if (j != i)
                    others.push_back(j);
            }
            // The own key scores s_ii − 1e5: it matters only when it is the only key.
            const auto score = [&](int j) { return s(i, j) - (j == i ? 1e5 : 0.0); };
            double mx = -INFINITY, z = 0;
            for (int j : keys)
                mx = std::max(mx, score(j));
            for (int j : keys)
                z += std::exp(score(j) - mx);
            lse[size_t(r)][size_t(i)] = keys.empty() ? -INFINITY : mx + std::log(z);
            for (int j : keys)
                out.row(i) += std::exp(score(j) - mx) / z * v.row(j).cast<double>();
            for (int j : (others.empty() ? keys : others))
                ref.mask(i, j) = 1.0;
            sets[size_t(r)][size_t(i)] = keys;
        }
        outs.push_back(out);
    }
    for (int i = 0; i < T; ++i) { // out = Σ_r exp(lse_r − L) out_r, L = logsumexp_r lse_r
        double mx = -INFINITY, total = 0;
        for (int r = 0; r < rounds; ++r)
            mx = std::max(mx, lse[size_t(r)][size_t(i)]);
        for (int r = 0; r < rounds; ++r)
            total += std::exp(lse[size_t(r)][size_t(i)] - mx);
        const double L = mx + std::log(total);
        for (int r = 0; r < rounds && total > 0; ++r) {
            ref.ctx.row(i) += std::exp(lse[size_t(r)][size_t(i)] - L) * outs[size_t(r)].row(i);
            for (int j : sets[size_t(r)][size_t(i)])
                ref.w(i, j) += std::exp(s(i, j) - (j == i ? 1e5 : 0.0) - L);
        }
    }
    return ref;
}

} // namespace

class TestAttentionKernels : public QObject
{
    Q_OBJECT

private slots:
    void specsParseAndNameTheirErrors()
    {
        const LshParams p = lshParams(parseAttentionKernelSpec("lsh", {"rounds=2", "chunk=8"}));
        QCOMPARE(p.rounds, 2);
        QCOMPARE(p.chunk, 8);
        QCOMPARE(p.buckets, 32);
        QCOMPARE(longformerParams(parseAttentionKernelSpec("longformer", {"global=0,5,9"})).global,
            (std::vector<int> {0, 5, 9}));
        QCOMPARE(describeAttentionKernel(parseAttentionKernelSpec("lsh", {})),
            std::string("lsh (rounds=4, buckets=32, chunk=64, seed=0)"));
        const auto failsWith = [](const std::string &kind, std::vector<std::string> kv, QStringList words) {
            const QString message = errorOf([&] { parseAttentionKernelSpec(kind, kv); });
            for (const QString &w : words)
                QVERIFY2(message.contains(w), qPrintable("'" + message + "' lacks " + w));
        };
        failsWith("sparse", {}, {"sparse", "longformer"});
        failsWith("lsh", {"chunks=3"}, {"'lsh'", "'chunks'", "chunk"});
        failsWith("bigbird", {"block=x"}, {"'bigbird'", "'block'", "'x'"});
        failsWith("lsh", {"buckets=3"}, {"'lsh'", "'buckets'", "even"});
        failsWith("bigbird", {"window_blocks=2"}, {"'window_blocks'", "odd"});
        failsWith("bigbird", {"window_blocks=-1"}, {"'window_blocks'"});
        failsWith("fixed", {"stride=4", "summary=5"}, {"'fixed'", "'summary'"});
        failsWith("linformer", {"projection=learned"}, {"'linformer'", "'projection'"});
        failsWith("performer", {"features"}, {"'performer'", "key=value"});
        failsWith("full", {"window=3"}, {"'full'", "'window'", "none"});
        failsWith("strided", {"stride=0"}, {"'strided'", "'stride'", "at least 1"});
    }

    void denseWeightsOnlyWhenAsked()
    {
        const MatrixRM q = randomMatrix(20, 8, 1), k = randomMatrix(20, 8, 2), v = randomMatrix(20, 8, 3);
        for (const std::string &kind : attentionKernelKinds()) {
            const AttentionResult r = attention_kernel_forward({kind, {}}, view(q), view(k), view(v), {});
            QVERIFY2(r.weights.empty() && r.mask.empty(), kind.c_str());
            QCOMPARE(r.context.shape(), (Shape {20, 8}));
        }
    }

    // Each descriptor says what its kernel does: a kernel that cannot be causal refuses a causal mask, the others
    // take it; a fixed pattern computes the same pairs whatever q and k are, LSH's pairs follow the keys.
    void descriptorsSayWhatTheKernelsDo()
    {
        const int T = 24;
        const MatrixRM q = randomMatrix(T, 8, 7), k = randomMatrix(T, 8, 8), v = randomMatrix(T, 8, 9),
                       other = randomMatrix(T, 8, 10);
        for (const AttentionKernelKind &kernel : attentionKernels()) {
            const AttentionKernelSpec spec = suggestedKernelSpec(kernel.kind, T); // LSH: several buckets and chunks
            const QString refused = errorOf([&] {
                attention_kernel_forward(spec, view(q), view(k), view(v), {true, {}, true});
            });
            QVERIFY2(kernel.causal == refused.isEmpty(), kernel.kind.c_str());
            QVERIFY2(kernel.causal == kernel.notCausal.empty(), "a kernel that cannot be causal says why");
            QVERIFY2(kernel.approximation.key.empty() == kernel.approximation.weights.empty(),
                "an approximation defines the weights it implies");
            QCOMPARE(isExactAttention(spec), kernel.kind == "full");
            if (!kernel.causal)
                continue;
            const AttentionResult a = attention_kernel_forward(spec, view(q), view(k), view(v), {true, {}, true});
            const AttentionResult b
                = attention_kernel_forward(spec, view(other), view(other), view(v), {true, {}, true});
            const bool samePairs = (a.mask.matrix().array() == b.mask.matrix().array()).all();
            if (kernel.fixedPattern)
                QVERIFY2(samePairs, kernel.kind.c_str());
            if (kernel.kind == "lsh")
                QVERIFY2(!samePairs, "LSH's buckets follow the keys");
        }
    }

    // Each kernel's dense weights are consistent with its context, sum to 1 per row, and respect causality and
    // padding: no weight on a future or padding key.
    void weightsExplainTheContextAndRespectMasks()
    {
        const int T = 37;
        const MatrixRM q = randomMatrix(T, 8, 4), k = randomMatrix(T, 8, 5), v = randomMatrix(T, 8, 6);
        const std::vector<int> padding {2, 9, 30};
        const std::map<std::string, std::vector<std::string>> params = {{"lsh", {"buckets=4", "chunk=5", "rounds=3"}},
            {"bigbird", {"block=4", "random_blocks=2"}}, {"longformer", {"window=4", "dilation=2", "global=3,20"}},
            {"strided", {"stride=5"}}, {"fixed", {"stride=6", "summary=2"}}, {"swin", {"window=5", "shift=2"}},
            {"linformer", {"k=12"}}, {"performer", {"features=64"}}};
        for (const std::string &kind : attentionKernelKinds())
            for (bool causal : {false, true}) {
                if (kind == "linformer" && causal)
                    continue;
                const std::string what = kind + (causal ? " causal" : "");
                const AttentionResult r = run(kind, params.count(kind) ? params.at(kind) : std::vector<std::string> {},
                    q, k, v, {causal, padding, true});
                const MatrixD w = r.weights.matrix().cast<double>();
                QVERIFY2((w * v.cast<double>() - r.context.matrix().cast<double>()).cwiseAbs().maxCoeff() < 1e-5,
                    what.c_str());
                for (int i = 0; i < T; ++i) {
                    if (kind != "linformer")
                        QVERIFY2(std::abs(w.row(i).sum() - 1.0) < 1e-5, what.c_str());
                    for (int j = 0; j < T; ++j)
                        if ((causal && j > i) || std::count(padding.begin(), padding.end(), j))
                            QVERIFY2(w(i, j) == 0.0 && r.mask.matrix()(i, j) == 0.0f, what.c_str());
                }
            }
        QVERIFY(errorOf([&] { run("linformer", {}, q, k, v, {true, {}, false}); }).contains("causal"));
    }

    void fullIsTheMaskedSoftmax()
    {
        const int T = 45;
        const MatrixRM q = randomMatrix(T, 16, 7), k = randomMatrix(T, 16, 8), v = randomMatrix(T, 16, 9);
        const std::vector<int> padding {0, 4};
        for (bool causal : {false, true}) {
            const MatrixD mask = maskOf(T, [&](int i, int j) { return j != 0 && j != 4 && (!causal || j <= i); });
            expectSoftmaxOver(run("full", {}, q, k, v, {causal, padding, true}), q, k, v, mask, "full");
        }
        // Row blocks: at 1500 tokens the scores are computed 256 rows at a time.
        const MatrixRM ql = randomMatrix(1500, 8, 10), kl = randomMatrix(1500, 8, 11), vl = randomMatrix(1500, 8, 12);
        const AttentionResult r = full_attention_forward(view(ql), view(kl), view(vl), {true, {}, false});
        const auto [ctx, w] = softmaxAttention(ql, kl, vl, maskOf(1500, [](int i, int j) { return j <= i; }));
        QVERIFY(maxDiff(ctx, r.context) < 1e-5);
    }

    void lshFollowsTheReformerDefinition()
    {
        const int T = 48, chunk = 6;
        const MatrixRM q = randomMatrix(T, 8, 13), k = randomMatrix(T, 8, 14), v = randomMatrix(T, 8, 15);
        for (bool causal : {false, true}) {
            const std::vector<int> padding {5};
            const AttentionResult r
                = run("lsh", {"rounds=3", "buckets=4", "chunk=6", "seed=2"}, q, k, v, {causal, padding, true});
            const Tensor &buckets = r.extras.at("buckets"), &rotations = r.extras.at("rotations");
            QCOMPARE(buckets.shape(), (Shape {3, T}));
            QCOMPARE(rotations.shape(), (Shape {3, 8, 2}));
            int used = 0; // h(x) = argmax([xR; −xR]), checked where the maximum is clear
            for (int rd = 0; rd < 3; ++rd) {
                const MatrixD proj = q.cast<double>() * rotations.slice(rd).cast<double>();
                for (int t = 0; t < T; ++t) {
                    Eigen::VectorXd both(4);
                    both << proj(t, 0), proj(t, 1), -proj(t, 0), -proj(t, 1);
                    Eigen::Index best;
                    both.maxCoeff(&best);
                    used |= 1 << int(best);
                    QCOMPARE(buckets.data()[rd * T + t], float(best));
                }
            }
            QCOMPARE(used, 15); // all four buckets occur
            const LshReference ref = lshReference(q, v, buckets, chunk, causal, padding);
            QVERIFY(maxDiff(ref.ctx, r.context) < 2e-5);
            QVERIFY(maxDiff(ref.w, r.weights) < 2e-6);
            QVERIFY(maxDiff(ref.mask, r.mask) == 0.0);
        }
    }

    // With one bucket and one chunk covering the sequence, every round sees every key, so LSH attention is
    // exactly full softmax attention over the shared keys k_j = q_j/|q_j| in which a query attends every key
    // but itself (causal: every earlier key), and itself only when it has no other key (causal: token 0). More
    // rounds change nothing: identical rounds get equal log-sum-exp weights.
    void lshWithOneBucketAndOneChunkIsFullAttentionWithoutSelf()
    {
        const int T = 30;
        const MatrixRM q = randomMatrix(T, 8, 16), k = randomMatrix(T, 8, 17), v = randomMatrix(T, 8, 18);
        MatrixRM khat = q;
        khat.rowwise().normalize();
        for (bool causal : {false, true})
            for (const char *rounds : {"rounds=1", "rounds=3"}) {
                const MatrixD mask
                    = maskOf(T, [&](int i, int j) { return (j != i || (causal && i == 0)) && (!causal || j <= i); });
                const AttentionResult r = run("lsh", {"buckets=1", "chunk=30", rounds}, q, k, v, {causal, {}, true});
                expectSoftmaxOver(r, q, khat, v, mask, rounds);
            }
    }

    // Without dense weights LSH attends each round's chunks through a window sliding over the sorted order
    // (lshattention.cpp) instead of BlockAttention's blocks: the same context for chunks that are and are not a
    // multiple of the product's tile, a short last chunk, one chunk, chunks of one, padding, causal, a zero query,
    // and queries whose only key is padding.
    void lshWithoutWeightsAttendsTheSameKeys()
    {
        const std::vector<std::array<int, 4>> shapes {
            {48, 8, 6, 4}, {77, 12, 16, 8}, {130, 24, 40, 2}, {20, 8, 64, 1}, {33, 5, 1, 4}, {300, 64, 64, 32}};
        for (const auto &[T, d, chunk, buckets] : shapes)
            for (bool causal : {false, true}) {
                MatrixRM q = randomMatrix(T, d, unsigned(T + d)), v = randomMatrix(T, d, unsigned(T + 2 * d));
                q.row(3).setZero();
                const std::vector<std::string> params {
                    "rounds=3", "buckets=" + std::to_string(buckets), "chunk=" + std::to_string(chunk), "seed=4"};
                const AttentionResult window = attention_kernel_forward(
                    parseAttentionKernelSpec("lsh", params), view(q), view(q), view(v), {causal, {0, 5, T - 1}, false});
                const AttentionResult blocks = run("lsh", params, q, q, v, {causal, {0, 5, T - 1}}); // dense
                const std::string what = "T " + std::to_string(T) + " chunk " + std::to_string(chunk);
                QVERIFY2(maxDiff(blocks.context.matrix().cast<double>(), window.context) < 1e-5, what.c_str());
                if (causal) // query 0's only key is its own, a padding key
                    QVERIFY(window.context.matrix().row(0).isZero());
            }
    }

    void bigbirdFollowsItsBlockPattern()
    {
        const MatrixRM q8 = randomMatrix(8, 4, 19), k8 = randomMatrix(8, 4, 20), v8 = randomMatrix(8, 4, 21);
        const MatrixD literal = literalMask(
            {"11111111", "11111111", "11110000", "11110000", "11001100", "11001100", "11000011", "11000011"});
        expectSoftmaxOver(
            run("bigbird", {"block=2", "window_blocks=1", "global_blocks=1", "random_blocks=0"}, q8, k8, v8, {}), q8,
            k8, v8, literal, "bigbird literal");

        const int T = 42, B = 4, n = 11; // the last block is short
        const MatrixRM q = randomMatrix(T, 8, 22), k = randomMatrix(T, 8, 23), v = randomMatrix(T, 8, 24);
        for (bool causal : {false, true}) {
            const AttentionResult r
                = run("bigbird", {"block=4", "window_blocks=3", "global_blocks=1", "random_blocks=2", "seed=5"}, q, k,
                    v, {causal, {}, true});
            const Tensor &random = r.extras.at("random_blocks");
            QCOMPARE(random.shape(), (Shape {n, 2}));
            const auto isRandom
                = [&](int a, int b) { return random.data()[a * 2] == b || random.data()[a * 2 + 1] == b; };
            for (int a = 1; a < n; ++a) {
                const int r0 = int(random.data()[a * 2]), r1 = int(random.data()[a * 2 + 1]);
                QVERIFY(r0 != r1 && r0 >= 1 && r1 >= 1 && std::abs(r0 - a) > 1 && std::abs(r1 - a) > 1);
            }
            QCOMPARE(random.data()[0], -1.0f); // the global block draws none
            const MatrixD mask = maskOf(T, [&](int i, int j) {
                const int a = i / B, b = j / B;
                return (a == 0 || b == 0 || std::abs(a - b) <= 1 || isRandom(a, b)) && (!causal || j <= i);
            });
            expectSoftmaxOver(r, q, k, v, mask, "bigbird");
            // A window as wide as the sequence is full attention.
            const AttentionResult wide = run("bigbird",
                {"block=4", "window_blocks=21", "global_blocks=0", "random_blocks=0"}, q, k, v, {causal, {3}, true});
            const AttentionResult full = run("full", {}, q, k, v, {causal, {3}, true});
            QVERIFY(maxDiff(full.context.matrix().cast<double>(), wide.context) < 1e-5);

            // window_blocks 0: each component alone, as the panels of BigBird's figure 1 (random only, global only).
            // Causal, a query whose random blocks all lie ahead has no key: zero context and weights, never NaN.
            const AttentionResult randomOnly
                = run("bigbird", {"block=4", "window_blocks=0", "global_blocks=0", "random_blocks=2", "seed=3"}, q, k,
                    v, {causal, {}, true});
            const Tensor &drawn = randomOnly.extras.at("random_blocks");
            expectSoftmaxOver(randomOnly, q, k, v,
                maskOf(T,
                    [&](int i, int j) {
                        const int a = i / B, b = j / B;
                        return (drawn.data()[a * 2] == b || drawn.data()[a * 2 + 1] == b) && (!causal || j <= i);
                    }),
                "bigbird random only");
            for (int64_t i = 0; i < randomOnly.weights.numel(); ++i)
                QVERIFY(std::isfinite(randomOnly.weights.data()[i]));
            const AttentionResult globalOnly = run("bigbird",
                {"block=4", "window_blocks=0", "global_blocks=2", "random_blocks=0"}, q, k, v, {causal, {}, true});
            expectSoftmaxOver(globalOnly, q, k, v,
                maskOf(T, [&](int i, int j) { return (i / B < 2 || j / B < 2) && (!causal || j <= i); }),
                "bigbird global only");
        }
    }

    void longformerFollowsItsWindows()
    {
        const MatrixRM q8 = randomMatrix(8, 4, 25), k8 = randomMatrix(8, 4, 26), v8 = randomMatrix(8, 4, 27);
        expectSoftmaxOver(run("longformer", {"window=2", "global=5"}, q8, k8, v8, {}), q8, k8, v8,
            literalMask(
                {"11000100", "11100100", "01110100", "00111100", "00011100", "11111111", "00000111", "00000111"}),
            "longformer literal");
        expectSoftmaxOver(run("longformer", {"window=2", "dilation=2"}, q8, k8, v8, {true, {}, true}), q8, k8, v8,
            literalMask(
                {"10000000", "01000000", "10100000", "01010000", "10101000", "01010100", "00101010", "00010101"}),
            "longformer causal dilated literal");

        const int T = 41; // 12 wide: keys are gathered 8 columns at a time, then the rest one by one
        const MatrixRM q = randomMatrix(T, 12, 28), k = randomMatrix(T, 12, 29), v = randomMatrix(T, 12, 30);
        for (bool causal : {false, true})
            for (int dilation : {1, 3}) {
                const int w = 6;
                const auto global = [](int t) { return t == 0 || t == 17; };
                const MatrixD mask = maskOf(T, [&](int i, int j) {
                    const bool window = (j - i) % dilation == 0
                        && (causal ? (i - j >= 0 && i - j <= w * dilation) : std::abs(i - j) <= w / 2 * dilation);
                    return (global(i) || global(j) || window) && (!causal || j <= i);
                });
                expectSoftmaxOver(run("longformer", {"window=6", "dilation=" + std::to_string(dilation), "global=17,0"},
                                      q, k, v, {causal, {}, true}),
                    q, k, v, mask, "longformer");
                const AttentionResult wide = run("longformer", {"window=82"}, q, k, v, {causal, {4}, true});
                const AttentionResult full = run("full", {}, q, k, v, {causal, {4}, true});
                QVERIFY(maxDiff(full.context.matrix().cast<double>(), wide.context) < 1e-5);
            }
    }

    // Child et al. 2019, §4.2 (causal, as in the paper): strided A(1)_i = {max(0,i−l) … i}, A(2)_i = {j : (i−j)
    // mod l = 0}; fixed A(1)_i = {j : ⌊j/l⌋ = ⌊i/l⌋}, A(2)_i = {j : j mod l ≥ l − c}.
    void sparseTransformerPatterns()
    {
        const MatrixRM q8 = randomMatrix(8, 4, 31), k8 = randomMatrix(8, 4, 32), v8 = randomMatrix(8, 4, 33);
        expectSoftmaxOver(run("strided", {"stride=3"}, q8, k8, v8, {true, {}, true}), q8, k8, v8,
            literalMask(
                {"10000000", "11000000", "11100000", "11110000", "01111000", "00111100", "10011110", "01001111"}),
            "strided literal");
        expectSoftmaxOver(run("fixed", {"stride=4"}, q8, k8, v8, {true, {}, true}), q8, k8, v8,
            literalMask(
                {"10000000", "11000000", "11100000", "11110000", "00011000", "00011100", "00011110", "00011111"}),
            "fixed literal");
        expectSoftmaxOver(run("fixed", {"stride=4"}, q8, k8, v8, {}), q8, k8, v8,
            literalMask(
                {"11110001", "11110001", "11110001", "11110001", "00011111", "00011111", "00011111", "00011111"}),
            "fixed literal, not causal");

        const int T = 150; // several query blocks and residue classes; 150 is not a multiple of 7
        const MatrixRM q = randomMatrix(T, 8, 34), k = randomMatrix(T, 8, 35), v = randomMatrix(T, 8, 36);
        for (bool causal : {false, true}) {
            const auto c = [causal](int i, int j) { return !causal || j <= i; };
            expectSoftmaxOver(run("strided", {"stride=7"}, q, k, v, {causal, {}, true}), q, k, v,
                maskOf(T, [&](int i, int j) { return (std::abs(i - j) <= 7 || (i - j) % 7 == 0) && c(i, j); }),
                "strided");
            expectSoftmaxOver(run("fixed", {"stride=7", "summary=2"}, q, k, v, {causal, {}, true}), q, k, v,
                maskOf(T, [&](int i, int j) { return (i / 7 == j / 7 || j % 7 >= 5) && c(i, j); }), "fixed");
        }
    }

    // Liu et al. 2021, §3.2: non-overlapping windows, shifted by s in the next layer (the edge windows cut short,
    // as the cyclic shift with its mask computes them); over a grid, W × W windows of patches, shifted by s rows and
    // s columns.
    void swinWindows()
    {
        const MatrixRM q8 = randomMatrix(8, 4, 41), k8 = randomMatrix(8, 4, 42), v8 = randomMatrix(8, 4, 43);
        expectSoftmaxOver(run("swin", {"window=4"}, q8, k8, v8, {false, {}, true}), q8, k8, v8,
            literalMask(
                {"11110000", "11110000", "11110000", "11110000", "00001111", "00001111", "00001111", "00001111"}),
            "swin literal");
        expectSoftmaxOver(run("swin", {"window=4", "shift=2"}, q8, k8, v8, {true, {}, true}), q8, k8, v8,
            literalMask(
                {"10000000", "11000000", "00100000", "00110000", "00111000", "00111100", "00000010", "00000011"}),
            "swin literal, shifted, causal");
        const int T = 23; // a grid 5 patches wide, its last row short
        const MatrixRM q = randomMatrix(T, 8, 44), k = randomMatrix(T, 8, 45), v = randomMatrix(T, 8, 46);
        for (bool causal : {false, true}) {
            const auto window = [](int t) { return std::pair((t / 5 + 1) / 2, (t % 5 + 1) / 2); };
            expectSoftmaxOver(run("swin", {"window=2", "shift=1", "grid=5"}, q, k, v, {causal, {}, true}), q, k, v,
                maskOf(T, [&](int i, int j) { return window(i) == window(j) && (!causal || j <= i); }), "swin grid");
        }
        QCOMPARE(attention::swinWindows({2, 1, 5}, 23).size(), size_t(9)); // 3 × 3 windows
        QCOMPARE(attention::swinWindows({1, 0, 2000000000}, 8).size(), size_t(8)); // one row, sized by the input
        QVERIFY_THROWS_EXCEPTION(Error, run("swin", {"window=4", "shift=4"}, q8, k8, v8, {}));
    }

    void linformerProjectsKeysAndValues()
    {
        const int T = 33;
        const MatrixRM q = randomMatrix(T, 8, 37), k = randomMatrix(T, 8, 38), v = randomMatrix(T, 8, 39);
        // k = T with the identity projection is full attention.
        const AttentionResult id = run("linformer", {"k=33", "projection=identity"}, q, k, v, {false, {6}, true});
        const AttentionResult full = run("full", {}, q, k, v, {false, {6}, true});
        QVERIFY(maxDiff(full.context.matrix().cast<double>(), id.context) < 1e-6);
        QVERIFY(maxDiff(full.weights.matrix().cast<double>(), id.weights) < 1e-6);
        // A random E (k,T) with N(0, 1/k) entries: softmax(q (E k)ᵀ/√d) (E v).
        const AttentionResult r = run("linformer", {"k=256", "seed=4"}, q, k, v, {false, {6}, true});
        const Tensor &E = r.extras.at("projection");
        QCOMPARE(E.shape(), (Shape {256, T}));
        const MatrixD e = E.matrix().cast<double>(), kp = e * k.cast<double>(), vp = e * v.cast<double>();
        QVERIFY(e.col(6).isZero()); // a padding key joins no projection
        const double var = (e.array().square().sum()) / (256.0 * (T - 1));
        QVERIFY2(std::abs(var * 256 - 1.0) < 0.1, qPrintable(QString::number(var * 256)));
        MatrixD p = q.cast<double>() * kp.transpose() / std::sqrt(8.0);
        for (int i = 0; i < T; ++i) {
            p.row(i) = (p.row(i).array() - p.row(i).maxCoeff()).exp();
            p.row(i) /= p.row(i).sum();
        }
        QVERIFY(maxDiff(p * vp, r.context) < 1e-5);
        QVERIFY(maxDiff(p * e, r.weights) < 1e-5);
    }

    void performerEstimatesSoftmaxAttention()
    {
        const int T = 12, d = 16;
        const MatrixRM q = randomMatrix(T, d, 40, 0.6f), k = randomMatrix(T, d, 41, 0.6f), v = randomMatrix(T, d, 42);
        // The estimator, from the returned ω: φ(x) = exp(ωx − |x|²/2)/√m with x = q/d^¼, k/d^¼.
        const AttentionResult r = run("performer", {"features=64", "seed=3"}, q, k, v, {});
        const MatrixD omega = r.extras.at("features").matrix().cast<double>();
        QCOMPARE(omega.rows(), int64_t(64));
        const auto phi = [&](const MatrixRM &x) {
            const MatrixD xs = x.cast<double>() / std::pow(double(d), 0.25);
            MatrixD f = xs * omega.transpose();
            for (int t = 0; t < T; ++t)
                f.row(t) = (f.row(t).array() - 0.5 * xs.row(t).squaredNorm()).exp() / 8.0;
            return f;
        };
        const MatrixD a = phi(q) * phi(k).transpose();
        const Eigen::VectorXd den = a.rowwise().sum();
        QVERIFY(maxDiff(den.asDiagonal().inverse() * a * v.cast<double>(), r.context) < 1e-4);
        // Orthogonal random features: the directions within a block of d rows are orthonormal.
        const MatrixD dirs = omega.topRows(d).rowwise().normalized();
        QVERIFY((dirs * dirs.transpose() - MatrixD::Identity(d, d)).cwiseAbs().maxCoeff() < 1e-5);
        QVERIFY(omega.row(0).norm() != omega.row(1).norm()); // rescaled by chi-distributed lengths

        // The estimate converges to softmax attention as the features grow, as 1/√m (mean error over seeds).
        // (Without the sign fix of the QR factors it stalls near 0.006: the features were biased.)
        const MatrixRM qs = randomMatrix(T, d, 40, 0.3f), ks = randomMatrix(T, d, 41, 0.3f);
        const auto [exact, w] = softmaxAttention(qs, ks, v, MatrixD::Ones(T, T));
        std::vector<double> error;
        for (int m : {16, 256, 4096}) {
            double sum = 0;
            for (int seed = 0; seed < 4; ++seed) {
                const std::vector<std::string> p {"features=" + std::to_string(m), "seed=" + std::to_string(seed)};
                sum += (exact - run("performer", p, qs, ks, v, {}).context.matrix().cast<double>()).cwiseAbs().mean();
            }
            error.push_back(sum / 4);
        }
        QVERIFY2(error[1] < 0.5 * error[0] && error[2] < 0.5 * error[1] && error[2] < 0.004,
            qPrintable(QString("%1 %2 %3").arg(error[0]).arg(error[1]).arg(error[2])));

        // Causal by prefix sums: row i is the non-causal estimate over tokens 0..i (same features).
        const MatrixRM ql = randomMatrix(150, d, 43, 0.6f), kl = randomMatrix(150, d, 44, 0.6f),
                       vl = randomMatrix(150, d, 45);
        const AttentionResult causal = run("performer", {"features=32"}, ql, kl, vl, {true, {}, true});
        for (int i : {0, 1, 63, 64, 100, 149}) {
            const AttentionResult prefix
                = run("performer", {"features=32"}, ql.topRows(i + 1), kl.topRows(i + 1), vl.topRows(i + 1), {});
            const double diff = (prefix.context.matrix().row(i) - causal.context.matrix().row(i)).cwiseAbs().maxCoeff();
            QVERIFY2(diff < 1e-4, qPrintable(QString("row %1: %2").arg(i).arg(diff)));
        }
    }
};

QTEST_GUILESS_MAIN(TestAttentionKernels)
#include "tst_attention_kernels.moc"
