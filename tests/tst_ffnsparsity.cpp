// Sparse is Enough's sparse feed-forward layer with an oracle controller (analysis/ffnsparsity.h): one neuron kept
// per block, the one of largest |activation|; the error it makes, recomputed here from the trace and the weights.
#include "analysis/ffnsparsity.h"
#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "testbundle.h"
#include "trace/names.h"
#include "util/error.h"

#include <QTest>

#include <cmath>

using namespace atlas;

class TestFfnSparsity : public QObject
{
    Q_OBJECT

    static std::shared_ptr<const Trace> run(const std::shared_ptr<const Model> &model, const std::vector<int> &tokens)
    {
        Engine engine(model, Input {tokens, {}});
        engine.runToEnd();
        return std::make_shared<const Trace>(engine.trace());
    }

private slots:
    void keepsTheLargestNeuronOfEachBlock()
    {
        const auto model = loadModel("tiny-bytes");
        const auto trace = run(model, {72, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100});
        const int layer = 1, n = 8;
        const FfnSparsity s = ffnSparsity(*model, *trace, layer, n);
        const Tensor &act = trace->tensor(names::layerTensor(layer, "mlp.act"));
        QCOMPARE(s.neurons, int(act.dim(1)));
        for (int64_t t = 0; t < act.dim(0); ++t)
            for (int64_t begin = 0; begin < act.dim(1); begin += n) {
                int kept = 0;
                float largest = 0;
                for (int64_t f = begin; f < begin + n; ++f)
                    largest = std::max(largest, std::fabs(act.matrix()(t, f)));
                for (int64_t f = begin; f < begin + n; ++f)
                    if (s.sparse.matrix()(t, f) != 0) {
                        ++kept;
                        QCOMPARE(s.sparse.matrix()(t, f), act.matrix()(t, f));
                        QCOMPARE(std::fabs(act.matrix()(t, f)), largest);
                    }
                QCOMPARE(kept, 1);
            }
        // ‖(A − A_sparse) W_proj‖ / ‖A W_proj + b_proj‖, from the trace's own M.
        const MatrixRM diff
            = (act.matrix() - s.sparse.matrix()) * model->blocks[layer].weight(BlockPart::Down).matrix().transpose();
        const double want
            = double(diff.norm()) / double(trace->tensor(names::layerTensor(layer, "mlp.down")).matrix().norm());
        QVERIFY2(std::fabs(s.error - want) <= 1e-5 * want, qPrintable(QString("%1 vs %2").arg(s.error).arg(want)));
        QVERIFY(s.error > 0 && s.error < 1.5);
        for (size_t i = 1; i < s.topError.size(); ++i) // keeping more of the largest never hurts
            QVERIFY(s.topError[i] <= s.topError[i - 1] + 1e-9);
        QCOMPARE(s.topKept.back(), s.neurons);
        QVERIFY(s.topError.back() < 1e-6); // every neuron: the dense layer itself
    }

    void aBlockOfOneIsTheDenseLayer()
    {
        const auto model = loadModel("tiny-bytes");
        const auto trace = run(model, {72, 105, 33});
        const FfnSparsity s = ffnSparsity(*model, *trace, 0, 1);
        QVERIFY(s.error < 1e-6);
        const Tensor &act = trace->tensor(names::layerTensor(0, "mlp.act"));
        QVERIFY(std::equal(act.data(), act.data() + act.numel(), s.sparse.data()));
    }

    void refusesLayersWithoutDenseActivations()
    {
        const auto model = loadModel("austen-switch");
        const auto trace = run(model, {72, 105});
        QVERIFY(ffnSparsityProblem(model->config, *trace, 0).find("mixture of experts") != std::string::npos);
        QVERIFY_THROWS_EXCEPTION(Error, ffnSparsity(*model, *trace, 0, 4));
        const auto dense = loadModel("tiny-bytes");
        QVERIFY(ffnSparsityProblem(dense->config, Trace(), 0).find("not computed yet") != std::string::npos);
        QVERIFY_THROWS_EXCEPTION(Error, ffnSparsity(*dense, *run(dense, {1, 2}), 0, 100000));
    }
};

QTEST_GUILESS_MAIN(TestFfnSparsity)
#include "tst_ffnsparsity.moc"
