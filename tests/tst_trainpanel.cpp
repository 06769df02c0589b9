// Widget test of the Train panel, offscreen: trains the "reverse" task with small settings, pauses, saves a
// checkpoint that Model::load opens and Trainer::resume continues, resumes, stops; opens the trained model in
// the Session; closes the main window mid-run; trains the encoder-decoder task. Set ATLAS_SCREENSHOTS=DIR to save
// PNGs of the window and of the encoder-decoder's probe.
#include "attentionmap/attentionview.h"
#include "mainwindow.h"
#include "panels/losscurveplot.h"
#include "panels/trainpanel.h"
#include "sanitizertesting.h"
#include "session/session.h"
#include "testbundle.h"
#include "train/task.h"
#include "train/trainingrunoptions.h"
#include "trainpaneltesting.h"
#include "views/heatmapplot.h"

#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>

#include <algorithm>
#include <cmath>
#include <map>

using namespace atlas;
using State = TrainingWorker::State;
using testing::click;
using testing::configure;

namespace {

// Counts a GUI-thread timer's ticks and the longest gap between two of them.
struct TickCounter
{
    QTimer timer;
    QElapsedTimer clock, sinceTick;
    int ticks = 0;
    qint64 longestGap = 0;

    TickCounter()
    {
        timer.setInterval(20);
        QObject::connect(&timer, &QTimer::timeout, [this] {
            ++ticks;
            longestGap = std::max(longestGap, sinceTick.restart());
        });
        clock.start();
        sinceTick.start();
        timer.start();
    }
};

} // namespace

