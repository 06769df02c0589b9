// A block's components (engine/blockcomponents.h, engine/feedforward.h), each on its own: its forward against a
// literal example worked by hand, its backward against central differences, and the parts a block holds by role
// (model/blockmodules.h) read in either layout. That the generator's single-token step equals the traced forward is
// tst_generator's; that every family's block agrees with PyTorch is tst_engine_parity's and tst_backprop's.
#include "engine/blockcomponents.h"
#include "engine/feedforward.h"
#include "model/blockmodules.h"
#include "model/model.h"
#include "ops/ops.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

using namespace atlas;

namespace {

Tensor tensorOf(Shape shape, std::vector<float> values)
{
    Tensor t(std::move(shape));
    if (int64_t(values.size()) != t.numel())
        throw Error("tensorOf: " + std::to_string(values.size()) + " values for " + t.shapeString());
    std::copy(values.begin(), values.end(), t.data());
    return t;
}

Tensor randomTensor(Shape shape, std::mt19937 &rng, float scale = 1.0f)
{
    std::normal_distribution<float> normal(0.0f, scale);
    Tensor t(std::move(shape));
    for (float &v : t.values())
        v = normal(rng);
    return t;
}

std::vector<float> valuesOf(const Tensor &t)
{
    return std::vector<float>(t.data(), t.data() + t.numel());
}

double largestDifference(const Tensor &a, const Tensor &b)
{
    double most = 0;
    for (int64_t i = 0; i < a.numel(); ++i)
        most = std::max(most, std::abs(double(a.data()[i]) - double(b.data()[i])));
    return most;
}

// d(Σ r ⊙ f(x)) / dx by central differences, one element of `x` at a time (`x` is changed and put back).
Tensor numericGradient(Tensor &x, const Tensor &r, const std::function<Tensor()> &f, float h = 1e-2f)
{
    Tensor g(x.shape());
    auto loss = [&] {
        const Tensor y = f();
        double sum = 0;
        for (int64_t i = 0; i < y.numel(); ++i)
            sum += double(r.data()[i]) * double(y.data()[i]);
        return sum;
    };
    for (int64_t i = 0; i < x.numel(); ++i) {
        const float keep = x.data()[i];
        x.data()[i] = keep + h;
        const double up = loss();
        x.data()[i] = keep - h;
        const double down = loss();
        x.data()[i] = keep;
        g.data()[i] = float((up - down) / (2.0 * double(h)));
    }
    return g;
}

ModelConfig llamaShaped(int heads, int kvHeads, int d)
{
    ModelConfig c;
    c.family = Family::Llama;
    c.modelType = "llama";
    c.heads = heads;
    c.kvHeads = kvHeads;
    c.dModel = heads * d;
    c.dFF = 2 * c.dModel;
    c.norm = NormKind::RmsNorm;
    c.gatedFfn = true;
    c.activation = Activation::Silu;
    c.qkvBias = c.outBias = c.mlpBias = false;
    c.lnEpsilon = 1e-6f;
    return c;
}

} // namespace

