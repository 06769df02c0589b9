// A model file, a lesson and a view spec opened in the window as a user opens them: dropped on it. (Opening by menu
// goes through the same Session::openModel; `transformer-atlas PATH` classifies its argument as a drop does, which
// tst_cli checks; tst_ggufmodels checks what a GGUF file holds.)
#include "dialogs/courseoutlinedialog.h"
#include "mainwindow.h"
#include "panels/modelinfopanel.h"
#include "session/lessonplayer.h"
#include "session/session.h"
#include "sessiontesting.h"
#include "testbundle.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTest>
#include <QTextBrowser>

#include <algorithm>
#include <memory>

using namespace atlas;
using namespace atlas::testing;

class TestOpenModelFiles : public QObject
{
    Q_OBJECT

    // The window on `session`, shown at a size where every panel fits.
    static std::unique_ptr<MainWindow> showWindow(Session &session)
    {
        auto window = std::make_unique<MainWindow>(&session);
        window->resize(1400, 900);
        window->show();
        return window;
    }

    // Drags `path` onto the window and drops it there if the window accepts it as it enters; false when refused.
    static bool dropOn(MainWindow &window, const QString &path)
    {
        QMimeData data;
        data.setUrls({QUrl::fromLocalFile(path)});
        QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &enter);
        if (!enter.isAccepted())
            return false;
        QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &drop);
        return true;
    }

    // Drops `path` on `window` and waits until `session` has run the model it opened: empty then, else why not (the
    // drop refused, the session's error, or no run within 20 s).
    static QString dropAndRun(MainWindow &window, Session &session, const QString &path)
    {
        QSignalSpy traced(&session, &Session::traceChanged), errors(&session, &Session::errorOccurred);
        if (!dropOn(window, path))
            return "the window refused " + path;
        if (!QTest::qWaitFor([&] { return traced.count() > 0 || errors.count() > 0; }, 20000))
            return "no run of " + path + " within 20 s";
        waitIdle(session);
        return errors.isEmpty() ? QString() : errors.first().first().toString();
    }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("TransformerAtlasTest");
        QCoreApplication::setApplicationName("tst_openmodelfiles");
    }

    // A .gguf file dropped on the window opens, with its own tokenizer, and the model panel says what the file held.
    void opensADroppedGgufFile()
    {
        Session session;
        ViewSpec spec;
        spec.text = "abcd abba";
        session.setSpec(spec);
        const std::unique_ptr<MainWindow> shown = showWindow(session);
        MainWindow &window = *shown;
        const QString why = dropAndRun(window, session, ATLAS_TEST_DATA "/gguf/models/llama_tiny-q8_0.gguf");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QCOMPARE(QString::fromStdString(session.model()->name), QString("llama_tiny-q8_0"));
        QCOMPARE(session.input().tokens, (std::vector<int> {62, 63, 62, 1, 0})); // ab cd ab b a: the file's BPE
        auto *panel = window.findChild<ModelInfoPanel *>();
        QVERIFY(panel);
        const QString text = panel->text();
        QVERIFY2(text.contains("GGUF, llama.cpp's llama architecture") && text.contains("stored as Q8_0")
                && text.contains("adjacent pairs") && text.contains("rope_freqs"),
            qPrintable(text));
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(window.grab().save(dir + "/window-gguf.png"));
    }

    // Issue 60: a t5 file (an encoder–decoder as llama.cpp's T5Model writes it, with T5's Unigram tokenizer) opens as
    // one: the text is the encoder's source, the decoder starts from the file's start token, and the panel says how
    // it was read.
    void opensAT5File()
    {
        Session session;
        ViewSpec spec;
        spec.text = "abcd abba";
        session.setSpec(spec);
        const std::unique_ptr<MainWindow> shown = showWindow(session);
        MainWindow &window = *shown;
        const QString why = dropAndRun(window, session, ATLAS_TEST_DATA "/gguf/models/t5v11_tiny_unigram-q8_0.gguf");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QVERIFY(session.model()->config.isEncoderDecoder());
        QVERIFY(session.input().source.size() > 2);
        QCOMPARE(session.input().source.back(), 1); // </s>, which llama.cpp adds after a Unigram vocabulary's text
        QCOMPARE(session.input().tokens, std::vector<int> {session.model()->config.decoderStart});
        const QString text = window.findChild<ModelInfoPanel *>()->text();
        QVERIFY2(text.contains("GGUF, llama.cpp's t5 architecture") && text.contains("read unscaled")
                && text.contains("32 buckets") && text.contains("128 positions apart"),
            qPrintable(text));
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(window.grab().save(dir + "/window-gguf-t5.png"));
    }

    // Issue 63: an FNet model's directory dropped on the window opens; the model panel says its blocks have no
    // attention.
    void opensAnFnetModel()
    {
        Session session;
        ViewSpec spec;
        spec.text = "It is a tr[MASK]th universally acknowledged";
        session.setSpec(spec);
        const std::unique_ptr<MainWindow> shown = showWindow(session);
        MainWindow &window = *shown;
        const QString why = dropAndRun(window, session, ATLAS_SOURCE_DIR "/resources/models/austen-fnet");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QCOMPARE(QString::fromStdString(session.model()->name), QString("austen-fnet"));
        QVERIFY(session.trace()->contains("layer.3.fourier.out"));
        const QString text = window.findChild<ModelInfoPanel *>()->text();
        QVERIFY2(text.contains("every block mixes its tokens by a Fourier transform over the 128 positions"),
            qPrintable(text));
        // the built-in model's own directory is its entry in the model box, and the status line names no heads
        const QList<QComboBox *> boxes = window.findChildren<QComboBox *>();
        QVERIFY(std::any_of(boxes.begin(), boxes.end(), [](const QComboBox *box) {
            return box->toolTip().startsWith("The built-in models") && box->currentText() == "austen-fnet";
        }));
        QVERIFY2(
            window.statusBar()->currentMessage().contains("4 layers mixing by a Fourier transform (FNet, no heads)"),
            qPrintable(window.statusBar()->currentMessage()));
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(window.grab().save(dir + "/window-fnet.png"));
    }

    // Issue 63: the Universal Transformer's directory opens as the built-in entry; the model panel says its six
    // blocks are one block's weights, halting per token.
    void opensAUniversalTransformer()
    {
        Session session;
        ViewSpec spec;
        spec.text = "She was not in the habit of";
        session.setSpec(spec);
        const std::unique_ptr<MainWindow> shown = showWindow(session);
        MainWindow &window = *shown;
        const QString why = dropAndRun(window, session, ATLAS_SOURCE_DIR "/resources/models/austen-ut");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        const QString text = window.findChild<ModelInfoPanel *>()->text();
        QVERIFY2(
            text.contains("one block's weights applied up to 6 times") && text.contains("74,753"), qPrintable(text));
        QVERIFY2(window.statusBar()->currentMessage().contains("6 layers of one shared block × 4 heads"),
            qPrintable(window.statusBar()->currentMessage()));
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty()) {
            QTest::qWait(1000);
            QVERIFY(window.grab().save(dir + "/window-ut.png"));
        }
    }

    // Issue 63: a lesson dropped on the window opens in the Lessons panel at its first step; a view spec dropped on it
    // shows its view; a file that is neither is refused as the drag enters.
    void opensADroppedLessonAndViewSpec()
    {
        Session session;
        session.setSpec(ViewSpec());
        const std::unique_ptr<MainWindow> shown = showWindow(session);
        MainWindow &window = *shown;
        waitIdle(session);
        QVERIFY(!dropOn(window, ATLAS_SOURCE_DIR "/README.md_no_such_file"));
        QVERIFY(!dropOn(window, ATLAS_SOURCE_DIR "/atlas")); // a file the app does not open

        QVERIFY(dropOn(window, ATLAS_SOURCE_DIR "/lessons/03-masks.md"));
        QVERIFY(window.lessons()->isOpen());
        QCOMPARE(
            QString::fromStdString(window.lessons()->lesson().path), QString(ATLAS_SOURCE_DIR "/lessons/03-masks.md"));
        QCOMPARE(window.lessons()->stepIndex(), 0);
        waitIdle(session);
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(window.grab().save(dir + "/window-dropped-lesson.png"));
        window.lessons()->close();

        QVERIFY(dropOn(window, ATLAS_SOURCE_DIR "/tests/fuzz/corpus/viewspec/lsh.json"));
        QTRY_VERIFY_WITH_TIMEOUT(session.spec().view == "lsh" && session.hasModel(), 20000);
        waitIdle(session);
        QCOMPARE(QString::fromStdString(session.model()->name), QString("reverse"));
        QCOMPARE(session.spec().text, std::string("abcdefghijklmnop>"));
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(window.grab().save(dir + "/window-dropped-spec.png"));
    }

    // Issue 63: Lessons ▸ Course Outline shows lessons/course.md, and a lesson's link in it opens that lesson.
    void theCourseOutlineOpensItsLessons()
    {
        Session session;
        session.setSpec(ViewSpec());
        const std::unique_ptr<MainWindow> shown = showWindow(session);
        MainWindow &window = *shown;
        waitIdle(session);
        auto *action = window.findChild<QAction *>("actionCourseOutline");
        QVERIFY(action);
        action->trigger();
        auto *outline = window.findChild<CourseOutlineDialog *>();
        QVERIFY(outline && outline->isVisible());
        const QString text = outline->text()->toPlainText();
        QVERIFY2(text.contains("Class 1: the recipe") && text.contains("Class 9"), qPrintable(text.left(400)));
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(outline->grab().save(dir + "/course-outline.png"));
        emit outline->text()->anchorClicked(QUrl(QStringLiteral("03-masks.md")));
        QVERIFY(window.lessons()->isOpen());
        QVERIFY(QString::fromStdString(window.lessons()->lesson().path).endsWith("/03-masks.md"));
        waitIdle(session);
    }

    // gpt-oss's MXFP4 checkpoint (a folder without a tokenizer: read on token ids) opens with its experts in their
    // blocks, and the panel says so.
    void opensAnMxfp4Checkpoint()
    {
        Session session;
        ViewSpec spec;
        spec.tokens = {3, 17, 42, 8};
        session.setSpec(spec);
        const std::unique_ptr<MainWindow> shown = showWindow(session);
        MainWindow &window = *shown;
        QSignalSpy traced(&session, &Session::traceChanged);
        session.openModel(ATLAS_TEST_DATA "/gpt_oss_mxfp4_tiny");
        QTRY_VERIFY_WITH_TIMEOUT(traced.count() > 0, 20000);
        waitIdle(session);
        QCOMPARE(QString::fromStdString(session.model()->name), QString("gpt_oss_mxfp4_tiny"));
        const QString text = window.findChild<ModelInfoPanel *>()->text();
        QVERIFY2(text.contains("the experts in their MXFP4 blocks, the rest as float32")
                && text.contains("stored as BF16 with MXFP4 experts"),
            qPrintable(text));
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(window.grab().save(dir + "/window-mxfp4.png"));
    }
};

QTEST_MAIN(TestOpenModelFiles)
#include "tst_openmodelfiles.moc"