class TestTrainPanel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("TransformerAtlasTest");
        QCoreApplication::setApplicationName("tst_trainpanel");
    }

    void init() { QSettings().clear(); } // each test's panel starts from the defaults

    // The settings of the last run started with the Start button are the next panel's, in this session or the next;
    // a lesson's run does not replace them.
    void keepsTheLastRunsSettings()
    {
        Session session;
        {
            TrainPanel panel(&session);
            configure(panel, 6, 3, 2, "copy");
            auto *memory = panel.findChild<QComboBox *>("trainMemory");
            memory->setCurrentIndex(memory->findData("checkpoint"));
            panel.findChild<QSpinBox *>("trainCheckpointEvery")->setValue(1);
            panel.findChild<QSpinBox *>("trainSeed")->setValue(77);
            panel.findChild<QDoubleSpinBox *>("trainLearningRate")->setValue(0.002);
            panel.findChild<QSpinBox *>("trainWarmup")->setValue(0);
            panel.findChild<QDoubleSpinBox *>("trainWeightDecay")->setValue(0.1);
            click(panel, "trainStart");
            QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
            QCOMPARE(panel.worker()->setup().run.options.warmupSteps, 0);
            QCOMPARE(panel.worker()->setup().run.options.weightDecay, 0.1f);
            LessonAction lesson;
            lesson.kind = LessonAction::Kind::Train;
            lesson.target = "reverse";
            lesson.count = 4;
            panel.runLessonAction(lesson);
            QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
            QCOMPARE(panel.worker()->setup().run.options.warmupSteps, 1); // auto: a tenth of 4 steps, at least 1
            QCOMPARE(panel.worker()->setup().run.options.weightDecay, TrainOptions {}.weightDecay);
        }
        TrainPanel next(&session);
        QCOMPARE(next.findChild<QComboBox *>("trainTask")->currentData().toString(), QString("copy"));
        QCOMPARE(next.findChild<QComboBox *>("trainMemory")->currentData().toString(), QString("checkpoint"));
        QCOMPARE(next.findChild<QSpinBox *>("trainCheckpointEvery")->value(), 1);
        QCOMPARE(next.findChild<QSpinBox *>("trainSteps")->value(), 6);
        QCOMPARE(next.findChild<QSpinBox *>("trainBatch")->value(), 3);
        QCOMPARE(next.findChild<QSpinBox *>("trainEvalEvery")->value(), 2);
        QCOMPARE(next.findChild<QSpinBox *>("trainSeed")->value(), 77);
        QCOMPARE(next.findChild<QDoubleSpinBox *>("trainLearningRate")->value(), 0.002);
        QCOMPARE(next.findChild<QSpinBox *>("trainWarmup")->value(), 0);
        QCOMPARE(next.findChild<QDoubleSpinBox *>("trainWeightDecay")->value(), 0.1);
    }

    void trainsPausesSavesResumesAndStops()
    {
        Session session;
        TrainPanel panel(&session);
        panel.resize(420, 860);
        panel.show();
        configure(panel, 300, 4, 20);
        TickCounter gui;
        QSignalSpy reports(panel.worker(), &TrainingWorker::progressed);
        click(panel, "trainStart");
        QCOMPARE(panel.worker()->state(), State::Running);
        QTRY_VERIFY_WITH_TIMEOUT(panel.stepShown() >= 10, kComputeWaitFactor * 10000);
        QCOMPARE(panel.lossPlot()->graph(0)->dataCount(), panel.stepShown()); // one point per step
        QVERIFY(panel.lossPlot()->graph(1)->dataCount() >= 1); // the untrained model's loss

        // The attention view draws the probe's trace from the worker.
        AttentionView *view = panel.attentionView();
        QTRY_VERIFY_WITH_TIMEOUT(view->input().trace != nullptr, kComputeWaitFactor * 10000);
        QVERIFY(view->input().trace->contains("layer.0.attn.probs"));
        QVERIFY(!view->plot()->showingMessage());
        QVERIFY(panel.probeText().contains('>'));
        QCOMPARE(view->input().tokens.size(), panel.probeText().size());

        // Pause holds the step count.
        click(panel, "trainPause");
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Paused, kComputeWaitFactor * 10000);
        const int pausedAt = panel.stepShown();
        QCOMPARE(panel.worker()->stepsDone(), pausedAt);
        QTest::qWait(300);
        QCOMPARE(panel.stepShown(), pausedAt);
        QCOMPARE(panel.worker()->stepsDone(), pausedAt);
        QVERIFY(panel.statusText().contains("Paused"));

        // Save while paused: a model directory and a checkpoint that continues.
        QTemporaryDir dir;
        QSignalSpy saved(panel.worker(), &TrainingWorker::saved);
        panel.saveTo(dir.filePath("checkpoint"));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, kComputeWaitFactor * 10000);
        QCOMPARE(saved.first().at(1).toInt(), pausedAt);
        QVERIFY(panel.noticeText().contains("checkpoint"));
        const std::string checkpoint = dir.filePath("checkpoint").toStdString();
        QCOMPARE(Model::load(checkpoint).config.layers, 2);
        const std::unique_ptr<Trainer> resumed = Trainer::resume(checkpoint);
        QCOMPARE(resumed->stepCount(), pausedAt);
        const StepReport next = resumed->step();
        QCOMPARE(next.step, pausedAt + 1);
        QVERIFY(std::isfinite(next.loss));

        // Resume continues; the probe's attention changes as the weights do.
        const auto traceBefore = view->input().trace;
        click(panel, "trainPause");
        QTRY_VERIFY_WITH_TIMEOUT(panel.stepShown() >= std::max(60, pausedAt + 1), kComputeWaitFactor * 10000);
        QTRY_VERIFY_WITH_TIMEOUT(view->input().trace != traceBefore, kComputeWaitFactor * 10000);
        const Tensor &before = traceBefore->tensor("layer.0.attn.probs");
        const Tensor &after = view->input().trace->tensor("layer.0.attn.probs");
        QCOMPARE(after.shape(), before.shape());
        QVERIFY(!std::equal(before.data(), before.data() + before.numel(), after.data()));
        QTRY_VERIFY_WITH_TIMEOUT(
            panel.lossPlot()->graph(1)->dataCount() >= 3, kComputeWaitFactor * 10000); // steps 0, 20, 40
        auto held = panel.lossPlot()->graph(1)->data();
        QVERIFY((held->constEnd() - 1)->value < held->constBegin()->value); // held-out loss fell
        QVERIFY(panel.heldOutText().contains("token accuracy"));

        auto *head = panel.findChild<QSpinBox *>("trainHead");
        QVERIFY(head);
        head->setValue(2);
        QCOMPARE(view->spec().head, 2);

        click(panel, "trainStop");
        QVERIFY(panel.worker()->wait(5000));
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 5000);
        QVERIFY(panel.stepShown() < 300);
        QVERIFY(panel.statusText().contains("Stopped"));
        // Steps (a few ms each here) reach the GUI in batches, at most ~10 reports a second plus one per pause.
        QVERIFY2(reports.count() <= gui.clock.elapsed() / TrainingWorker::kReportIntervalMs + 4,
            qPrintable(QString("%1 reports in %2 ms").arg(reports.count()).arg(gui.clock.elapsed())));
