// Training is deterministic for a seed, resumes exactly from a checkpoint, learns, and refuses torn checkpoints.
#include "io/safetensors.h"
#include "train/trainer.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstring>

using namespace atlas;

class TestTrainer : public QObject
{
    Q_OBJECT

    static std::unique_ptr<Trainer> make(int steps)
    {
        const auto task = Task::create("reverse");
        TrainOptions o;
        o.steps = steps;
        o.batch = 8;
        o.warmupSteps = 5;
        return std::make_unique<Trainer>(std::make_shared<Model>(Model::random(task->modelConfig(), 7)), "reverse", o);
    }

    static bool sameWeights(const Model &a, const Model &b)
    {
        for (const auto &[name, t] : a.parameters())
            if (std::memcmp(t->data(), b.parameters().at(name)->data(), t->bytes()) != 0)
                return false;
        return true;
    }

private slots:
    void sameSeedSameBits()
    {
        auto a = make(12), b = make(12);
        for (int i = 0; i < 12; ++i)
            QCOMPARE(a->step().loss, b->step().loss);
        QVERIFY(sameWeights(*a->model(), *b->model()));
    }

    void resumeContinuesExactly()
    {
        QTemporaryDir dir;
        auto straight = make(12), first = make(12);
        for (int i = 0; i < 12; ++i)
            straight->step();
        for (int i = 0; i < 5; ++i)
            first->step();
        first->save(dir.path().toStdString());
        auto resumed = Trainer::resume(dir.path().toStdString());
        QCOMPARE(resumed->stepCount(), 5);
        while (resumed->stepCount() < 12)
            resumed->step();
        QVERIFY(sameWeights(*straight->model(), *resumed->model()));
        QVERIFY(Model::load(dir.path().toStdString()).parameterCount() > 0); // a model directory the app opens
    }

    void lossFallsAndHeldOutImproves()
    {
        auto t = make(150);
        const float before = t->evaluate(64).loss;
        float firstLoss = t->step().loss, lastLoss = 0;
        while (t->stepCount() < 150)
            lastLoss = t->step().loss;
        QVERIFY(lastLoss < firstLoss * 0.6f);
        QVERIFY(t->evaluate(64).loss < before * 0.6f);
    }

    void tornCheckpointIsRefused()
    {
        QTemporaryDir dir;
        auto t = make(12);
        t->step();
        t->save(dir.path().toStdString());
        t->step();
        // Overwrite only the model, as a save interrupted after its first file would leave it.
        t->model()->save(dir.path().toStdString(), {{"step", "2"}});
        try {
            Trainer::resume(dir.path().toStdString());
            QFAIL("a torn checkpoint was accepted");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("another step"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestTrainer)
#include "tst_trainer.moc"
