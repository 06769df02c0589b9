// Widget test of the Train panel's model choices, offscreen: the Model section's options reach the run's model under
// `train`'s names, and a pretrained model fine-tunes from the panel. The panel's runs, checkpoints and window are in
// tst_trainpanel.cpp.
#include "attentionmap/attentionview.h"
#include "lesson/lesson.h"
#include "panels/trainpanel.h"
#include "sanitizertesting.h"
#include "session/session.h"
#include "testbundle.h"
#include "train/task.h"
#include "train/trainingrunoptions.h"
#include "trainpaneltesting.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>
#include <QToolButton>

using namespace atlas;
using testing::click;
using testing::configure;

class TestTrainPanelModels : public QObject
{
    Q_OBJECT

    using State = TrainingWorker::State;

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("TransformerAtlasTest");
        QCoreApplication::setApplicationName("tst_trainpanelmodels");
    }

    void init() { QSettings().clear(); } // each test's panel starts from the defaults

    // The Model section: its options reach the run's model under `train`'s names and values; a combination the
    // layouts do not have is said before Start, which refuses it; the section is kept between sessions, and a
    // lesson's train action shows its own model whatever the section held.
    void trainsTheModelSectionsModel()
    {
        Session session;
        {
            TrainPanel panel(&session);
            configure(panel, 4, 2, 2);
            auto *positions = panel.findChild<QComboBox *>("trainModel-positions");
            auto *experts = panel.findChild<QSpinBox *>("trainModel-experts");
            auto *layers = panel.findChild<QSpinBox *>("trainModel-layers");
            auto *topK = panel.findChild<QSpinBox *>("trainModel-expert-top-k");
            auto *family = panel.findChild<QComboBox *>("trainModel-family");
            auto *problem = panel.findChild<QLabel *>("trainModelProblem");
            QVERIFY(positions && experts && layers && topK && family && problem);
            QVERIFY(!topK->isEnabled()); // it tunes the experts
            positions->setCurrentIndex(positions->findData("alibi"));
            experts->setValue(2);
            QVERIFY(topK->isEnabled());
            layers->setValue(3);
            QCOMPARE(panel.findChild<QSpinBox *>("trainLayer")->maximum(), 2); // the probe follows the shape
            QVERIFY(!problem->isVisibleTo(&panel));
            click(panel, "trainStart");
            QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
            const TrainingRun &run = panel.worker()->setup().run;
            QCOMPARE(run.positions, std::string("alibi"));
            QCOMPARE(run.experts, 2);
            QCOMPARE(run.layers, 3);
            QTRY_VERIFY_WITH_TIMEOUT(panel.attentionView()->input().model, kComputeWaitFactor * 10000);
            const ModelConfig &trained = panel.attentionView()->input().model->config;
            QCOMPARE(int(trained.positions), int(PositionKind::Alibi));
            QCOMPARE(trained.experts, 2);
            QCOMPARE(trained.layers, 3);
            QVERIFY2(panel.statusText().contains("Model: layers=3 positions=alibi experts=2"),
                qPrintable(panel.statusText()));
            auto *summaryLabel = panel.findChild<QLabel *>("trainModelSummary");
            const QString summary = summaryLabel->text(); // the model's own count
            QVERIFY2(summary.startsWith("3 layers × 4 heads, d_model 64")
                    && summary.contains(
                        QLocale().toString(qlonglong(panel.attentionView()->input().model->parameterCount()))),
                qPrintable(summary));
            auto *memory = panel.findChild<QComboBox *>("trainMemory"); // a step's memory follows the strategy
            memory->setCurrentIndex(memory->findData("reversible"));
            QVERIFY2(summaryLabel->text() != summary, qPrintable(summaryLabel->text()));
            memory->setCurrentIndex(memory->findData("plain"));
            QCOMPARE(summaryLabel->text(), summary);

            family->setCurrentIndex(family->findData("bert")); // an encoder's layout on a causal task
            QVERIFY(problem->isVisibleTo(&panel));
            QVERIFY2(problem->text().startsWith("family bert:"), qPrintable(problem->text()));
            panel.findChild<QPushButton *>("trainStart")->click();
            QVERIFY2(panel.noticeText().startsWith("family bert:"), qPrintable(panel.noticeText()));
            QCOMPARE(panel.worker()->state(), State::Finished); // not started
            for (QMessageBox *box : panel.findChildren<QMessageBox *>())
                box->close();
        }
        TrainPanel next(&session); // the last run's model, not the refused one
        auto *positions = next.findChild<QComboBox *>("trainModel-positions");
        auto *experts = next.findChild<QSpinBox *>("trainModel-experts");
        QCOMPARE(positions->currentData().toString(), QString("alibi"));
        QCOMPARE(experts->value(), 2);
        QCOMPARE(next.findChild<QSpinBox *>("trainModel-layers")->value(), 3);
        QCOMPARE(next.findChild<QComboBox *>("trainModel-family")->currentData().toString(), QString());

        LessonAction lesson;
        lesson.kind = LessonAction::Kind::Train;
        lesson.target = "reverse";
        lesson.count = 3;
        lesson.trainOptions = {{"positions", "t5"}};
        next.runLessonAction(lesson);
        QCOMPARE(positions->currentData().toString(), QString("t5"));
        QCOMPARE(experts->value(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(next.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
        QCOMPARE(next.worker()->setup().run.positions, std::string("t5"));
        QCOMPARE(next.worker()->setup().run.experts, 0);
        QCOMPARE(next.worker()->setup().run.layers, 0);

        // The run's options of a lesson reach the run too, reversible blocks as the reversible strategy.
        lesson.trainOptions = {{"reversible", ""}, {"batch", "3"}, {"lr", "0.002"}};
        next.runLessonAction(lesson);
        QTRY_COMPARE_WITH_TIMEOUT(next.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
        QVERIFY(next.worker()->setup().run.reversible);
        QCOMPARE(next.worker()->setup().run.options.memory.strategy, MemoryStrategy::Reversible);
        QCOMPARE(next.worker()->setup().run.options.batch, 3);
        QCOMPARE(next.worker()->setup().run.options.learningRate, 0.002f);
    }

    // Fine-tuning: the task offers the built-in models that read its tokens; starting from one fixes the shape (the
    // Model section's other fields off), the header says so, and the run trains that model's weights. A lesson's
    // from= reaches the same field.
    void fineTunesAPretrainedModel()
    {
        Session session;
        TrainPanel panel(&session);
        configure(panel, 2, 2, 1, "typos");
        auto *from = panel.findChild<QComboBox *>("trainModel-from");
        auto *layers = panel.findChild<QSpinBox *>("trainModel-layers");
        auto *header = panel.findChild<QToolButton *>("trainModelHeader");
        QVERIFY(from && layers && header);
        QVERIFY(from->findData("austen-mlm") > 0);
        QCOMPARE(from->findData("austen"), -1); // causal: it cannot read the task both ways
        auto *rate = panel.findChild<QDoubleSpinBox *>("trainLearningRate");
        QCOMPARE(float(rate->value()), TrainOptions {}.learningRate);
        from->setCurrentIndex(from->findData("austen-mlm"));
        QCOMPARE(float(rate->value()), TrainOptions::kFineTuningLearningRate); // left at the default: fine-tuning's
        QVERIFY(!layers->isEnabled());
        header->setChecked(true); // the section open: only the start model's field is left
        QVERIFY(from->isVisibleTo(&panel) && !layers->isVisibleTo(&panel));
        QCOMPARE(header->text(), QString("Model: fine-tuned from austen-mlm"));
        click(panel, "trainStart");
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
        QCOMPARE(panel.worker()->setup().run.from, std::string("austen-mlm"));
        QTRY_VERIFY_WITH_TIMEOUT(panel.attentionView()->input().model, kComputeWaitFactor * 10000);
        const ModelConfig &trained = panel.attentionView()->input().model->config;
        QCOMPARE(trained.task, std::string("typos"));
        QCOMPARE(int(trained.positions), int(PositionKind::Rope)); // austen-mlm's, not a new model's default
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty()) {
            header->setChecked(true);
            panel.resize(400, 1700);
            panel.show();
            QVERIFY(QTest::qWaitForWindowExposed(&panel));
            QVERIFY(panel.grab().save(dir + "/trainpanel-fine-tune.png"));
            panel.hide();
        }

        auto *task = panel.findChild<QComboBox *>("trainTask"); // a causal task: austen-mlm is no start
        task->setCurrentIndex(task->findData("reverse"));
        QCOMPARE(from->currentData().toString(), QString());
        QVERIFY(layers->isEnabled() && layers->isVisibleTo(&panel));
        QCOMPARE(float(rate->value()), TrainOptions {}.learningRate);

        LessonAction lesson;
        lesson.kind = LessonAction::Kind::Train;
        lesson.target = "typos";
        lesson.count = 2;
        lesson.trainOptions = {{"from", "austen-mlm"}, {"lr", "0.0003"}};
        panel.runLessonAction(lesson);
        QCOMPARE(from->currentData().toString(), QString("austen-mlm"));
        QTRY_COMPARE_WITH_TIMEOUT(panel.worker()->state(), State::Finished, kComputeWaitFactor * 10000);
        QCOMPARE(panel.worker()->setup().run.from, std::string("austen-mlm"));
    }
};

QTEST_MAIN(TestTrainPanelModels)
#include "tst_trainpanelmodels.moc"