#ifndef ATLAS_ADDRESS_SANITIZER // several steps per report holds only while steps take a few ms, not under ASan
        QVERIFY2(reports.count() * 3 < panel.stepShown(),
            qPrintable(QString("%1 reports for %2 steps").arg(reports.count()).arg(panel.stepShown())));
#endif

        // The GUI thread kept drawing: its 20 ms timer fired at least half as often as asked, never stalling.
        const double expected = double(gui.clock.elapsed()) / 20.0;
        QVERIFY2(gui.ticks >= expected / 2, qPrintable(QString("%1 ticks of %2").arg(gui.ticks).arg(expected)));
        QVERIFY2(gui.longestGap < 400, qPrintable(QString("longest gap %1 ms").arg(gui.longestGap)));
    }

    void opensTheTrainedModelInTheSession()
    {
        Session session;
        TrainPanel panel(&session);
        configure(panel, 30, 4, 10);
        click(panel, "trainStart");
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
        QCOMPARE(panel.stepShown(), 30);
        QVERIFY(panel.statusText().contains("Finished"));

        QSignalSpy modelChanged(&session, &Session::modelChanged);
        click(panel, "trainExplore");
        QTRY_COMPARE_WITH_TIMEOUT(modelChanged.count(), 1, kComputeWaitFactor * 10000);
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr && !session.busy(), kComputeWaitFactor * 10000);
        QCOMPARE(session.model()->config.layers, 2);
        QVERIFY(QString::fromStdString(session.model()->directory).endsWith("trained/reverse"));
        const std::string probe = panel.probeText().toStdString();
        QCOMPARE(session.input().tokens, std::vector<int>(probe.begin(), probe.end()));

        // A save that cannot be written is reported, and the app goes on.
        QSignalSpy errors(panel.worker(), &TrainingWorker::errorOccurred);
        panel.saveTo("/proc/atlas-cannot-write-here");
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, kComputeWaitFactor * 10000);
        QVERIFY(panel.noticeText().contains("/proc/atlas-cannot-write-here"));
        for (QMessageBox *box : panel.findChildren<QMessageBox *>())
            box->close();
    }

    // The encoder-decoder task trains in the panel (plain memory only); its probe has a source and a decoder input,
    // the heat map shows any of its three attentions, and the explorer opens the model on both inputs.
    void trainsAnEncoderDecoderAndShowsEachAttention()
    {
        Session session;
        TrainPanel panel(&session);
        configure(panel, 12, 4, 6, "seq2seq-sort");
        auto *memory = panel.findChild<QComboBox *>("trainMemory");
        QVERIFY(!memory->isEnabled());
        QCOMPARE(memory->currentData().toString(), QString("plain"));
        QVERIFY(!panel.findChild<QSpinBox *>("trainFfnChunks")->isEnabled());
        auto *site = panel.findChild<QComboBox *>("trainSite");
        QVERIFY(site->isVisibleTo(&panel));
        click(panel, "trainStart");
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 20000);
        QCOMPARE(panel.stepShown(), 12);
        QTRY_VERIFY_WITH_TIMEOUT(panel.attentionView()->input().trace != nullptr, kComputeWaitFactor * 10000);
        QVERIFY(!panel.attentionView()->input().site.cross);
        const QString decoder = panel.probeText();
        QVERIFY(decoder.startsWith('>'));

        site->setCurrentIndex(site->findData("cross"));
        const ViewInput &cross = panel.attentionView()->input();
        QVERIFY(cross.site.cross);
        QCOMPARE(cross.tokens.size(), decoder.size());
        QVERIFY(cross.keyTokens.size() > 0);
        QVERIFY(panel.attentionView()->plot()->message().isEmpty());
        site->setCurrentIndex(site->findData("encoder"));
        QCOMPARE(panel.attentionView()->input().site.stack, names::kEncoderStack);
        QCOMPARE(panel.findChild<QSpinBox *>("trainLayer")->maximum(),
            Task::create("seq2seq-sort")->modelConfig().encoderLayers - 1);
        site->setCurrentIndex(site->findData("cross"));
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty()) {
            panel.resize(420, 820);
            QVERIFY(panel.grab().save(dir + "/trainpanel-seq2seq-cross.png"));
        }

        QSignalSpy modelChanged(&session, &Session::modelChanged);
        click(panel, "trainExplore");
        QTRY_COMPARE_WITH_TIMEOUT(modelChanged.count(), 1, kComputeWaitFactor * 10000);
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr && !session.busy(), kComputeWaitFactor * 10000);
        QVERIFY(session.model()->config.isEncoderDecoder());
        QCOMPARE(QString::fromStdString(session.spec().decoderText), decoder);
        QCOMPARE(session.spec().site, std::string("cross"));
        QCOMPARE(session.input().source.size(), size_t(cross.keyTokens.size()));
    }

    // The Memory field: a reversible run trains a model with reversible blocks, the reversible way.
    void trainsUnderAMemoryStrategy()
    {
        Session session;
        TrainPanel panel(&session);
        configure(panel, 10, 2, 5);
        auto *memory = panel.findChild<QComboBox *>("trainMemory");
        QVERIFY(memory);
        memory->setCurrentIndex(memory->findData("reversible"));
        click(panel, "trainStart");
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
        QCOMPARE(panel.worker()->setup().run.options.memory.strategy, MemoryStrategy::Reversible);
        QVERIFY(panel.worker()->setup().run.reversible);
        QSignalSpy modelChanged(&session, &Session::modelChanged);
        click(panel, "trainExplore");
        QTRY_COMPARE_WITH_TIMEOUT(modelChanged.count(), 1, kComputeWaitFactor * 10000);
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr && !session.busy(), kComputeWaitFactor * 10000);
        QVERIFY(session.model()->config.reversible);
        QVERIFY(session.trace()->contains("layer.1.out2"));
    }

    // The LayerDrop field reaches the run and its summary; it is off, and disabled, for a memory strategy other than
    // plain and for an encoder-decoder task (the trainer refuses both).
    void trainsWithLayerDrop()
    {
        Session session;
        TrainPanel panel(&session);
        configure(panel, 4, 2, 2);
        auto *rate = panel.findChild<QDoubleSpinBox *>("trainLayerDrop");
        auto *memory = panel.findChild<QComboBox *>("trainMemory");
        QVERIFY(rate && memory && rate->isEnabled());
        rate->setValue(0.2);
        memory->setCurrentIndex(memory->findData("checkpoint"));
        QVERIFY(!rate->isEnabled());
        QCOMPARE(rate->value(), 0.0);
        memory->setCurrentIndex(memory->findData("plain"));
        rate->setValue(0.25);
        click(panel, "trainStart");
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
        QCOMPARE(panel.worker()->setup().run.options.layerDrop, 0.25f);
        const QList<QLabel *> labels = panel.findChildren<QLabel *>();
        QVERIFY(std::any_of(
            labels.begin(), labels.end(), [](const QLabel *l) { return l->text().contains("LayerDrop 0.25"); }));
        configure(panel, 4, 2, 2, "seq2seq-sort");
        QVERIFY(!rate->isEnabled());
    }

    // Checkpointing's k and the feed-forward chunks reach the run; k is only editable for checkpointing, and at most
    // the task model's depth.
    void trainsWithCheckpointEveryKAndChunks()
    {
        Session session;
        TrainPanel panel(&session);
        configure(panel, 6, 2, 3);
        auto *memory = panel.findChild<QComboBox *>("trainMemory");
        auto *k = panel.findChild<QSpinBox *>("trainCheckpointEvery");
        auto *chunks = panel.findChild<QSpinBox *>("trainFfnChunks");
        QVERIFY(memory && k && chunks);
        QVERIFY(!k->isEnabled());
        memory->setCurrentIndex(memory->findData("checkpoint"));
        QVERIFY(k->isEnabled());
        QCOMPARE(k->maximum(), Task::create("reverse")->modelConfig().layers);
        k->setValue(1);
        chunks->setValue(3);
        click(panel, "trainStart");
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
        const MemoryOptions &used = panel.worker()->setup().run.options.memory;
        QCOMPARE(used.strategy, MemoryStrategy::Checkpoint);
        QCOMPARE(used.checkpointEvery, 1);
        QCOMPARE(used.ffnChunks, 3);

        // Saves asked for at once (Save… and Open in explorer, or two clicks) take turns: each starts by clearing
        // what an interrupted save left, which must not be the other's files in progress.
        QTemporaryDir dir;
        QSignalSpy saved(panel.worker(), &TrainingWorker::saved);
        QSignalSpy failed(panel.worker(), &TrainingWorker::errorOccurred);
        for (int i = 0; i < 4; ++i)
            panel.saveTo(dir.filePath("checkpoint"));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 4, kComputeWaitFactor * 20000);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(Trainer::resume(dir.filePath("checkpoint").toStdString())->stepCount(), 6);
    }

    void resumesACheckpointWithItsOwnSettings()
    {
        QTemporaryDir dir;
        const std::string checkpoint = dir.filePath("sort").toStdString();
        {
            TrainOptions options;
            options.steps = 25;
            options.batch = 4;
            options.seed = 3;
            const ModelConfig shape = Task::create("sort")->modelConfig();
            Trainer trainer(std::make_shared<Model>(Model::random(shape, options.seed)), "sort", options);
            for (int i = 0; i < 10; ++i)
                trainer.step();
            trainer.save(checkpoint);
        }
        Session session;
        TrainPanel panel(&session);
        configure(panel, 300, 8, 5); // the checkpoint's own task (sort) and steps (25) win over these
        QSignalSpy resumed(panel.worker(), &TrainingWorker::resumed);
        panel.resumeFrom(QString::fromStdString(checkpoint));
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 15000);
        QCOMPARE(resumed.count(), 1);
        QCOMPARE(resumed.first().at(0).toInt(), 10);
        QCOMPARE(panel.worker()->setup().run.task, std::string("sort"));
        QCOMPARE(panel.worker()->setup().run.options.steps, 25);
        QCOMPARE(panel.worker()->setup().run.options.batch, 4);
        QCOMPARE(panel.stepShown(), 25);
        QCOMPARE(panel.lossPlot()->graph(0)->dataCount(), 15); // steps 11 … 25
        QCOMPARE(panel.lossPlot()->graph(0)->data()->constBegin()->key, 11.0);
        QCOMPARE(panel.lossPlot()->graph(1)->data()->constBegin()->key, 10.0); // held-out from the checkpoint on
        QVERIFY(panel.statusText().contains("Task sort"));
        QVERIFY(panel.statusText().contains("Finished: 25 steps"));

        // Again: nothing is left to train; a directory without a checkpoint is named in the error.
        QSignalSpy errors(panel.worker(), &TrainingWorker::errorOccurred);
        panel.saveTo(QString::fromStdString(checkpoint));
        QTRY_VERIFY_WITH_TIMEOUT(panel.noticeText().contains("Saved step 25"), kComputeWaitFactor * 10000);
        panel.resumeFrom(QString::fromStdString(checkpoint));
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, kComputeWaitFactor * 10000);
        QVERIFY2(panel.noticeText().contains("already trained all its 25 steps"), qPrintable(panel.noticeText()));
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
        panel.resumeFrom(dir.filePath("nothing-here"));
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 2, kComputeWaitFactor * 10000);
        QVERIFY2(panel.noticeText().contains("nothing-here"), qPrintable(panel.noticeText()));
        for (QMessageBox *box : panel.findChildren<QMessageBox *>())
            box->close();
    }

    // The panel's fields offer what `train` and lessons take: each option's field has the table's highest value and
    // its help as a tooltip (train/trainingrunoptions.h), and a field that only sets up another is off until it is.
    void theFieldsOfferTheTablesRanges()
    {
        Session session;
        TrainPanel panel(&session);
        const std::map<std::string, QString> runFields
            = {{"steps", "trainSteps"}, {"batch", "trainBatch"}, {"seed", "trainSeed"}, {"lr", "trainLearningRate"},
                {"warmup", "trainWarmup"}, {"weight-decay", "trainWeightDecay"}, {"layerdrop", "trainLayerDrop"}};
        int checked = 0;
        for (const TrainingRunOption &o : trainingRunOptions()) {
            const QString name
                = runFields.count(o.name) ? runFields.at(o.name) : QString::fromStdString("trainModel-" + o.name);
            QWidget *field = panel.findChild<QWidget *>(name);
            // The command line's description; reversible blocks come with the Memory field's reversible strategy.
            if (o.name == "description" || o.name == "reversible")
                continue;
            QVERIFY2(field, qPrintable(name));
            ++checked;
            QVERIFY2(field->toolTip().contains(QString::fromStdString(o.help).mid(1, 30)), qPrintable(name));
            if (auto *spin = qobject_cast<QSpinBox *>(field))
                QCOMPARE(spin->maximum(), int(o.high));
            if (auto *spin = qobject_cast<QDoubleSpinBox *>(field))
                QCOMPARE(float(spin->maximum()), float(o.high)); // 0.9 shown, 0.9f held
        }
        QCOMPARE(checked, int(trainingRunOptions().size()) - 2);
        auto *family = panel.findChild<QComboBox *>("trainModel-family");
        auto *kvHeads = panel.findChild<QSpinBox *>("trainModel-kv-heads");
        auto *funnel = panel.findChild<QLineEdit *>("trainModel-funnel");
        auto *decoder = panel.findChild<QSpinBox *>("trainModel-funnel-decoder");
        QVERIFY(family && kvHeads && funnel && decoder);
        family->setCurrentIndex(0); // GPT-2's layout
        funnel->clear();
        QVERIFY(!kvHeads->isEnabled() && !decoder->isEnabled());
        family->setCurrentIndex(family->findData("llama"));
        funnel->setText("2,2");
        QVERIFY(kvHeads->isEnabled() && decoder->isEnabled());
        // A context is for the novel's windows: off for a task whose examples have lengths of their own.
        auto *task = panel.findChild<QComboBox *>("trainTask");
        auto *context = panel.findChild<QSpinBox *>("trainModel-context");
        QVERIFY(task && context);
        task->setCurrentIndex(task->findData("chars"));
        QVERIFY(context->isEnabled());
        QCOMPARE(context->specialValueText(), QString("task's (128)"));
        task->setCurrentIndex(task->findData("reverse"));
        QVERIFY(!context->isEnabled());
    }

    void closingTheWindowWhileTrainingStopsTheWorker()
    {
        Session session;
        auto *window = new MainWindow(&session);
        window->resize(1400, 900);
        window->show();
        auto *trainDock = window->findChild<QDockWidget *>("Train");
        QVERIFY(trainDock);
        QVERIFY(window->tabifiedDockWidgets(trainDock).contains(window->findChild<QDockWidget *>("Operations")));
        trainDock->raise();
        auto *panel = window->findChild<TrainPanel *>();
        QVERIFY(panel);
        configure(*panel, 100000, 8, 50);
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty()) {
            auto *header = panel->findChild<QToolButton *>("trainModelHeader");
            header->click(); // the Model section open, as a user changing the model sees it
            QTest::qWait(100); // the layouts settle
            QVERIFY(window->grab().save(dir + "/window-train-settings.png"));
            header->click();
        }
        click(*panel, "trainStart");
        QTRY_VERIFY_WITH_TIMEOUT(
            panel->attentionView()->input().trace && panel->stepShown() > 60, kComputeWaitFactor * 15000);
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(window->grab().save(dir + "/window-train.png"));

        QPointer<TrainingWorker> worker = panel->worker();
        QElapsedTimer closing;
        closing.start();
        window->close();
        delete window;
        QVERIFY(worker.isNull());
        QVERIFY2(closing.elapsed() < 3000, qPrintable(QString("closing took %1 ms").arg(closing.elapsed())));
    }
};

QTEST_MAIN(TestTrainPanel)
#include "tst_trainpanel.moc"
