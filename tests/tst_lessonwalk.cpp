// Every step of every lesson in presentation mode, on a 1280×720 projector and on a 1920×1080 one, as a lecturer
// pages through it: the whole view on screen (no scrolling), nothing cut or elided, and no text below
// the projector minimum, in the view and in the step's panel. Set ATLAS_SCREENSHOTS=DIR to save every step.
#include "layouttesting.h"
#include "lesson/lessoncheck.h"
#include "lesson/lessonlibrary.h"
#include "mainwindow.h"
#include "panels/lessonpanel.h"
#include "panels/trainpanel.h"
#include "presentationmode.h"
#include "sanitizertesting.h"
#include "session/lessonplayer.h"
#include "session/session.h"
#include "testbundle.h"
#include "viewnavigator.h"
#include "views/headlessrender.h"
#include "views/view.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QTemporaryFile>
#include <QTest>

#include <map>
#include <memory>
#include <set>

using namespace atlas;
using namespace atlas::testing;

namespace {

// The two projectors, side by side on the offscreen platform's virtual desktop.
const QRect kSmallProjector(0, 0, 1280, 720);
const QRect kLargeProjector(1280, 0, 1920, 1080);

// Text on a projector is read from the back of a room. A projector's picture is as large on the wall at any
// resolution, so the minimum is a share of its height: 13 px on 1080 lines (two thirds of presentation mode's body
// text there), 8.7 px on 720.
// Under AddressSanitizer (CI's second stage) the lessons are walked on the small projector only: the large one runs the
// same code on other geometry, and there each walk of every lesson takes minutes (lesson 4 trains a model, lesson 2
// scores every head). The normal build walks both.
// There, too, a step is walked only when no earlier step of the run showed the same view of the same model: the
// sanitizers look for memory errors, which a view already walked on that model would meet again, and every step's
// layout is checked by the normal build's walk. ATLAS_WALK_DISTINCT=1 does the same in any build.
// A step's train action (lessons 04, 10, 12 and 21 train for 300 to 2000 steps) runs 40 steps in either build: the
// walk checks the Train panel as it shows a finished run, and a run's length changes its numbers, not its layout.
// And under the sanitizers the analyses run on the least work (kAnalysesOnLeastWork, sanitizertesting.h): all of their
// code on two held-out examples instead of hundreds; the numbers a step shows are the normal build's to check
// (tst_lessons, the walk).
#if defined(ATLAS_ADDRESS_SANITIZER)
constexpr bool kBothProjectors = false;
constexpr bool kDistinctStepsOnly = true;
#else
constexpr bool kBothProjectors = true;
constexpr bool kDistinctStepsOnly = false;
#endif

constexpr int kTrainingSteps = 40;

double projectorMinimumPixels(const QRect &projector)
{
    return 13.0 * projector.height() / 1080.0;
}

QScreen *screenAt(const QRect &geometry)
{
    for (QScreen *s : QGuiApplication::screens())
        if (s->geometry() == geometry)
            return s;
    return nullptr;
}

} // namespace

class TestLessonWalk : public QObject
{
    Q_OBJECT

    std::map<QString, std::unique_ptr<Session>> m_sessions; // by lesson, for its two walks
    std::set<std::pair<std::string, std::string>> m_walked; // (view, model) of the steps walked, kDistinctStepsOnly

