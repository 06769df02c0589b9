// Training is deterministic for a seed, resumes exactly from a checkpoint, learns, and refuses torn checkpoints.
#include "io/atomicfile.h"
#include "io/safetensors.h"
#include "train/checkpointdirectory.h"
#include "train/trainer.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <filesystem>

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
    // Key–value retrieval (lost in the middle): ten distinct keys with three digits each, the asked key last, the
    // answer its value; targets only on the answer; each pair asked in turn; held-out questions never trained on.
    void retrievalAsksThePairItIsTold()
    {
        std::mt19937_64 rng(3);
        for (int position = 0; position < kRetrievalPairs; ++position) {
            const Example e = retrievalExample(rng, true, position);
            const std::string text(e.tokens.begin(), e.tokens.end());
            QCOMPARE(int(text.size()), 10 * 8 - 1 + 2 + 3 + 1 + 3); // the pairs, " ?", the key, ">", the value
            const std::string pairs = text.substr(0, 79), key = text.substr(81, 3);
            QCOMPARE(text.substr(79, 2), std::string(" ?"));
            QCOMPARE(pairs.substr(size_t(position) * 8, 3), key);
            QCOMPARE(text.substr(84, 1), std::string(">"));
            QCOMPARE(text.substr(85), pairs.substr(size_t(position) * 8 + 4, 3));
            for (int other = 0; other < kRetrievalPairs; ++other)
                QVERIFY(other == position || pairs.substr(size_t(other) * 8, 3) != key);
            QVERIFY(isHeldOutQuestion(text.substr(0, 84)));
            int targets = 0;
            for (size_t t = 0; t < e.targets.size(); ++t)
                if (e.targets[t] >= 0) {
                    QVERIFY(t >= 84);
                    QCOMPARE(e.targets[t], e.tokens[t + 1]);
                    ++targets;
                }
            QCOMPARE(targets, 3);
        }
        const Example trained = retrievalExample(rng, false, 0);
        QVERIFY(!isHeldOutQuestion(std::string(trained.tokens.begin(), trained.tokens.begin() + 84)));
        QVERIFY_THROWS_EXCEPTION(Error, retrievalExample(rng, true, kRetrievalPairs));
        const auto task = Task::create("retrieval");
        QVERIFY(int(task->sample(rng, false).tokens.size()) <= task->modelConfig().context);
    }

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
        // Overwrite only the checkpoint's model, as a torn copy of a checkpoint would leave it.
        const std::string current = CheckpointDirectory(dir.path().toStdString()).current();
        QVERIFY(current != dir.path().toStdString());
        t->model()->save(current, {{"step", "2"}});
        try {
            Trainer::resume(dir.path().toStdString());
            QFAIL("a torn checkpoint was accepted");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("another step"), e.what());
        }
    }

    // A save interrupted at any point (here: its files half written, never committed) leaves the previous
    // checkpoint current and resumable; the next save removes the orphans and the older checkpoint.
    void interruptedSaveKeepsTheLastGoodCheckpoint()
    {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        auto t = make(12);
        t->step();
        t->save(path);
        t->step();
        const CheckpointDirectory checkpoints(path);
        const std::string staged = checkpoints.stage();
        t->model()->save(staged, {{"step", "2"}}); // the crash comes before optimizer.safetensors and trainer.json
        writeFileAtomically(path + "/.model.safetensors.tmp-AbCdEf", "a temporary file a kill left behind");
        QCOMPARE(Trainer::resume(path)->stepCount(), 1);
        QCOMPARE(Model::load(path).parameterCount(), t->model()->parameterCount());

        CheckpointDirectory(path).removeStale(); // what `train` does when it starts
        QVERIFY(!std::filesystem::exists(staged));
        QVERIFY(!std::filesystem::exists(path + "/.model.safetensors.tmp-AbCdEf"));
        t->save(path);
        QCOMPARE(Trainer::resume(path)->stepCount(), 2);
        int sets = 0;
        for (const auto &entry : std::filesystem::directory_iterator(path + "/checkpoints")) {
            QVERIFY2(entry.path().filename().string().starts_with("step-000002-"), entry.path().c_str());
            ++sets;
        }
        QCOMPARE(sets, 1);
        QVERIFY(sameWeights(Model::load(path), *t->model())); // the top-level model follows the checkpoint
    }

    // checkpoint.json may only name a checkpoint inside its own checkpoints/ directory.
    void pointerOutsideTheCheckpointsIsRefused()
    {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        auto t = make(12);
        t->step();
        t->save(path);
        for (const char *target : {"../..", "/etc", "checkpoints/../..", "checkpoints"}) {
            writeFileAtomically(path + "/checkpoint.json", std::string(R"({"checkpoint": ")") + target + "\"}");
            try {
                Trainer::resume(path);
                QFAIL(target);
            } catch (const Error &e) {
                QVERIFY2(QString(e.what()).contains("checkpoint.json: key 'checkpoint'"), e.what());
            }
        }
    }

    // Every field of trainer.json and every moment is checked against the model; the error names it.
    void corruptStateIsRefused_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("negative optimizer steps") << "optimizer_steps"
                                                  << "-5"
                                                  << "'optimizer_steps'";
        QTest::newRow("optimizer steps off by one") << "optimizer_steps"
                                                    << "2"
                                                    << "'optimizer_steps'";
        QTest::newRow("rng garbage") << "rng"
                                     << R"("garbage")"
                                     << "'rng'";
        QTest::newRow("huge batch") << "batch"
                                    << "2000000000"
                                    << "'batch'";
        QTest::newRow("steps 1e30") << "steps"
                                    << "1e30"
                                    << "'steps'";
        QTest::newRow("step past steps") << "step"
                                         << "13"
                                         << "'step'";
        QTest::newRow("negative learning rate") << "learning_rate"
                                                << "-1"
                                                << "'learning_rate'";
        QTest::newRow("seed a string") << "seed"
                                       << R"("1")"
                                       << "'seed'";
        QTest::newRow("unknown task") << "task"
                                      << R"("juggle")"
                                      << "unknown task";
        QTest::newRow("too large for a double") << "weight_decay"
                                                << "1e500"
                                                << "'weight_decay'";
    }

    void corruptStateIsRefused()
    {
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        auto t = make(12);
        t->step();
        t->save(path);
        const std::string state = CheckpointDirectory(path).current() + "/trainer.json";
        std::string text = readFile(state);
        const std::string needle = "\"" + key.toStdString() + "\": ";
        const size_t at = text.find(needle);
        QVERIFY(at != std::string::npos);
        const size_t end = text.find_first_of(",\n}", text.find_first_not_of(' ', at + needle.size()) + 1);
        const size_t valueAt = at + needle.size();
        // the rng value is a long string: replace up to its closing quote
        const size_t valueEnd = text[valueAt] == '"' ? text.find('"', valueAt + 1) + 1 : end;
        text.replace(valueAt, valueEnd - valueAt, value.toStdString());
        writeFileAtomically(state, text);
        try {
            Trainer::resume(path);
            QFAIL(qPrintable("accepted " + key + ": " + value));
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains(expected), e.what());
            QVERIFY2(QString(e.what()).contains("trainer.json"), e.what());
        }
    }

    void corruptMomentsAreRefused_data()
    {
        QTest::addColumn<QString>("change");
        QTest::newRow("missing") << "missing";
        QTest::newRow("transposed") << "transposed";
        QTest::newRow("nan") << "nan";
        QTest::newRow("extra") << "extra";
    }

    void corruptMomentsAreRefused()
    {
        QFETCH(QString, change);
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        auto t = make(12);
        t->step();
        t->save(path);
        const std::string file = CheckpointDirectory(path).current() + "/optimizer.safetensors";
        std::map<std::string, Tensor> state;
        {
            const SafetensorsFile f(file);
            for (const auto &[name, entry] : f.entries())
                state[name] = f.tensor(name);
        }
        const std::string victim = "m.h.0.attn.c_attn.weight"; // [d, 3d]: its transpose has another shape
        QVERIFY(state.count(victim));
        if (change == "missing")
            state.erase(victim);
        else if (change == "transposed")
            state[victim] = Tensor({state[victim].dim(1), state[victim].dim(0)});
        else if (change == "nan")
            state[victim].data()[3] = std::nanf("");
        else
            state["v.no.such.parameter"] = Tensor({2});
        std::map<std::string, const Tensor *> refs;
        for (const auto &[name, tensor] : state)
            refs[name] = &tensor;
        writeSafetensors(file, refs, {{"step", "1"}});
        try {
            Trainer::resume(path);
            QFAIL(qPrintable("accepted a " + change + " moment"));
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("optimizer.safetensors"), e.what());
            QVERIFY2(QString(e.what()).contains(change == "extra" ? "v.no.such.parameter" : victim.c_str()), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestTrainer)
#include "tst_trainer.moc"