class TestBlockComponents : public QObject
{
    Q_OBJECT

private slots:
    // Every family holds a linear map as nn.Linear's [out, in] (y = x Wᵀ + b; a GPT-2 checkpoint's Conv1D [in, out]
    // is transposed at load): blockModule reads the role, moduleForward gives the worked values in GPT-2's config and
    // in Llama's alike.
    void aLinearPartIsReadAsOutByIn()
    {
        const Tensor x = tensorOf({2, 2}, {1, 2, 3, 4});
        // W [out, in] = [[1, 0], [0, 1], [2, −1]], b = [0.5, 0, −1]: row 1 = [1, 2, 0] + b, row 2 = [3, 4, 2] + b
        const std::vector<float> expected = {1.5f, 2.0f, -1.0f, 3.5f, 4.0f, 1.0f};
        ModelConfig gpt2;
        BlockWeights held;
        held.weight(BlockPart::Up) = tensorOf({3, 2}, {1, 0, 0, 1, 2, -1});
        held.bias(BlockPart::Up) = tensorOf({3}, {0.5f, 0, -1});
        Tensor out({2, 3});
        moduleForward(out, x, blockModule(gpt2, held, BlockPart::Up));
        QCOMPARE(valuesOf(out), expected);

        ModelConfig llama = llamaShaped(1, 1, 2);
        llama.dFF = 3;
        BlockWeights linear = held;
        out = Tensor({2, 3});
        moduleForward(out, x, blockModule(llama, linear, BlockPart::Up));
        QCOMPARE(valuesOf(out), expected);

        // Phi-3's gate_up_proj, held as the part Gate: the gate's rows, then up's.
        ModelConfig phi3 = llama;
        phi3.modelType = "phi3";
        BlockWeights fused;
        fused.weight(BlockPart::Gate) = tensorOf({6, 2}, {9, 9, 9, 9, 9, 9, 1, 0, 0, 1, 2, -1});
        out = Tensor({2, 3});
        moduleForward(out, x, blockModule(phi3, fused, BlockPart::Up));
        QCOMPARE(valuesOf(out), (std::vector<float> {1, 2, 0, 3, 4, 2}));
        moduleForward(out, x, blockModule(phi3, fused, BlockPart::Gate));
        QCOMPARE(valuesOf(out), (std::vector<float> {27, 27, 27, 63, 63, 63}));

        QVERIFY_THROWS_EXCEPTION(Error, blockModule(llama, linear, BlockPart::NormFfn));
        QVERIFY_THROWS_EXCEPTION(Error, linear.normWeight(BlockPart::Up));
    }

    // x = [1, 2, 3, 4]: mean 2.5, variance 1.25, mean square 7.5.
    void eachNormGivesTheWorkedValues()
    {
        const Tensor x = tensorOf({1, 4}, {1, 2, 3, 4});
        const Tensor gamma = tensorOf({4}, {1, 2, 1, 0.5f}), beta = tensorOf({4}, {0, 0, 1, 0});
        ModelConfig c;
        c.lnEpsilon = 0;
        Tensor out({1, 4});
        normForward(out, x, gamma, beta, c);
        const float s = 1.0f / std::sqrt(1.25f);
        const std::vector<float> layerNorm = {-1.5f * s, -0.5f * 2 * s, 0.5f * s + 1, 1.5f * 0.5f * s};
        for (int i = 0; i < 4; ++i)
            QVERIFY(std::abs(out.data()[i] - layerNorm[size_t(i)]) < 1e-6f);

        c.norm = NormKind::RmsNorm;
        normForward(out, x, gamma, Tensor(), c);
        const float r = 1.0f / std::sqrt(7.5f);
        const std::vector<float> rms = {r, 4 * r, 3 * r, 2 * r};
        for (int i = 0; i < 4; ++i)
            QVERIFY(std::abs(out.data()[i] - rms[size_t(i)]) < 1e-6f);

        c.normAddsOne = true; // Gemma stores γ − 1
        normForward(out, x, tensorOf({4}, {0, 1, 0, -0.5f}), Tensor(), c);
        for (int i = 0; i < 4; ++i)
            QVERIFY(std::abs(out.data()[i] - rms[size_t(i)]) < 1e-6f);
        QVERIFY(normFormula(c, "₁").find("(1 + γ₁)") != std::string::npos);
    }

    // x = [1, 2, 3, 4] as the sum of a = [1, 0, 1, 2] and b = [0, 2, 2, 2]: with the scale taken from x, each addend's
    // share is the norm applied to it alone, and the shares add up to the norm of x (LayerNorm's β apart).
    void theSharesOfASumAddUpToItsNorm()
    {
        const Tensor x = tensorOf({1, 4}, {1, 2, 3, 4});
        const Tensor gamma = tensorOf({4}, {1, 2, 1, 0.5f});
        ModelConfig c;
        c.lnEpsilon = 0;
        for (const NormKind kind : {NormKind::LayerNorm, NormKind::RmsNorm}) {
            c.norm = kind;
            Tensor a = tensorOf({1, 4}, {1, 0, 1, 2}), b = tensorOf({1, 4}, {0, 2, 2, 2});
            normShare(a, x, gamma, c);
            normShare(b, x, gamma, c);
            Tensor whole({1, 4});
            normForward(whole, x, gamma, tensorOf({4}, {0, 0, 0, 0}), c);
            for (int i = 0; i < 4; ++i)
                QVERIFY(std::abs(a.data()[i] + b.data()[i] - whole.data()[i]) < 1e-6f);
        }
        const float r = 1.0f / std::sqrt(7.5f); // RMSNorm: a's share is γ ⊙ a / rms(x)
        Tensor a = tensorOf({1, 4}, {1, 0, 1, 2});
        normShare(a, x, gamma, c);
        const std::vector<float> share = {r, 0, r, r};
        for (int i = 0; i < 4; ++i)
            QVERIFY(std::abs(a.data()[i] - share[size_t(i)]) < 1e-6f);
        QVERIFY_THROWS_EXCEPTION(Error, normShare(a, tensorOf({1, 3}, {1, 2, 3}), gamma, c));
    }

