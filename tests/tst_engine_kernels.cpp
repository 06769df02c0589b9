// Efficient attention kernels inside the engine: selectable per layer, run on the same Q, K, V as full
// attention, and traced with their effective weights and mask.
#include "engine/engine.h"
#include "engine/inputbuilder.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace atlas;

class TestEngineKernels : public QObject
{
    Q_OBJECT

    std::shared_ptr<const Model> m_model = std::make_shared<Model>(Model::load(ATLAS_TEST_DATA "/gpt2_tiny"));
    const std::vector<int> m_tokens = {3, 17, 42, 8, 0, 25, 49, 11};

    static double maxDiff(const Tensor &a, const Tensor &b)
    {
        double m = 0;
        for (int64_t i = 0; i < a.numel(); ++i)
            m = std::max(m, double(std::abs(a.data()[i] - b.data()[i])));
        return m;
    }

    Tensor run(std::vector<attention::AttentionKernelSpec> kernels, Trace *trace = nullptr)
    {
        Engine e(m_model, {m_tokens, {}, std::move(kernels)});
        e.runToEnd();
        if (trace)
            *trace = e.trace();
        return e.trace().tensor("logits");
    }

private slots:
    void windowAsWideAsTheSequenceIsFullAttention()
    {
        const Tensor full = run({});
        const Tensor wide = run({attention::parseAttentionKernelSpec("longformer", {"window=64"})});
        QVERIFY2(maxDiff(full, wide) < 1e-5, qPrintable(QString::number(maxDiff(full, wide))));
    }

    void narrowWindowChangesTheOutputAndRespectsItsMask()
    {
        Trace trace;
        const Tensor narrow = run({attention::parseAttentionKernelSpec("longformer", {"window=2"})}, &trace);
        QVERIFY(maxDiff(run({}), narrow) > 1e-3);
        const Tensor &mask = trace.tensor("layer.0.attn.mask"), &probs = trace.tensor("layer.0.attn.probs");
        QCOMPARE(mask.shape(), (Shape {4, 8, 8}));
        for (int64_t i = 0; i < mask.numel(); ++i)
            if (mask.data()[i] == 0.0f)
                QCOMPARE(probs.data()[i], 0.0f);
        for (int h = 0; h < 4; ++h)
            for (int q = 0; q < 8; ++q)
                for (int k = q + 1; k < 8; ++k) // the model is causal: nothing from the future
                    QCOMPARE(mask.data()[(h * 8 + q) * 8 + k], 0.0f);
        QVERIFY(!trace.contains("layer.0.attn.scores")); // the sparse kernel never forms the full score matrix
    }

    void perLayerChoiceAndLshExtras()
    {
        Trace trace;
        run({attention::parseAttentionKernelSpec("full", {}),
                attention::parseAttentionKernelSpec("lsh", {"rounds=2", "buckets=4", "chunk=4"})},
            &trace);
        QVERIFY(trace.contains("layer.0.attn.scores"));
        QVERIFY(!trace.contains("layer.1.attn.scores"));
        QCOMPARE(trace.tensor("layer.1.lsh.buckets").shape(), (Shape {4, 2, 8}));
        const Tensor &rotations = trace.tensor("layer.1.lsh.rotations");
        QCOMPARE(rotations.shape(), (Shape {4, 2, 8, 2}));
        const int64_t perHead = rotations.numel() / 4; // each head draws its own rotations
        QVERIFY(!std::equal(rotations.data(), rotations.data() + perHead, rotations.data() + perHead));
    }

    // attentionPerLayer (what `dump --attention-layers` and the spec's "attention_layers" use): the kernel in the
    // listed layers only.
    void kernelInListedLayersOnly()
    {
        const auto spec = attention::parseAttentionKernelSpec("longformer", {"window=2"});
        QCOMPARE(attentionPerLayer(spec, {}, 2).size(), size_t(1)); // every layer
        QVERIFY(attentionPerLayer(attention::parseAttentionKernelSpec("full", {}), {1}, 2).empty());
        Trace trace;
        const Tensor second = run(attentionPerLayer(spec, {1}, 2), &trace);
        QVERIFY(trace.contains("layer.0.attn.scores"));
        QVERIFY(!trace.contains("layer.1.attn.scores"));
        QCOMPARE(trace.tensor("layer.1.attn.mask").data()[7 * 8 + 0], 0.0f); // query 7 no longer sees key 0
        QVERIFY(maxDiff(second, run({})) > 1e-4);
        QVERIFY(maxDiff(second, run({spec})) > 1e-4);
        QVERIFY_THROWS_EXCEPTION(Error, attentionPerLayer(spec, {2}, 2));
        QVERIFY_THROWS_EXCEPTION(Error, attentionPerLayer(spec, {1, 1}, 2));
    }

    // Swin alternates its windows between layers (Liu et al. 2021, Fig. 2): layer 0 regular, layer 1 shifted.
    void swinShiftsEveryOtherLayer()
    {
        Trace trace;
        run({attention::parseAttentionKernelSpec("swin", {"window=4", "shift=2"})}, &trace);
        const Tensor &regular = trace.tensor("layer.0.attn.mask"), &shifted = trace.tensor("layer.1.attn.mask");
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j <= i; ++j) {
                QCOMPARE(regular.data()[i * 8 + j], i / 4 == j / 4 ? 1.0f : 0.0f);
                QCOMPARE(shifted.data()[i * 8 + j], (i + 2) / 4 == (j + 2) / 4 ? 1.0f : 0.0f);
            }
    }

    void badKernelRequestsAreErrors()
    {
        QVERIFY_THROWS_EXCEPTION(Error, attention::parseAttentionKernelSpec("lsh", {"roundz=2"}));
        QVERIFY_THROWS_EXCEPTION(Error, run({attention::parseAttentionKernelSpec("linformer", {"k=4"})})); // causal
        std::vector<attention::AttentionKernelSpec> three(3); // the model has 2 layers
        QVERIFY_THROWS_EXCEPTION(Error, run(three));
    }
};

QTEST_GUILESS_MAIN(TestEngineKernels)
#include "tst_engine_kernels.moc"
