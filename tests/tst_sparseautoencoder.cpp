// Sparse autoencoders (features/sparseautoencoder.h): encoding and decoding against NumPy for each architecture
// (TopK's tie at the k-th value to the lower index, JumpReLU's threshold, with and without b_dec subtracted from the
// input), the training objective and its gradients against PyTorch's autograd (JumpReLU's straight-through estimator
// included) and TopK's auxiliary loss for dead features (AuxK), a fresh dictionary's shape, the quality measures on a
// dictionary that reconstructs exactly, and the refusals of wrong shapes.
#include "errortesting.h"
#include "features/sparseautoencoder.h"
#include "tensortesting.h"
#include "testbundle.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace atlas;
using namespace atlas::testing;

namespace {

Tensor saeTensor(const QJsonValue &v)
{
    const QJsonArray a = v.toArray();
    if (!a.isEmpty() && a[0].isArray()) {
        const int64_t rows = a.size(), cols = a[0].toArray().size();
        Tensor t({rows, cols});
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c)
                t.data()[r * cols + c] = float(a[int(r)].toArray()[int(c)].toDouble());
        return t;
    }
    Tensor t({int64_t(a.size())});
    for (int i = 0; i < a.size(); ++i)
        t.data()[i] = float(a[i].toDouble());
    return t;
}

SparseAutoencoder saeOf(const QJsonObject &c)
{
    SparseAutoencoder sae;
    sae.architecture = saeArchitectureFromName(c["architecture"].toString().toStdString());
    sae.k = c["k"].toInt();
    sae.applyDecoderBiasToInput = c["apply_b_dec_to_input"].toBool();
    const QJsonObject w = c["weights"].toObject();
    sae.wEnc = saeTensor(w["W_enc"]);
    sae.bEnc = saeTensor(w["b_enc"]);
    sae.wDec = saeTensor(w["W_dec"]);
    sae.bDec = saeTensor(w["b_dec"]);
    if (w.contains("threshold"))
        sae.threshold = saeTensor(w["threshold"]);
    sae.validate("reference");
    return sae;
}

QString saeMismatch(const Tensor &got, const Tensor &want, double tolerance)
{
    if (got.shape() != want.shape())
        return QString("shape %1, want %2").arg(got.shapeString().c_str(), want.shapeString().c_str());
    for (int64_t i = 0; i < got.numel(); ++i) {
        const double g = got.data()[i], w = want.data()[i];
        if (std::abs(g - w) > tolerance * (1 + std::abs(w)))
            return QString("element %1: %2, want %3").arg(i).arg(g).arg(w);
    }
    return {};
}

// A tensor of the given shape holding `values`.
Tensor saeMatrix(Shape shape, std::vector<float> values)
{
    Tensor t(shape);
    std::copy(values.begin(), values.end(), t.data());
    return t;
}