    static void waitIdle(Session &session)
    {
        // Generous: the sanitizer build computes a lesson's head importance (lesson 2) in over a minute.
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy(), 300000);
        QTest::qWait(20);
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy() && !session.analysis().pending, 300000);
    }

    // What the step on screen gets wrong: a view that scrolls, text cut or elided, text too small to read.
    static QStringList stepProblems(MainWindow &window, double minimumPixels)
    {
        QStringList problems = layoutProblems(window);
        View *view = window.navigator()->currentView();
        if (auto *scroll = qobject_cast<QScrollArea *>(view->parentWidget()->parentWidget());
            scroll && (scroll->horizontalScrollBar()->isVisible() || scroll->verticalScrollBar()->isVisible()))
            problems << QString("the view scrolls: it is %1×%2 (at least %3×%4) and has %5×%6")
                            .arg(view->width())
                            .arg(view->height())
                            .arg(view->minimumSizeHint().width())
                            .arg(view->minimumSizeHint().height())
                            .arg(scroll->viewport()->width())
                            .arg(scroll->viewport()->height());
        for (QWidget *part : {static_cast<QWidget *>(view), static_cast<QWidget *>(window.lessonPanel())}) {
            TextRecorder recorder(window.logicalDpiY());
            recorder.record(part);
            problems << wordingProblems(recorder.texts());
            if (const PaintedText least = recorder.smallest(); least.pixels > 0 && least.pixels < minimumPixels)
                problems << QString("'%1' in the %2 is %3 px high")
                                .arg(least.text.left(40), part->metaObject()->className())
                                .arg(least.pixels, 0, 'f', 1);
        }
        return problems;
    }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("TransformerAtlasTest");
        QCoreApplication::setApplicationName("tst_lessonwalk");
        QSettings().clear();
        QFont font = QApplication::font();
        font.setPointSizeF(10); // the app's own default (main.cpp)
        QApplication::setFont(font);
        QVERIFY2(screenAt(kSmallProjector) && screenAt(kLargeProjector), "the offscreen platform has both projectors");
    }

    void everyStepFitsTheProjector_data()
    {
        QTest::addColumn<QString>("lesson");
        QTest::addColumn<QRect>("projector");
        for (const std::string &file : lessonFilesIn(ATLAS_SOURCE_DIR "/lessons")) {
            const QString path = QString::fromStdString(file), name = QFileInfo(path).fileName();
            QTest::addRow("%s 1280x720", qPrintable(name)) << path << kSmallProjector;
            if (kBothProjectors)
                QTest::addRow("%s 1920x1080", qPrintable(name)) << path << kLargeProjector;
        }
    }

    void everyStepFitsTheProjector()
    {
        QFETCH(QString, lesson);
        QFETCH(QRect, projector);
        const QString shots = qEnvironmentVariable("ATLAS_SCREENSHOTS");
        QSettings().clear();
        // Both projectors' walks of a lesson share a session, as a lecturer's app keeps one: the second shows the
        // results the first computed (the session's recent analyses) instead of computing them again.
        std::unique_ptr<Session> &shared = m_sessions[lesson];
        if (!shared) {
            shared = std::make_unique<Session>();
            shared->setAnalysesOnLeastWork(kAnalysesOnLeastWork);
        }
        Session &session = *shared;
        MainWindow window(&session);
        window.setGeometry(projector.adjusted(40, 40, -40, -40));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCOMPARE(window.screen(), screenAt(projector));
        LessonPlayer &player = *window.lessons();
        player.setTrainingStepLimit(kTrainingSteps);
        QVERIFY(player.open(lesson));
        window.presentation()->setActive(true);
        QTRY_COMPARE(window.geometry(), projector); // full screen on the projector

        QStringList problems;
        const bool distinctOnly = kDistinctStepsOnly || qEnvironmentVariableIntValue("ATLAS_WALK_DISTINCT") == 1;
        const Lesson read = readLesson(lesson.toStdString());
        for (int step = 0; step < player.stepCount(); ++step) {
            const ViewSpec spec = stepViewSpec(read, read.steps.at(size_t(step)));
            if (distinctOnly && !m_walked.insert({spec.view, spec.model}).second)
                continue;
            if (step > 0)
                player.goTo(step); // what PageDown, the clicker's key, does for the next step (tst_lessonmode)
            QCOMPARE(player.stepIndex(), step);
            QTRY_VERIFY_WITH_TIMEOUT(player.stepSpec().has_value(), 300000);
            waitIdle(session);
            // A step's training (lesson 12's "Train one") is measured once done: its panel's texts change as it
            // runs, and how far it got when measured depends on the machine's load.
            for (const TrainPanel *train : window.findChildren<TrainPanel *>())
                QTRY_VERIFY_WITH_TIMEOUT(!train->worker()->running(), 300000);
            const QString where = QString("step %1 '%2' (%3)")
                                      .arg(step + 1)
                                      .arg(QString::fromStdString(player.currentStep().title))
                                      .arg(QString::fromStdString(session.spec().view));
            const double least = projectorMinimumPixels(projector);
            for (const QString &p : settledProblems(window, [&] { return stepProblems(window, least); }))
                problems << where + ": " + p;
            if (!shots.isEmpty())
                QVERIFY(window.grab().save(QString("%1/%2-%3x%4-step%5.png")
                                               .arg(shots, QFileInfo(lesson).baseName())
                                               .arg(projector.width())
                                               .arg(projector.height())
                                               .arg(step + 1, 2, 10, QChar('0'))));
        }
        window.presentation()->setActive(false);
        if (projector == kLargeProjector || !kBothProjectors)
            m_sessions.erase(lesson);
        problems.removeDuplicates();
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
    }

    // The PDF handout prints every step's view with its smallest text at 9 pt or more (the views drawn as the export
    // draws them, scaled onto the page).
    void theHandoutsFiguresPrintAtNinePoints()
    {
        const PdfFigureLayout layout = lessonPdfFigureLayout();
        QVERIFY(layout.figure.width() <= layout.page.width() && layout.figure.height() < layout.page.height());
        for (const char *name : {"01-self-attention.md", "11-experts.md", "18-side-by-side.md"}) {
            const Lesson lesson = readLesson(ATLAS_SOURCE_DIR "/lessons/" + std::string(name));
            for (const LessonStep &step : lesson.steps) {
                const std::unique_ptr<View> view = drawableView(stepViewSpec(lesson, step), layout.drawn.width(),
                    layout.drawn.height(), name, size_t(8) << 30, layout.zoom);
                view->show();
                QApplication::processEvents();
                TextRecorder recorder(view->logicalDpiY());
                recorder.record(view.get());
                const PaintedText least = recorder.smallest();
                QVERIFY2(view->clippedTexts().isEmpty(), qPrintable(view->clippedTexts().join(", ")));
                QVERIFY2(least.pixels * layout.pointsPerFigurePixel >= 9.0,
                    qPrintable(QString("%1, step '%2': '%3' prints at %4 pt")
                                   .arg(name, QString::fromStdString(step.title), least.text.left(30))
                                   .arg(least.pixels * layout.pointsPerFigurePixel, 0, 'f', 1)));
            }
        }
    }
};

// The offscreen platform's screens are set before the application starts: a 1280×720 projector and a 1920×1080 one.
ATLAS_TEST_OWN_MAIN(TestLessonWalk)
{
    QTemporaryFile screens(QDir::tempPath() + "/tst_lessonwalk-screens-XXXXXX.json");
    if (!screens.open())
        return 2;
    auto screen = [](const char *name, const QRect &r) {
        return QString(R"({"name": "%1", "x": %2, "y": %3, "width": %4, "height": %5, "logicalDpi": 96, "dpr": 1})")
            .arg(name)
            .arg(r.x())
            .arg(r.y())
            .arg(r.width())
            .arg(r.height());
    };
    screens.write(QString(R"({"screens": [%1, %2]})")
                      .arg(screen("small", kSmallProjector), screen("large", kLargeProjector))
                      .toUtf8());
    screens.close();
    qputenv("QT_QPA_PLATFORM", QByteArray("offscreen:configfile=") + screens.fileName().toUtf8());
    QApplication app(argc, argv);
    TestLessonWalk test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_lessonwalk.moc"