    // Qwen3's QK-norm over each head's d, OLMo 2's over a position's heads together: the worked values, and the
    // backward against central differences with K/V heads shared (OLMo 2's γ_k then sums over the query heads).
    void qkNormGivesTheWorkedValuesAndItsGradients()
    {
        ModelConfig c = llamaShaped(2, 2, 2);
        c.lnEpsilon = 0;
        c.qkNorm = QkNorm::Heads;
        const Tensor x = tensorOf({2, 1, 2}, {3, 4, 0, 2}); // head 0's row [3, 4], head 1's [0, 2]
        Tensor out;
        qkNormForward(out, x, tensorOf({2}, {1, 2}), c);
        const float a = 1.0f / std::sqrt(12.5f), b = 1.0f / std::sqrt(2.0f);
        const std::vector<float> heads = {3 * a, 8 * a, 0, 4 * b};
        QVERIFY(largestDifference(out, tensorOf({2, 1, 2}, heads)) < 1e-6);

        c.qkNorm = QkNorm::Projections; // one row [3, 4, 0, 2]: mean square 29/4
        qkNormForward(out, x, tensorOf({4}, {1, 1, 1, 2}), c);
        const float p = 1.0f / std::sqrt(29.0f / 4.0f);
        QVERIFY(largestDifference(out, tensorOf({2, 1, 2}, {3 * p, 4 * p, 0, 4 * p})) < 1e-6);

        std::mt19937 rng(5);
        for (const QkNorm kind : {QkNorm::Heads, QkNorm::Projections}) {
            ModelConfig g = llamaShaped(4, 2, 3);
            g.qkNorm = kind;
            Tensor keys = randomTensor({4, 3, 3}, rng); // the trace's 4 K heads: K/V heads 0, 0, 1, 1
            for (int64_t h : {1, 3}) // repeat_kv's copies
                keys.slice(h) = keys.slice(h - 1);
            Tensor gamma = randomTensor({kind == QkNorm::Heads ? 3 : 6}, rng, 0.5f);
            const Tensor r = randomTensor(keys.shape(), rng);
            Tensor dx(keys.shape()), dgamma(gamma.shape());
            Tensor y;
            qkNormForward(y, keys, gamma, g);
            qkNormBackward(dx, dgamma, r, keys, gamma, g);
            const Tensor numeric = numericGradient(gamma, r, [&] {
                Tensor o;
                qkNormForward(o, keys, gamma, g);
                return o;
            });
            QVERIFY2(largestDifference(dgamma, numeric) < 2e-3, qPrintable(QString::number(int(kind))));
            Tensor dxNumeric = numericGradient(keys, r, [&] {
                Tensor o;
                qkNormForward(o, keys, gamma, g);
                return o;
            });
            QVERIFY2(largestDifference(dx, dxNumeric) < 2e-3, qPrintable(QString::number(int(kind))));
        }
    }