QJsonArray saeCases()
{
    QFile f(dataPath("sae/reference.json"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object()["cases"].toArray();
}

} // namespace

class TestSparseAutoencoder : public QObject
{
    Q_OBJECT

private slots:
    void encodesAndDecodesAsNumPy_data()
    {
        QTest::addColumn<int>("index");
        const QJsonArray cases = saeCases();
        QVERIFY(cases.size() == 5);
        for (int i = 0; i < cases.size(); ++i) {
            const QJsonObject c = cases[i].toObject();
            const QString name
                = c["architecture"].toString() + (c["apply_b_dec_to_input"].toBool() ? " (x − b_dec)" : " (x)");
            QTest::newRow(qPrintable(name)) << i;
        }
    }

    void encodesAndDecodesAsNumPy()
    {
        QFETCH(int, index);
        const QJsonObject c = saeCases()[index].toObject();
        const SparseAutoencoder sae = saeOf(c);
        const Tensor x = saeTensor(c["x"]);
        const Tensor pre = sae.preActivations(x), f = sae.activate(pre);
        QString why = saeMismatch(pre, saeTensor(c["pre"]), 1e-5);
        QVERIFY2(why.isEmpty(), qPrintable("pre: " + why));
        why = saeMismatch(f, saeTensor(c["f"]), 1e-5);
        QVERIFY2(why.isEmpty(), qPrintable("f: " + why));
        why = saeMismatch(sae.decode(f), saeTensor(c["x_hat"]), 1e-5);
        QVERIFY2(why.isEmpty(), qPrintable("x̂: " + why));
        if (sae.architecture == SaeArchitecture::TopK) { // row 0's pre is b_enc: 0.9, 0.6, then 0.4 at 7 and at 8
            QCOMPARE(f.data()[7], 0.4f);
            QCOMPARE(f.data()[8], 0.0f);
        }
    }

    void theObjectiveAndItsGradientsAreAutogradsOnes_data() { encodesAndDecodesAsNumPy_data(); }

    void theObjectiveAndItsGradientsAreAutogradsOnes()
    {
        QFETCH(int, index);
        const QJsonObject c = saeCases()[index].toObject();
        const SparseAutoencoder sae = saeOf(c);
        SaeObjective objective;
        objective.sparsity = c["lambda"].toDouble();
        objective.bandwidth = c["bandwidth"].toDouble();
        const SaeBatchResult got = saeBatch(sae, saeTensor(c["x"]), objective);
        QVERIFY(std::abs(got.loss - c["loss"].toDouble()) < 1e-4 * (1 + std::abs(c["loss"].toDouble())));
        QVERIFY(std::abs(got.reconstruction - c["reconstruction"].toDouble())
            < 1e-4 * (1 + c["reconstruction"].toDouble()));
        QVERIFY(std::abs(got.sparsity - (c["loss"].toDouble() - c["reconstruction"].toDouble()))
            < 1e-4 * (1 + std::abs(c["loss"].toDouble())));
        const QJsonObject want = c["gradients"].toObject();
        QCOMPARE(int(got.gradients.size()), int(want.size()));
        for (const QString &name : want.keys()) {
            const auto it = got.gradients.find(name.toStdString());
            QVERIFY2(it != got.gradients.end(), qPrintable(name));
            const QString why = saeMismatch(it->second, saeTensor(want[name]), 2e-4);
            QVERIFY2(why.isEmpty(), qPrintable(name + ": " + why));
        }
    }

    // AuxK on TopK's case: the dead features' k_aux strongest pre-activations explain what the live ones miss, with
    // more dead features than k_aux and with fewer (its factor n_dead / k_aux), against autograd.
    void auxKIsAutogradsOnes_data()
    {
        QTest::addColumn<int>("index");
        QTest::newRow("five dead, k_aux 3") << 0;
        QTest::newRow("two dead, k_aux 3") << 1;
    }

    void auxKIsAutogradsOnes()
    {
        QFETCH(int, index);
        QFile file(dataPath("sae/reference.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject reference = QJsonDocument::fromJson(file.readAll()).object();
        const QJsonObject c = reference["auxk"].toArray()[index].toObject();
        const QJsonObject base = reference["cases"].toArray()[c["case"].toInt()].toObject();
        const SparseAutoencoder sae = saeOf(base);
        SaeObjective objective;
        objective.auxiliary = c["alpha"].toDouble();
        objective.auxiliaryK = c["k_aux"].toInt();
        std::vector<bool> dead(size_t(sae.width()), false);
        for (const QJsonValue i : c["dead"].toArray())
            dead[size_t(i.toInt())] = true;
        const SaeBatchResult got = saeBatch(sae, saeTensor(base["x"]), objective, dead);
        QVERIFY2(got.auxiliary > 0.1, "the auxiliary loss is there");
        QVERIFY(std::abs(got.auxiliary - c["auxiliary"].toDouble()) < 1e-4 * (1 + c["auxiliary"].toDouble()));
        QVERIFY(std::abs(got.loss - c["loss"].toDouble()) < 1e-4 * (1 + c["loss"].toDouble()));
        const QJsonObject want = c["gradients"].toObject();
        for (const QString &name : want.keys()) {
            const QString why = saeMismatch(got.gradients.at(name.toStdString()), saeTensor(want[name]), 2e-4);
            QVERIFY2(why.isEmpty(), qPrintable(name + ": " + why));
        }
        // No dead feature, or α = 0: the objective without it.
        const SaeBatchResult none = saeBatch(sae, saeTensor(base["x"]), objective);
        QCOMPARE(none.auxiliary, 0.0);
        QVERIFY(std::abs(none.loss - base["loss"].toDouble()) < 1e-4 * (1 + base["loss"].toDouble()));
        QVERIFY(std::count(none.fired.begin(), none.fired.end(), true) >= sae.k);
        // A mask of the wrong length is refused.
        const QString refused
            = errorFrom([&] { saeBatch(sae, saeTensor(base["x"]), objective, std::vector<bool>(3, true)); });
        QVERIFY2(refused.contains("3 dead features for a dictionary of 10"), qPrintable(refused));
    }

    // A transcoder's objective: the rows it predicts, y, in place of the rows it reads in the reconstruction, against
    // autograd, for ReLU with its L1 penalty and for JumpReLU.
    void aTranscodersObjectiveIsAutogradsOne_data()
    {
        QTest::addColumn<int>("index");
        QTest::newRow("ReLU") << 0;
        QTest::newRow("JumpReLU") << 1;
    }

    void aTranscodersObjectiveIsAutogradsOne()
    {
        QFETCH(int, index);
        QFile file(dataPath("sae/reference.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject reference = QJsonDocument::fromJson(file.readAll()).object();
        const QJsonObject c = reference["transcoders"].toArray()[index].toObject();
        const QJsonObject base = reference["cases"].toArray()[c["case"].toInt()].toObject();
        const SparseAutoencoder sae = saeOf(base);
        QVERIFY(!sae.applyDecoderBiasToInput);
        SaeObjective objective;
        objective.sparsity = base["lambda"].toDouble();
        objective.bandwidth = base["bandwidth"].toDouble();
        const Tensor y = saeTensor(c["y"]);
        const SaeBatchResult got = saeBatch(sae, saeTensor(base["x"]), objective, {}, &y);
        QVERIFY(std::abs(got.loss - c["loss"].toDouble()) < 1e-4 * (1 + std::abs(c["loss"].toDouble())));
        QVERIFY(std::abs(got.reconstruction - c["reconstruction"].toDouble())
            < 1e-4 * (1 + c["reconstruction"].toDouble()));
        QVERIFY(std::abs(got.reconstruction - base["reconstruction"].toDouble()) > 0.1); // not x's
        const QJsonObject want = c["gradients"].toObject();
        QCOMPARE(int(got.gradients.size()), int(want.size()));
        for (const QString &name : want.keys()) {
            const QString why = saeMismatch(got.gradients.at(name.toStdString()), saeTensor(want[name]), 2e-4);
            QVERIFY2(why.isEmpty(), qPrintable(name + ": " + why));
        }
        const Tensor wrong({3, 6});
        QVERIFY(errorFrom([&] { saeBatch(sae, saeTensor(base["x"]), objective, {}, &wrong); }).contains("predict"));
    }

    // A fresh dictionary: its shapes, decoder rows of length 0.1, the encoder their transpose, the same for a seed.
    void aFreshDictionaryIsDrawnAsDefined()
    {
        const SparseAutoencoder a = initialSparseAutoencoder(SaeArchitecture::JumpRelu, 8, 32, 0, 5);
        QCOMPARE(a.inputSize(), int64_t(8));
        QCOMPARE(a.width(), int64_t(32));
        for (int64_t i = 0; i < 32; ++i)
            QVERIFY(std::abs(a.wDec.matrix().row(i).norm() - 0.1f) < 1e-6f);
        QVERIFY(a.wEnc.matrix().isApprox(a.wDec.matrix().transpose()));
        QCOMPARE(a.threshold.data()[3], 0.001f);
        const SparseAutoencoder b = initialSparseAutoencoder(SaeArchitecture::JumpRelu, 8, 32, 0, 5);
        QVERIFY(a.wDec.matrix() == b.wDec.matrix());
        QVERIFY(initialSparseAutoencoder(SaeArchitecture::Standard, 8, 32, 0, 6).wDec.matrix() != a.wDec.matrix());
    }

    // A dictionary whose decoder inverts its encoder on the data's span reconstructs it exactly: nothing unexplained,
    // every feature active on the rows that use it.
    void anExactDictionaryLeavesNothingUnexplained()
    {
        SparseAutoencoder sae;
        sae.wEnc = saeMatrix({2, 4}, {1, -1, 0, 0, 0, 0, 1, -1}); // features: x₀⁺, x₀⁻, x₁⁺, x₁⁻
        sae.bEnc = Tensor({4});
        sae.wDec = saeMatrix({4, 2}, {1, 0, -1, 0, 0, 1, 0, -1});
        sae.bDec = Tensor({2});
        sae.applyDecoderBiasToInput = false;
        const Tensor x = saeMatrix({4, 2}, {1, 2, -3, 0.5f, 0, -1, 2, 0});
        const SaeQuality q = saeQuality(sae, x);
        QVERIFY(q.unexplained < 1e-12);
        QCOMPARE(q.l0, 6.0 / 4);
        QCOMPARE(q.density, (std::vector<double> {0.5, 0.25, 0.5, 0.25}));
        QCOMPARE(q.dead, 0);
        QCOMPARE(q.dense, 4);
    }

    void wrongShapesAreRefusedByName()
    {
        SparseAutoencoder sae = initialSparseAutoencoder(SaeArchitecture::TopK, 4, 8, 2, 1);
        sae.bDec = Tensor({5});
        QVERIFY(errorFrom([&] { sae.validate("sae.safetensors"); }).contains("b_dec is [5]"));
        sae.bDec = Tensor({4});
        sae.k = 9;
        QVERIFY(errorFrom([&] { sae.validate("sae.safetensors"); }).contains("k = 9 for 8 features"));
        sae.k = 2;
        QVERIFY(errorFrom([&] { (void)sae.encode(Tensor({3, 5})); }).contains("over 4 dimensions"));
        QVERIFY(errorFrom([] { (void)saeArchitectureFromName("gated"); }).contains("standard, topk or jumprelu"));
        SparseAutoencoder jump = initialSparseAutoencoder(SaeArchitecture::JumpRelu, 4, 8, 0, 1);
        jump.threshold.data()[2] = -1;
        QVERIFY(errorFrom([&] { jump.validate("params.npz"); }).contains("threshold[2]"));
    }
};

QTEST_GUILESS_MAIN(TestSparseAutoencoder)
#include "tst_sparseautoencoder.moc"
