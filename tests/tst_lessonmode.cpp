// Lessons in the app, as a lecturer gives one: open a lesson, page through it in presentation mode with the keys a
// clicker sends, answer a predict question, leave with Esc; each step's view spec reaches the session. The position
// is kept between runs, "Add current view as step" appends to the file atomically, and an edit on disk is read
// again. Set ATLAS_SCREENSHOTS=DIR to save the presentation at 1280×720.
#include "attentionmap/attentionmap.h"
#include "lesson/lessoncheck.h"
#include "mainwindow.h"
#include "panels/lessonpanel.h"
#include "panels/trainpanel.h"
#include "panels/wrappingchoice.h"
#include "presentationmode.h"
#include "session/lessonplayer.h"
#include "session/session.h"
#include "testbundle.h"
#include "viewnavigator.h"
#include "views/heatmapplot.h"
#include "views/view.h"
#include "zoomcontroller.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QFontMetrics>
#include <QLabel>
#include <QMenuBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace atlas;

namespace {

const QString kLesson = QStringLiteral(ATLAS_SOURCE_DIR "/lessons/02-what-heads-do.md");

} // namespace

class TestLessonMode : public QObject
{
    Q_OBJECT

    static void waitIdle(Session &session)
    {
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy(), 30000);
        QTest::qWait(20);
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy() && !session.analysis().pending, 30000);
    }

    // The step's view, worked out by the lesson, is what the session shows.
    static void verifyStepApplied(LessonPlayer &player, Session &session)
    {
        QTRY_VERIFY_WITH_TIMEOUT(player.stepSpec().has_value(), 30000);
        waitIdle(session);
        const ViewSpec expected = stepViewSpec(player.lesson(), player.currentStep());
        QCOMPARE(session.spec().model, expected.model);
        QCOMPARE(session.spec().view, expected.view);
        QCOMPARE(session.spec().layer, expected.layer);
        QCOMPARE(session.spec().head, expected.head);
        QCOMPARE(session.spec().attention, expected.attention);
        QCOMPARE(session.spec().text, expected.text);
        QCOMPARE(session.model()->name, expected.model);
        QVERIFY(session.program() != nullptr);
    }

    static void shoot(QWidget &window, const QString &name)
    {
        const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS");
        if (dir.isEmpty())
            return;
        QTest::qWait(200); // the layout settles
        window.grab().save(dir + "/" + name + ".png");
    }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("TransformerAtlasTest");
        QCoreApplication::setApplicationName("tst_lessonmode");
        QSettings().clear();
        QFont font = QApplication::font();
        font.setPointSizeF(10);
        QApplication::setFont(font);
    }

    void presentLesson()
    {
        Session session;
        MainWindow window(&session);
        window.resize(1280, 720);
        window.show();
        window.activateWindow(); // shortcuts go to the active window
        QVERIFY(QTest::qWaitForWindowActive(&window));
        LessonPlayer &player = *window.lessons();
        window.findChild<QDockWidget *>("Lessons")->show();
        shoot(window, "lessons-list");
        QVERIFY(player.open(kLesson));
        QCOMPARE(player.stepIndex(), 0);
        QVERIFY(window.findChild<QDockWidget *>("Lessons")->isVisible());
        verifyStepApplied(player, session);
        QVERIFY(window.lessonPanel()->stepText().contains("reverse", Qt::CaseInsensitive));
        shoot(window, "lesson-open");

        QTest::keyClick(&window, Qt::Key_F5);
        PresentationMode &presentation = *window.presentation();
        QVERIFY(presentation.isActive());
        QVERIFY(window.isFullScreen());
        QVERIFY(!window.menuBar()->isVisible());
        // The projector's zoom for this screen's lines, at the nearest of the zoom levels (1.1 for 800 lines).
        QCOMPARE(window.zoom()->zoom(), 1.1);
        QCOMPARE(window.screen()->geometry().height(), 800);
        QCOMPARE(PresentationMode::projectorZoom(800), 1.5 * 800 / 1080);
        QVERIFY(!window.findChild<QDockWidget *>("Operations")->isVisible());
        QVERIFY(window.findChild<QDockWidget *>("Lessons")->isVisible());
        shoot(window, "presentation-step1");

        QTest::keyClick(&window, Qt::Key_PageDown); // what a clicker sends
        QCOMPARE(player.stepIndex(), 1);
        verifyStepApplied(player, session);
        shoot(window, "presentation-step2");

        // Predict, then reveal: the class picks key 2 for the mirror head's query 13, and the model agrees.
        const LessonQuestion &question = player.currentStep().questions.at(0);
        QCOMPARE(question.kind, LessonQuestion::Kind::Predict);
        // Before Reveal the heat map does not give the answer away: the query's row is covered, its hover silent.
        auto *heat = window.navigator()->currentView()->findChild<HeatmapPlot *>();
        QVERIFY(heat);
        QTRY_COMPARE(heat->veiledRow(), question.query);
        QVERIFY(session.spec().get(views::attentionmap::kVeilQuery));
        QVERIFY(heat->hoverTextAt(heat->cellCenter(question.query, question.answer)).contains("hidden until Reveal"));
        shoot(window, "presentation-before-reveal");
        window.lessonPanel()->answer({question.answer});
        QVERIFY2(window.lessonPanel()->feedbackText().startsWith("Right."),
            qPrintable(window.lessonPanel()->feedbackText()));
        QCOMPARE(session.spec().query, question.query); // the views single out the query's row
        QTRY_COMPARE(heat->veiledRow(), -1); // and show it
        QCOMPARE(heat->markedRow(), question.query);
        window.lessonPanel()->answer({question.answer + 1});
        QVERIFY(window.lessonPanel()->feedbackText().startsWith("Not this time"));
        shoot(window, "presentation-revealed");

        QTest::keyClick(&window, Qt::Key_Right);
        QCOMPARE(player.stepIndex(), 2);
        verifyStepApplied(player, session);
        QTest::keyClick(&window, Qt::Key_Left);
        QCOMPARE(player.stepIndex(), 1);
        verifyStepApplied(player, session);

        // The class changes the head; Reset step brings the step's view back.
        ViewSpec changed = session.spec();
        changed.head = (changed.head + 1) % session.model()->config.heads;
        session.setSpec(changed);
        QTest::keyClick(&window, Qt::Key_R, Qt::ControlModifier | Qt::ShiftModifier);
        verifyStepApplied(player, session);

        QTest::keyClick(&window, Qt::Key_Escape);
        QVERIFY(!presentation.isActive());
        QCOMPARE(window.zoom()->zoom(), 1.0);
        QVERIFY(window.menuBar()->isVisible());
        QVERIFY(!QTest::currentTestFailed());
    }

    // A long answer wraps inside the lesson panel, in the panel and in F5: nothing is cut at the right edge and the
    // panel never scrolls sideways; a click on an answer's text picks it (issue 28, "the first fix lecturers need").
    void longAnswersWrapInThePanel()
    {
        QTemporaryDir dir;
        const QString long1 = QString("a long answer that goes on and on about queries, keys and values ").repeated(4),
                      long2 = QString("another answer, every bit as long, so that no panel could fit it ").repeated(4);
        const QString path = dir.filePath("wrap.md");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(("---\ntitle: Wrap\nlecture: none\nminutes: 1\nmodels: reverse\n---\n\n## One question\n\n"
            + QString("Step text that is long enough to need several lines in a narrow panel. ").repeated(6)
            + "\n\n```view\n{\"model\": \"reverse\", \"text\": \"abcd>\"}\n```\n\n```question\nchoose: Which?\n- [x] "
            + long1 + "\n- [ ] " + long2
            + "\nexplain: " + QString("Because of a reason that takes a while to explain. ").repeated(6) + "\n```\n")
                       .toUtf8());
        file.close();
        Session session;
        MainWindow window(&session);
        window.resize(1280, 720);
        window.show();
        window.findChild<QDockWidget *>("Lessons")->show();
        QVERIFY(window.lessons()->open(path));
        waitIdle(session);
        for (const bool presenting : {false, true}) {
            if (presenting)
                QTest::keyClick(&window, Qt::Key_F5);
            QTest::qWait(100);
            const QList<WrappingChoice *> choices = window.lessonPanel()->findChildren<WrappingChoice *>();
            QCOMPARE(choices.size(), 2);
            auto *scroll = window.lessonPanel()->findChild<QScrollArea *>();
            QVERIFY(scroll && scroll->widget());
            QVERIFY2(scroll->widget()->width() <= scroll->viewport()->width(),
                qPrintable(QString("the body is %1 px in a %2 px panel")
                               .arg(scroll->widget()->width())
                               .arg(scroll->viewport()->width())));
            for (WrappingChoice *choice : choices) {
                QLabel *label = choice->label();
                const int right = label->mapTo(scroll->viewport(), QPoint(label->width(), 0)).x();
                QVERIFY2(right <= scroll->viewport()->width(), qPrintable(label->text().left(30)));
                QVERIFY2(label->height() + 1 >= label->heightForWidth(label->width()), "the answer is cut");
            }
            shoot(window, presenting ? "lesson-wrapped-answers-f5" : "lesson-wrapped-answers");
            QTest::mouseClick(choices[1]->label(), Qt::LeftButton);
            QVERIFY(choices[1]->button()->isChecked());
            QTest::mouseClick(choices[0]->label(), Qt::LeftButton);
            QVERIFY(choices[0]->button()->isChecked());
            QVERIFY(!choices[1]->button()->isChecked()); // one answer: the buttons stay exclusive
            // The indicator grows with the text (the style's own is 13 px whatever the zoom).
            WrappingChoice large(QStringLiteral("an answer"), true);
            QFont font = large.font();
            font.setPixelSize(32);
            large.setFont(font);
            QVERIFY(large.button()->sizeHint().height() >= QFontMetrics(font).ascent());
            shoot(window, presenting ? "lesson-answer-chosen-f5" : "lesson-answer-chosen");
        }
        QTest::keyClick(&window, Qt::Key_Escape);
    }

    // A step opens its view from the top left corner: the Memory timeline scrolled down by hand on one step shows its
    // title again on the next step, which shows the same view.
    void aStepOpensItsViewFromTheTop()
    {
        Session session;
        MainWindow window(&session);
        window.zoom()->setZoom(1.5); // the timeline's plots then need more than the window's height: it scrolls
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        LessonPlayer &player = *window.lessons();
        QVERIFY(player.open(QStringLiteral(ATLAS_SOURCE_DIR "/lessons/09-memory-strategies.md")));
        verifyStepApplied(player, session);
        QCOMPARE(session.spec().view, std::string("memory-timeline"));
        auto *scroll = qobject_cast<QScrollArea *>(window.navigator()->currentView()->parentWidget()->parentWidget());
        QVERIFY(scroll);
        QTRY_VERIFY(scroll->verticalScrollBar()->maximum() > 0);
        scroll->verticalScrollBar()->setValue(scroll->verticalScrollBar()->maximum());
        player.next();
        verifyStepApplied(player, session);
        QCOMPARE(session.spec().view, std::string("memory-timeline"));
        QTRY_COMPARE(scroll->verticalScrollBar()->value(), 0);
        QCOMPARE(scroll->horizontalScrollBar()->value(), 0);
        window.zoom()->setZoom(1.0);
    }

    // Issue 58: a lesson reopened at the last step viewed without saying so. It opens at its start and offers the
    // step it was left at.
    void positionKeptBetweenRuns()
    {
        {
            Session session;
            MainWindow window(&session);
            QVERIFY(window.lessons()->open(kLesson));
            window.lessons()->goTo(3);
            waitIdle(session);
        }
        Session session;
        MainWindow window(&session);
        window.show();
        QVERIFY(window.lessons()->open(kLesson));
        QCOMPARE(window.lessons()->stepIndex(), 0);
        QCOMPARE(window.lessons()->leftAt(), 3);
        QPushButton *resume = nullptr;
        for (QPushButton *b : window.lessonPanel()->findChildren<QPushButton *>())
            if (b->text() == "Resume at Step 4")
                resume = b;
        QVERIFY(resume != nullptr && resume->isVisibleTo(window.lessonPanel()));
        window.findChild<QDockWidget *>("Lessons")->show();
        shoot(window, "lesson-resume");
        resume->click();
        QCOMPARE(window.lessons()->stepIndex(), 3);
        QVERIFY(!resume->isVisibleTo(window.lessonPanel()));
        verifyStepApplied(*window.lessons(), session);
    }

    // Issue 58: presentation text was about 1/55 of the screen's height. Lessons ▸ Presentation Text makes it larger
    // for a large room, kept between runs.
    void aLargeRoomGetsLargerText()
    {
        Session session;
        MainWindow window(&session);
        window.show();
        PresentationMode &presentation = *window.presentation();
        presentation.setActive(true);
        const double projector = window.zoom()->zoom();
        presentation.setActive(false);
        PresentationMode::setTextScale(1.5);
        presentation.setActive(true);
        const double hall = window.zoom()->zoom();
        presentation.setActive(false);
        PresentationMode::setTextScale(1.0);
        QVERIFY2(hall >= 1.4 * projector, qPrintable(QString("%1 against %2").arg(hall).arg(projector)));
        QCOMPARE(window.zoom()->zoom(), 1.0); // leaving restores the window's own
    }

    // A first wrong answer is a try, not the answer: the row stays covered and the class may try again, or ask.
    void aWrongTryLeavesTheAnswerHidden()
    {
        Session session;
        MainWindow window(&session);
        window.show();
        LessonPlayer &player = *window.lessons();
        QVERIFY(player.open(kLesson));
        player.goTo(1);
        verifyStepApplied(player, session);
        const LessonQuestion &question = player.currentStep().questions.at(0);
        QCOMPARE(question.kind, LessonQuestion::Kind::Predict);
        window.lessonPanel()->answer({question.answer + 1});
        QVERIFY2(window.lessonPanel()->feedbackText().startsWith("Not this one"),
            qPrintable(window.lessonPanel()->feedbackText()));
        window.findChild<QDockWidget *>("Lessons")->show();
        shoot(window, "lesson-another-try");
        QVERIFY(session.spec().get(views::attentionmap::kVeilQuery)); // still covered
        window.lessonPanel()->answer({question.answer});
        QVERIFY(window.lessonPanel()->feedbackText().startsWith("Right."));
        QVERIFY(!session.spec().get(views::attentionmap::kVeilQuery));

        player.goTo(2); // a choose question: a wrong tick names no answer
        verifyStepApplied(player, session);
        const LessonQuestion &choose = player.currentStep().questions.at(0);
        QCOMPARE(choose.kind, LessonQuestion::Kind::Choose);
        int wrong = 0;
        while (std::find(choose.correct.begin(), choose.correct.end(), wrong) != choose.correct.end())
            ++wrong;
        window.lessonPanel()->answer({wrong});
        const QString verdict = window.lessonPanel()->feedbackText();
        QVERIFY2(verdict.startsWith("Not quite. Try again"), qPrintable(verdict));
        QVERIFY(!verdict.contains(QString::fromStdString(choose.choices.at(size_t(choose.correct.front())))));
        window.lessonPanel()->answer(choose.correct);
        QVERIFY(window.lessonPanel()->feedbackText().startsWith("Right."));
    }

    void trainActionStartsTheTrainPanel()
    {
        Session session;
        MainWindow window(&session);
        LessonPlayer &player = *window.lessons();
        QVERIFY(player.open(QStringLiteral(ATLAS_SOURCE_DIR "/lessons/04-training.md")));
        int trainStep = -1;
        for (int i = 0; i < player.stepCount() && trainStep < 0; ++i)
            for (const LessonAction &a : player.lesson().steps[size_t(i)].actions)
                if (a.kind == LessonAction::Kind::Train)
                    trainStep = i;
        QVERIFY(trainStep >= 0);
        auto *train = window.findChild<TrainPanel *>();
        QVERIFY(train != nullptr);
        QSignalSpy requested(&player, &LessonPlayer::trainRequested);
        player.goTo(trainStep == 0 ? 1 : 0);
        waitIdle(session);
        player.goTo(trainStep);
        QTRY_VERIFY_WITH_TIMEOUT(requested.count() == 1, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(train->worker()->running(), 10000);
        QCOMPARE(train->findChild<QComboBox *>("trainTask")->currentData().toString(), QString("reverse"));
        train->stop();
        QTRY_VERIFY_WITH_TIMEOUT(!train->worker()->running(), 30000);
        waitIdle(session);
    }

    void authoringAppendsAndReloads()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("lesson.md");
        QVERIFY(QFile::copy(kLesson, path));
        QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
        Session session;
        MainWindow window(&session);
        LessonPlayer &player = *window.lessons();
        QVERIFY(player.open(path));
        verifyStepApplied(player, session);
        const int steps = player.stepCount();
        player.addCurrentViewAsStep("The view on screen");
        QCOMPARE(player.stepCount(), steps + 1);
        QCOMPARE(player.stepIndex(), steps);
        QCOMPARE(QString::fromStdString(player.currentStep().title), QString("The view on screen"));
        verifyStepApplied(player, session);
        QVERIFY(dir.isValid() && QDir(dir.path()).entryList(QDir::Files).size() == 1); // no temporary left

        // An edit on disk is read again, at the same step.
        QSignalSpy reloaded(&player, &LessonPlayer::lessonChanged);
        QFile file(path);
        QVERIFY(file.open(QIODevice::Append));
        file.write("\n## Added on disk\n\nText.\n\n```view\n{\"model\": \"reverse\", \"text\": \"ab>ba\"}\n```\n");
        file.close();
        QTRY_VERIFY_WITH_TIMEOUT(reloaded.count() > 0, 5000);
        QCOMPARE(player.stepCount(), steps + 2);
        QCOMPARE(player.stepIndex(), steps);

        // A save that does not parse is refused with file:line, and the lesson stays as it was.
        QSignalSpy errors(&player, &LessonPlayer::errorOccurred);
        QVERIFY(file.open(QIODevice::Append));
        file.write("\n## Broken\n\n```view\n{\"model\": \n```\n");
        file.close();
        QTRY_VERIFY_WITH_TIMEOUT(errors.count() > 0, 5000);
        QVERIFY(errors.first().first().toString().startsWith(path + ":"));
        QCOMPARE(player.stepCount(), steps + 2);
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy(), 30000);
    }
};

QTEST_MAIN(TestLessonMode)
#include "tst_lessonmode.moc"