    // A fused projection's columns: [Q K V] side by side, or GPT-NeoX's [q₀ k₀ v₀ q₁ k₁ v₁]; a K/V head shared by two
    // query heads hands each the same rows, and takes back the sum of their gradients.
    void theQkvSplitFindsEachHeadsColumns()
    {
        ModelConfig neox;
        neox.family = Family::GptNeoX;
        neox.heads = 2;
        neox.dModel = 4; // d = 2
        Tensor qkv({1, 12});
        for (int64_t i = 0; i < 12; ++i)
            qkv.data()[i] = float(i);
        QkvHeads heads = splitQkv(qkv, neox, true);
        QCOMPARE(heads.q.slice(1)(0, 0), 6.0f); // head 1's queries start at 3·d
        QCOMPARE(heads.k.slice(0)(0, 1), 3.0f);
        QCOMPARE(heads.v.slice(1)(0, 0), 10.0f);

        ModelConfig gqa = llamaShaped(4, 2, 1); // Q: columns 0–3, K: 4–5, V: 6–7
        Tensor packed({1, 8});
        for (int64_t i = 0; i < 8; ++i)
            packed.data()[i] = float(i);
        heads = splitQkv(packed, gqa, true);
        QCOMPARE(heads.q.slice(3)(0, 0), 3.0f);
        QCOMPARE(heads.k.slice(2)(0, 0), 5.0f); // query head 2 reads K/V head 1
        QCOMPARE(heads.v.slice(1)(0, 0), 6.0f);
        QCOMPARE(splitQkv(packed, gqa, false).k.dim(0), int64_t(2)); // the cache keeps the Hkv heads

        Tensor dq({4, 1, 1}), dk({4, 1, 1}), dv({4, 1, 1});
        for (int64_t h = 0; h < 4; ++h)
            dk.data()[h] = float(1 << h); // 1, 2, 4, 8
        const std::vector<Tensor> grads = qkvGradients(dq, dk, dv, gqa);
        QCOMPARE(grads.size(), size_t(3)); // q_proj, k_proj, v_proj
        QCOMPARE(valuesOf(grads[1]), (std::vector<float> {3, 12}));
    }

    // One head's own columns (circuit analysis feeds each head its own input): projectHead gives what projectQkv and
    // splitQkv give for that head, projectHeadBackward is its transpose, and the heads' writes plus the bias are the
    // output projection; in GPT-2's Conv1D layout, the Llama family's separate q/k/v with grouped K/V heads, GPT-NeoX's
    // interleaved fused projection and Phi-3's fused qkv_proj.
    void eachHeadsOwnColumnsAreItsShareOfTheProjections()
    {
        std::mt19937 rng(5);
        for (const char *name : {"gpt2_tiny", "llama_tiny", "neox_tiny", "phi3_tiny"}) {
            const Model model = Model::load(testing::dataPath(name).toStdString());
            const ModelConfig &c = model.config;
            const BlockWeights &b = model.blocks[0];
            const int64_t rows = 3, D = c.dModel, d = c.headDim();
            const Tensor x = randomTensor({rows, D}, rng);
            Tensor qkv({rows, qkvWidth(c)});
            projectQkv(qkv, x, c, b);
            const QkvHeads whole = splitQkv(qkv, c, false);
            const Tensor zeros({rows, D});
            for (int which = 0; which < 3; ++which) {
                const Tensor &heads = which == 0 ? whole.q : which == 1 ? whole.k : whole.v;
                for (int64_t h = 0; h < heads.dim(0); ++h) {
                    Tensor own({rows, d}), bias({rows, d});
                    projectHead(own, x, c, b, which, h);
                    QVERIFY2((own.matrix() - heads.slice(h)).cwiseAbs().maxCoeff() < 1e-5, name);
                    // (x W + b − b) · dy = x · (dy Wᵀ)
                    projectHead(bias, zeros, c, b, which, h);
                    const Tensor dy = randomTensor({rows, d}, rng);
                    Tensor dx({rows, D});
                    projectHeadBackward(dx, dy, c, b, which, h);
                    double forward = 0, backward = 0;
                    for (int64_t i = 0; i < own.numel(); ++i)
                        forward += double(own.data()[i] - bias.data()[i]) * dy.data()[i];
                    for (int64_t i = 0; i < x.numel(); ++i)
                        backward += double(x.data()[i]) * dx.data()[i];
                    QVERIFY2(std::abs(forward - backward) < 1e-4 * (1 + std::abs(forward)), name);
                }
            }
            const Tensor context = randomTensor({int64_t(c.heads), rows, d}, rng);
            Tensor merged({rows, c.innerDim()}), projected({rows, D}), sum({rows, D}), write({rows, D});
            for (int64_t h = 0; h < c.heads; ++h) {
                merged.matrix().middleCols(h * d, d) = context.slice(h);
                headWrite(write, context.slice(h), c, b, h);
                sum.matrix() += write.matrix();
            }
            const LinearModule out = blockModule(c, b, BlockPart::Out);
            moduleForward(projected, merged, out);
            if (!out.bias.empty())
                sum.matrix().rowwise() += ConstRowVectorMap(out.bias.data(), D);
            QVERIFY2(largestDifference(sum, projected) < 1e-5, name);
        }
    }

