// AdamW, gradient clipping and the learning-rate schedule (src/core/train/adamw.h) against
// torch.optim.AdamW + torch.nn.utils.clip_grad_norm_ + the same warm-up/cosine schedule, step by step
// (tests/tools/make_grad_reference.py wrote tests/data/adamw_ref).

#include "io/npy.h"
#include "testbundle.h"
#include "train/adamw.h"
#include "util/error.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>

using namespace atlas;

namespace {

QString adamwRefPath(const QString &file)
{
    return QStringLiteral(ATLAS_TEST_DATA "/adamw_ref/") + file;
}

Tensor loadAdamw(const QString &file)
{
    return readNpy(adamwRefPath(file).toStdString());
}

double maxAbsDiff(const Tensor &a, const Tensor &b)
{
    double m = 0.0;
    for (int64_t i = 0; i < a.numel(); ++i)
        m = std::max(m, std::fabs(double(a.data()[i]) - double(b.data()[i])));
    return m;
}

} // namespace

class TestAdamW : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void scheduleMatches();
    void stepsMatchPyTorch();
    void clippingLeavesSmallGradientsAlone();
    void decayOnlyOnMatrices();
    void mismatchedGradientIsAnError();

private:
    QJsonObject m_steps;
    LearningRateSchedule m_schedule;
};

void TestAdamW::initTestCase()
{
    QFile f(adamwRefPath("steps.json"));
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
    m_steps = QJsonDocument::fromJson(f.readAll()).object();
    const QJsonObject s = m_steps["schedule"].toObject();
    m_schedule = {float(s["peak"].toDouble()), float(s["floor"].toDouble()), s["warmup"].toInt(), s["total"].toInt()};
}

void TestAdamW::scheduleMatches()
{
    const QJsonArray lr = m_steps["lr"].toArray();
    QVERIFY(lr.size() >= 6);
    for (int step = 0; step < lr.size(); ++step)
        QVERIFY2(std::fabs(m_schedule.at(step) - lr[step].toDouble()) < 1e-7,
            qPrintable(
                QString("step %1: %2, torch side %3").arg(step).arg(m_schedule.at(step)).arg(lr[step].toDouble())));
    QCOMPARE(m_schedule.at(0), m_schedule.peak / m_schedule.warmupSteps); // warm-up starts low
    QCOMPARE(m_schedule.at(m_schedule.warmupSteps), m_schedule.peak);
    QCOMPARE(m_schedule.at(1000), m_schedule.floor);
}

void TestAdamW::stepsMatchPyTorch()
{
    const QJsonObject o = m_steps["options"].toObject();
    AdamWOptions options;
    options.beta1 = float(o["betas"].toArray()[0].toDouble());
    options.beta2 = float(o["betas"].toArray()[1].toDouble());
    options.eps = float(o["eps"].toDouble());
    options.weightDecay = float(o["weight_decay"].toDouble());
    options.maxGradNorm = float(o["max_norm"].toDouble());
    AdamW adamw(options);

    std::map<std::string, Tensor> params;
    for (const QJsonValue &n : m_steps["names"].toArray())
        params[n.toString().toStdString()] = loadAdamw("init." + n.toString() + ".npy");
    std::map<std::string, Tensor *> pointers;
    for (auto &[name, t] : params)
        pointers[name] = &t;

    const QJsonArray lr = m_steps["lr"].toArray(), norms = m_steps["norm"].toArray();
    int clipped = 0;
    for (int step = 0; step < lr.size(); ++step) {
        std::map<std::string, Tensor> grads;
        for (const auto &[name, t] : params)
            grads[name] = loadAdamw(QString("grad.%1.%2.npy").arg(step).arg(QString::fromStdString(name)));
        const float norm = adamw.step(pointers, grads, m_schedule.at(step));
        QVERIFY(std::fabs(norm - norms[step].toDouble()) < 1e-5 * norms[step].toDouble());
        clipped += norm > options.maxGradNorm;
        for (const auto &[name, t] : params) {
            const QString file = QString("param.%1.%2.npy").arg(step).arg(QString::fromStdString(name));
            const double diff = maxAbsDiff(t, loadAdamw(file));
            QVERIFY2(diff < 2e-6, qPrintable(QString("%1: max |diff| %2").arg(file).arg(diff)));
        }
    }
    QCOMPARE(adamw.stepCount(), int(lr.size()));
    QVERIFY(clipped > 0 && clipped < lr.size()); // the fixture exercises both branches of the clipping
}

void TestAdamW::clippingLeavesSmallGradientsAlone()
{
    std::map<std::string, Tensor> grads = {{"a", Tensor({2}, 0.3f)}, {"b", Tensor({1}, 0.4f)}};
    QCOMPARE(clipGradientNorm(grads, 1.0f), std::sqrt(0.3f * 0.3f * 2 + 0.16f));
    QCOMPARE(grads["a"].data()[0], 0.3f);
    grads = {{"a", Tensor({1}, 3.0f)}, {"b", Tensor({1}, 4.0f)}};
    QCOMPARE(clipGradientNorm(grads, 1.0f), 5.0f);
    QVERIFY(std::fabs(grads["a"].data()[0] - 0.6f) < 1e-6f && std::fabs(grads["b"].data()[0] - 0.8f) < 1e-6f);
}

// With a zero gradient Adam's update is 0, so only the decoupled decay moves a parameter: p ← p (1 − lr λ).
void TestAdamW::decayOnlyOnMatrices()
{
    AdamWOptions options;
    options.weightDecay = 0.5f;
    AdamW adamw(options);
    Tensor matrix({2, 2}, 1.0f), bias({2}, 1.0f);
    std::map<std::string, Tensor> grads = {{"w", Tensor({2, 2})}, {"b", Tensor({2})}};
    adamw.step({{"w", &matrix}, {"b", &bias}}, grads, 0.1f);
    QCOMPARE(matrix.data()[0], 0.95f);
    QCOMPARE(bias.data()[0], 1.0f); // biases and LayerNorm weights (rank 1) are not decayed
}

void TestAdamW::mismatchedGradientIsAnError()
{
    AdamW adamw;
    Tensor p({3});
    std::map<std::string, Tensor> grads = {{"p", Tensor({4})}};
    try {
        adamw.step({{"p", &p}}, grads, 0.1f);
        QFAIL("a gradient of the wrong shape was accepted");
    } catch (const Error &e) {
        QVERIFY2(QString(e.what()).contains("'p'"), e.what());
    }
}

QTEST_GUILESS_MAIN(TestAdamW)
#include "tst_adamw.moc"