    // SwiGLU on one row: A = SiLU(x W_gateᵀ) ⊙ x W_upᵀ, then M = A W_downᵀ; chunked, every row as unchunked.
    void theFeedForwardGivesTheWorkedValuesInChunksToo()
    {
        ModelConfig c = llamaShaped(1, 1, 2);
        c.dFF = 2;
        BlockWeights b;
        b.weight(BlockPart::Gate) = tensorOf({2, 2}, {1, 0, 0, -1});
        b.weight(BlockPart::Up) = tensorOf({2, 2}, {1, 1, 0, 2});
        b.weight(BlockPart::Down) = tensorOf({2, 2}, {1, 0, 1, 1});
        const Tensor x = tensorOf({1, 2}, {1, 2});
        const FeedForwardActivations a = feedForwardActivations(c, b, x);
        const auto silu = [](float u) { return u / (1.0f + std::exp(-u)); };
        const float a0 = silu(1) * 3, a1 = silu(-2) * 4;
        QVERIFY(largestDifference(a.act, tensorOf({1, 2}, {a0, a1})) < 1e-6);
        Tensor m({1, 2});
        feedForwardDown(m, c, b, a.act);
        QVERIFY(largestDifference(m, tensorOf({1, 2}, {a0, a0 + a1})) < 1e-6);

        std::mt19937 rng(9);
        ModelConfig wide = llamaShaped(2, 2, 4);
        BlockWeights w;
        for (const BlockPart part : {BlockPart::Gate, BlockPart::Up})
            w.weight(part) = randomTensor({wide.dFF, wide.dModel}, rng);
        w.weight(BlockPart::Down) = randomTensor({wide.dModel, wide.dFF}, rng);
        const Tensor rows = randomTensor({7, wide.dModel}, rng);
        Tensor whole({7, wide.dModel}), chunked({7, wide.dModel});
        feedForwardDown(whole, wide, w, feedForwardActivations(wide, w, rows).act);
        feedForwardInChunks(chunked, rows, wide, w, 3);
        // to float32's rounding in any order: a product over 3 rows may take another kernel than one over 7
        const double largest = largestDifference(whole, Tensor(whole.shape())),
                     difference = largestDifference(whole, chunked);
        QVERIFY2(difference <= 1e-6 * largest, qPrintable(QString("%1 of %2").arg(difference).arg(largest)));
    }

    // Gemma 2's soft-cap c · tanh(s / c): near s for small scores, never past c, and its gradient 1 − tanh²(s / c).
    void theSoftCapGivesTheWorkedValuesAndItsGradient()
    {
        const Tensor s = tensorOf({1, 4}, {0.1f, 10, 50, -200});
        Tensor out({1, 4});
        ops::softcap_forward(out, s, 50);
        for (int i = 0; i < 4; ++i)
            QVERIFY(std::abs(out.data()[i] - 50.0f * std::tanh(s.data()[i] / 50.0f)) < 1e-4f);
        QVERIFY(std::abs(out.data()[0] - 0.1f) < 1e-5f && out.data()[3] > -50.0f);

        std::mt19937 rng(3);
        Tensor x = randomTensor({3, 5}, rng, 20.0f);
        const Tensor r = randomTensor(x.shape(), rng);
        Tensor y(x.shape()), dx(x.shape());
        ops::softcap_forward(y, x, 30);
        ops::softcap_backward(dx, r, y, 30);
        const Tensor numeric = numericGradient(x, r, [&] {
            Tensor o(x.shape());
            ops::softcap_forward(o, x, 30);
            return o;
        });
        QVERIFY(largestDifference(dx, numeric) < 2e-3);
    }

    // gpt-oss's sink: scores (0, ln 2) and a sink logit ln 3 share exp: 1, 2 and 3 of 6, so the row keeps 1/6 and 2/6
    // and the sink 1/2; a masked row gives the sink everything. The backward against central differences, for the
    // scores and the sink logits.
    void theSinkTakesItsShareAndItsGradient()
    {
        const float inf = std::numeric_limits<float>::infinity();
        const Tensor s = tensorOf({2, 1, 2}, {0.0f, std::log(2.0f), -inf, -inf});
        const Tensor sinks = tensorOf({2}, {std::log(3.0f), 0.5f});
        Tensor probs({2, 1, 2}), share({2, 1});
        ops::sink_softmax_forward(probs, share, s, sinks);
        QVERIFY(std::abs(probs.data()[0] - 1.0f / 6) < 1e-6f && std::abs(probs.data()[1] - 2.0f / 6) < 1e-6f);
        QVERIFY(std::abs(share.data()[0] - 0.5f) < 1e-6f);
        QCOMPARE(probs.data()[2], 0.0f);
        QCOMPARE(share.data()[1], 1.0f);

        std::mt19937 rng(5);
        Tensor x = randomTensor({2, 3, 4}, rng, 2.0f), z = randomTensor({2}, rng, 2.0f);
        const Tensor r = randomTensor(x.shape(), rng);
        Tensor y(x.shape()), shares({2, 3}), dx(x.shape()), dz({2});
        ops::sink_softmax_forward(y, shares, x, z);
        ops::sink_softmax_backward(dx, dz, r, y, shares);
        const auto forward = [&] {
            Tensor o(x.shape()), unused({2, 3});
            ops::sink_softmax_forward(o, unused, x, z);
            return o;
        };
        QVERIFY(largestDifference(dx, numericGradient(x, r, forward, 1e-3f)) < 1e-3);
        QVERIFY(largestDifference(dz, numericGradient(z, r, forward, 1e-3f)) < 1e-3);
    }

    // gpt-oss's clamped SwiGLU at l = 1: the gate 2 is held at 1 and up −3 at −1, so the unit is
    // QuickGELU(1) · (−1 + 1) = 0; gate 0.5 and up 0.25 pass, giving 0.5 σ(0.851) · 1.25. Its backward against central
    // differences away from the clamps' corners, and no gradient through a clamp that holds.
    void theClampedGatedUnitGivesTheWorkedValuesAndItsGradients()
    {
        const Tensor gate = tensorOf({1, 2}, {2.0f, 0.5f}), up = tensorOf({1, 2}, {-3.0f, 0.25f});
        Tensor out({1, 2});
        ops::gated_activation_forward(out, gate, up, Activation::QuickGelu, 1.0f);
        QCOMPARE(out.data()[0], 0.0f);
        const float expected = 0.5f / (1.0f + std::exp(-1.702f * 0.5f)) * 1.25f;
        QVERIFY(std::abs(out.data()[1] - expected) < 1e-6f);

        std::mt19937 rng(8);
        Tensor g = randomTensor({4, 6}, rng, 1.5f), u = randomTensor({4, 6}, rng, 1.5f);
        for (Tensor *t : {&g, &u}) // keep every value 0.05 away from the clamps, where the slope jumps
            for (float &v : t->values())
                if (std::abs(std::abs(v) - 1.0f) < 0.05f)
                    v += 0.1f;
        const Tensor r = randomTensor(g.shape(), rng);
        Tensor dg(g.shape()), du(g.shape());
        ops::gated_activation_backward(dg, du, r, g, u, Activation::QuickGelu, 1.0f);
        const auto forward = [&] {
            Tensor o(g.shape());
            ops::gated_activation_forward(o, g, u, Activation::QuickGelu, 1.0f);
            return o;
        };
        QVERIFY(largestDifference(dg, numericGradient(g, r, forward, 1e-3f)) < 2e-3);
        QVERIFY(largestDifference(du, numericGradient(u, r, forward, 1e-3f)) < 2e-3);
        bool held = false;
        for (int64_t i = 0; i < g.numel(); ++i)
            if (g.data()[i] > 1.0f) {
                QCOMPARE(dg.data()[i], 0.0f);
                held = true;
            }
        QVERIFY(held);
    }
};

QTEST_APPLESS_MAIN(TestBlockComponents)
#include "tst_blockcomponents.moc"
