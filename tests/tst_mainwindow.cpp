// Widget smoke test: the real main window, offscreen, on the built-in model: steps, steps back, switches
// every view, clicks a head in the grid, and generates with the KV cache. Set ATLAS_SCREENSHOTS=DIR to save a
// PNG of every view.
#include "analysis/objectiveexample.h"
#include "dialogs/quickopen.h"
#include "dialogs/welcomedialog.h"
#include "fills/fillsview.h"
#include "focusedkeys.h"
#include "mainwindow.h"
#include "nexttoken/nexttokenview.h"
#include "objective/objectiveview.h"
#include "panels/inputpanel.h"
#include "session/lessonplayer.h"
#include "session/session.h"
#include "testbundle.h"
#include "viewnavigator.h"
#include "views/comparisonview.h"
#include "views/fillcards.h"
#include "views/view.h"
#include "windowtesting.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace atlas;
using namespace atlas::testing;

class TestMainWindow : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("TransformerAtlasTest");
        QCoreApplication::setApplicationName("tst_mainwindow");
    }

    void stepsAndSwitchesEveryView()
    {
        Session session;
        ViewSpec spec;
        spec.text = "The cat sat on the mat.";
        session.setSpec(spec);
        MainWindow window(&session);
        window.resize(1400, 900);
        window.show();
        QSignalSpy traced(&session, &Session::traceChanged);
        session.openModel("tiny-bytes");
        QTRY_VERIFY_WITH_TIMEOUT(traced.count() > 0, 20000);
        waitUntilSettled(session);
        QVERIFY(session.program());
        const int total = int(session.program()->ops.size());
        QCOMPARE(session.cursor(), total);
        QCOMPARE(int(session.input().tokens.size()), 23);

        session.rewind();
        waitUntilSettled(session);
        QCOMPARE(session.cursor(), 0);
        QVERIFY(session.trace()->entries().empty());
        for (int i = 0; i < 5; ++i) {
            QTest::keyClick(&window, Qt::Key_Space);
            waitUntilSettled(session);
        }
        QCOMPARE(session.cursor(), 5);
        QTest::keyClick(&window, Qt::Key_Space, Qt::ShiftModifier);
        waitUntilSettled(session);
        QCOMPARE(session.cursor(), 4);
        QVERIFY(session.trace()->contains("layer.0.ln_1")); // op 4
        QVERIFY(!session.trace()->contains("layer.0.attn.qkv")); // op 5, stepped back

        session.runToEnd();
        waitUntilSettled(session);
        QCOMPARE(session.cursor(), total);

        ViewNavigator *tabs = window.navigator();
        for (int i = 0; i < tabs->count(); ++i) {
            tabs->setCurrentIndex(i);
            QTRY_VERIFY(tabs->currentView() && tabs->currentView()->input().trace == session.trace());
            View *view = tabs->currentView();
            saveScreenshot(window, "window-" + QString::fromStdString(view->spec().view));
        }
    }

    void headsGridClickOpensThatHead()
    {
        Session session;
        MainWindow window(&session);
        showOnTinyBytes(session, window);
        QVERIFY(session.program() != nullptr);
        window.showViewKind("heads");
        QTRY_VERIFY(window.currentView() && window.currentView()->spec().view == "heads");
        View *grid = window.currentView();
        ViewSpec picked = grid->spec();
        picked.view = "attention";
        picked.layer = 1;
        picked.head = 3;
        emit grid->specEdited(picked);
        QTRY_COMPARE(session.spec().layer, 1);
        QCOMPARE(session.spec().head, 3);
        QCOMPARE(window.currentView()->spec().view, std::string("attention"));
        QCOMPARE(window.currentView()->spec().head, 3);
    }

    // A comparison takes the tab of the view on screen, follows a switch to another view, and leaves when stopped:
    // each tab then holds its own view again.
    void aComparisonTakesTheTabOnScreen()
    {
        Session session;
        MainWindow window(&session);
        showOnTinyBytes(session, window);
        window.showViewKind("attention");
        View *attention = window.currentView();
        ViewSpec spec = session.spec();
        spec.compare = "side";
        spec.compareText = "The dog sat on the log.";
        session.setSpec(spec);
        QTRY_VERIFY(qobject_cast<ComparisonView *>(window.currentView()) != nullptr);
        auto *comparison = qobject_cast<ComparisonView *>(window.currentView());
        QTRY_VERIFY_WITH_TIMEOUT(comparison->sideB() && comparison->sideB()->isVisible(), 20000);
        QCOMPARE(comparison->sideB()->input().tokens.join(QString()).replace(QChar(0x2423), ' '),
            QString("The dog sat on the log."));
        QCOMPARE(window.navigator()->currentKind(), std::string("attention"));

        window.showViewKind("lines");
        QTRY_COMPARE(session.spec().view, std::string("lines"));
        QCOMPARE(window.currentView(), comparison);
        QCOMPARE(comparison->sideA()->spec().view, std::string("lines"));
        QCOMPARE(window.navigator()->currentKind(), std::string("lines"));
        QVERIFY(attention->parentWidget() != nullptr && !attention->isWindow()); // back in its tab, not a window

        for (QPushButton *button : comparison->findChildren<QPushButton *>())
            if (button->text() == "Stop comparing")
                button->click();
        QTRY_VERIFY(session.spec().compare.empty());
        QVERIFY(session.spec().compareText.empty());
        QVERIFY(qobject_cast<ComparisonView *>(window.currentView()) == nullptr);
        QCOMPARE(window.currentView(), window.navigator()->views()[size_t(window.navigator()->currentIndex())]);
        window.showViewKind("attention");
        QCOMPARE(window.currentView(), attention);
    }

    // The welcome comes on the first launch only; its first button opens lesson 1 in the Lessons panel, and
    // Help ▸ Welcome brings it back.
    void theWelcomeComesOnceAndLeadsToALesson()
    {
        QSettings().remove("welcome/dismissed");
        Session session;
        MainWindow window(&session);
        showOnTinyBytes(session, window);
        WelcomeDialog *welcome = window.showWelcome();
        QVERIFY(welcome && welcome->isVisible());
        saveScreenshot(*welcome, "welcome");
        welcome->lessonButton()->click();
        QTRY_VERIFY(window.lessons()->isOpen());
        QVERIFY(QString::fromStdString(window.lessons()->lesson().path).endsWith("01-self-attention.md"));
        QVERIFY(window.findChild<QDockWidget *>("Lessons")->isVisible());
        QVERIFY(window.showWelcome() == nullptr); // dismissed: not again
        QSettings settings;
        QVERIFY(settings.value("welcome/dismissed").toBool());
        welcome = window.showWelcome(true);
        QVERIFY(welcome && welcome->isVisible());
        welcome->exploreButton()->click();
        QTRY_VERIFY(!window.findChild<WelcomeDialog *>());
    }

    // Ctrl+K finds a view, a lesson or a model by a few letters of its name, and Enter opens it.
    void quickSearchOpensByName()
    {
        const std::vector<QuickOpenEntry> entries {{"View", "Mask", "Attention: the mask", {}},
            {"View", "Memory timeline", "Memory: one step", {}}, {"Model", "reverse-rope", "reverses with RoPE", {}},
            {"Lesson", "Masks: causal and padding", "lecture 002", {}}};
        QCOMPARE(QuickOpen::matches(entries, "mask"), (std::vector<int> {0, 3}));
        QCOMPARE(QuickOpen::matches(entries, "MEM time"), (std::vector<int> {1}));
        QCOMPARE(QuickOpen::matches(entries, "rope reverses"), (std::vector<int> {2})); // title and detail
        QCOMPARE(QuickOpen::matches(entries, "lesson"), (std::vector<int> {3})); // the kind is searched too
        QVERIFY(QuickOpen::matches(entries, "zebra").empty());
        QCOMPARE(QuickOpen::matches(entries, "").size(), entries.size());

        Session session;
        MainWindow window(&session);
        showOnTinyBytes(session, window);
        window.showViewKind("attention");
        QAction *goTo = nullptr;
        for (QAction *a : window.findChildren<QAction *>())
            if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_K))
                goTo = a;
        QVERIFY(goTo);
        bool typed = false;
        QTimer::singleShot(0, &window, [&] {
            auto *dialog = qobject_cast<QuickOpen *>(QApplication::activeModalWidget());
            if (!dialog)
                return;
            QTest::keyClicks(dialog->searchBox(), "timeline");
            typed = dialog->list()->currentItem()->text().contains("Memory timeline");
            QTest::keyClick(dialog->searchBox(), Qt::Key_Return);
        });
        goTo->trigger();
        QVERIFY(typed);
        QTRY_COMPARE(window.navigator()->currentKind(), std::string("memory-timeline"));
    }

    // As a student would: austen-mlm's Objectives view, a new draw, then "Fill with the model" opens the Masked
    // fills view on the same draw, its cards computed off the GUI thread.
    void theObjectivesViewOpensTheFillsOfItsDraw()
    {
        Session session;
        MainWindow window(&session);
        window.resize(1280, 720);
        window.show();
        session.openModel("austen-mlm");
        QTRY_VERIFY_WITH_TIMEOUT(session.model() && session.model()->name == "austen-mlm", 20000);
        waitUntilSettled(session);
        window.showViewKind("objective");
        QTRY_VERIFY(qobject_cast<ObjectiveView *>(window.currentView()) != nullptr);
        auto *objectives = qobject_cast<ObjectiveView *>(window.currentView());
        QVERIFY(objectives != nullptr);
        QVERIFY2(objectives->message().isEmpty(), qPrintable(objectives->message()));
        QCOMPARE(objectives->example()->text.objective, Objective::MaskedLm); // the model's own
        const std::vector<int> firstDraw = objectives->example()->text.input;
        objectives->redrawButton()->click(); // the next seed
        QTRY_COMPARE_WITH_TIMEOUT(session.spec().seed, 1, 5000);
        QVERIFY(objectives->example()->text.input != firstDraw);
        saveScreenshot(window, "objectives");
        objectives->fillButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(window.currentView()->spec().view, std::string("fills"), 5000);
        auto *fills = qobject_cast<FillsView *>(window.currentView());
        QVERIFY(fills != nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(!fills->cards()->cards().empty(), 20000);
        QCOMPARE(int(fills->cards()->cards().size()), objectives->example()->chosen.measured);
        QVERIFY(fills->formula().contains("seed 1"));
        saveScreenshot(window, "fills");
    }

    void generationGrowsTheInputAndTheCache()
    {
        Session session;
        MainWindow window(&session);
        session.openModel("tiny-bytes");
        QTRY_VERIFY_WITH_TIMEOUT(session.program() != nullptr, 20000);
        waitUntilSettled(session);
        const size_t before = session.input().tokens.size();
        QSignalSpy done(&session, &Session::generationFinished);
        session.generate(4, {});
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(session.input().tokens.size(), before + 4, 20000);
        waitUntilSettled(session);
        const GenerationReport report = done.at(0).at(0).value<GenerationReport>();
        QCOMPARE(report.tokens.size(), size_t(4));
        QCOMPARE(report.tokens.back().cachedPositions, int(before + 4));
        for (const GeneratedToken &t : report.tokens)
            QVERIFY(t.probability > 0 && t.probability <= 1);
        QCOMPARE(
            report.prompt + report.continuation, QString::fromStdString(session.spec().text)); // the Input box follows
        QCOMPARE(session.spec().text.size(), before + 4); // bytes

        // A model with a short context (austen: 128 characters) stops when it is full and keeps what it wrote.
        session.openModel("austen");
        QTRY_VERIFY_WITH_TIMEOUT(session.model() && session.model()->name == "austen" && !session.busy(), 20000);
        waitUntilSettled(session);
        const size_t prompt = session.input().tokens.size();
        QVERIFY(prompt < 128);
        session.generate(200, {});
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 2, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(session.input().tokens.size(), size_t(128), 20000);
        QVERIFY(done.at(1).at(0).value<GenerationReport>().stopped.contains("context of 128 tokens is full"));
    }

    void efficientKernelReplacesTheAttentionOps()
    {
        Session session;
        MainWindow window(&session);
        window.resize(1400, 900);
        window.show(); // the screenshot below is of the window as a user sees it
        session.openModel("tiny-bytes");
        QTRY_VERIFY_WITH_TIMEOUT(session.program() != nullptr, 20000);
        waitUntilSettled(session);
        QVERIFY(session.trace()->contains("layer.0.attn.scores"));
        session.setAttention("longformer", {"window=2"});
        QTRY_VERIFY_WITH_TIMEOUT(session.trace()->contains("layer.0.attn.mask"), 20000);
        waitUntilSettled(session);
        QVERIFY(!session.trace()->contains("layer.0.attn.scores"));
        const Tensor &mask = session.trace()->tensor("layer.1.attn.mask");
        const int64_t T = mask.dim(1);
        QCOMPARE(mask.data()[(T - 1) * T + 0], 0.0f); // the last query no longer sees the first key
        QCOMPARE(mask.data()[(T - 1) * T + T - 1], 1.0f);
        window.showViewKind("attention");
        QTRY_VERIFY(window.currentView()->input().trace == session.trace());
        saveScreenshot(window, "window-longformer");
        QSignalSpy errors(&session, &Session::errorOccurred);
        session.setAttention("lsh", {"roundz=2"});
        QCOMPARE(errors.count(), 1);
        QVERIFY(errors.first().first().toString().contains("roundz"));
    }

    // A view that edits the spec's attention (the pattern editor) reruns the model; edits made while a run is
    // going are not lost: the last one is computed once the run is done.
    void editingTheSpecsAttentionRerunsTheModel()
    {
        Session session;
        MainWindow window(&session);
        session.openModel("tiny-bytes");
        QTRY_VERIFY_WITH_TIMEOUT(session.program() != nullptr, 20000);
        waitUntilSettled(session);
        ViewSpec spec = session.spec();
        spec.attention = "longformer";
        spec.attentionParams = {"window=4"};
        session.setSpec(spec);
        QVERIFY(session.busy());
        spec.attentionParams = {"window=2"}; // while the first edit is computed
        session.setSpec(spec);
        QTRY_VERIFY_WITH_TIMEOUT(session.trace()->contains("layer.0.attn.mask"), 20000);
        waitUntilSettled(session);
        const Tensor &mask = session.trace()->tensor("layer.0.attn.mask");
        const int64_t T = mask.dim(1);
        QCOMPARE(mask.data()[(T - 1) * T + T - 3], 1.0f);
        QCOMPARE(mask.data()[(T - 1) * T + T - 4], 0.0f); // window 2: the key three back is out, as in the last edit
        spec.attention = "full";
        spec.attentionParams.clear();
        session.setSpec(spec);
        QTRY_VERIFY_WITH_TIMEOUT(session.trace()->contains("layer.0.attn.scores"), 20000);
        waitUntilSettled(session);

        // The toolbar's layers box: the kernel in layer 1 only.
        auto *layers = window.findChild<QLineEdit *>("attentionLayers");
        QVERIFY(layers);
        session.setAttention("longformer", {"window=2"});
        waitUntilSettled(session);
        QVERIFY(!session.trace()->contains("layer.0.attn.scores"));
        layers->setText("1");
        emit layers->returnPressed();
        QCOMPARE(session.spec().attentionLayers, std::vector<int> {1});
        QTRY_VERIFY_WITH_TIMEOUT(session.trace()->contains("layer.0.attn.scores"), 20000);
        waitUntilSettled(session);
        QVERIFY(!session.trace()->contains("layer.1.attn.scores"));
    }

    // Edit > Paste View Spec with a number no double holds: a warning naming the clipboard and the key, not an abort.
    void pastingABadSpecKeepsTheAppRunning()
    {
        Session session;
        MainWindow window(&session);
        window.show();
        auto *paste = window.findChild<QAction *>("actionPasteSpec");
        QVERIFY(paste);
        QString warning;
        QTimer closer;
        connect(&closer, &QTimer::timeout, this, [&] {
            if (auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget())) {
                warning = box->text();
                box->accept();
            }
        });
        closer.start(20);
        for (const char *bad : {R"({"layer": 1e500})", R"({"head": 99999999999999999999})", "[1, 2"}) {
            warning.clear();
            QApplication::clipboard()->setText(QString::fromUtf8(bad));
            paste->trigger();
            QVERIFY2(warning.startsWith("clipboard: "), qPrintable(warning));
        }
        QVERIFY2(warning.contains("not valid JSON"), qPrintable(warning));
        QApplication::clipboard()->setText(R"({"layer": 1e500})");
        paste->trigger();
        QVERIFY2(warning.contains("'layer'"), qPrintable(warning));
        QVERIFY(window.isVisible());
    }

    // Home and Space step the model from anywhere but a widget that uses those keys itself: Home in a slider or a
    // list, Space on a button (Home in the lesson list rewound the model, issue 28).
    void steppingKeysYieldToTheFocusedWidget()
    {
        Session session;
        MainWindow window(&session);
        showOnTinyBytes(session, window);
        QVERIFY(session.program() != nullptr);
        const int total = int(session.program()->ops.size());
        QCOMPARE(session.cursor(), total);

        QSlider slider(&window);
        slider.setRange(0, 10);
        slider.setValue(5);
        slider.show();
        slider.setFocus();
        QTest::keyClick(&slider, Qt::Key_Home);
        QCOMPARE(slider.value(), 0); // the slider took its key
        waitUntilSettled(session);
        QCOMPARE(session.cursor(), total);

        QListWidget list(&window);
        list.addItems({"one", "two", "three"});
        list.setCurrentRow(2);
        list.show();
        list.setFocus();
        QTest::keyClick(&list, Qt::Key_Home);
        QCOMPARE(list.currentRow(), 0);
        waitUntilSettled(session);
        QCOMPARE(session.cursor(), total);

        QPushButton button("press", &window);
        bool pressed = false;
        connect(&button, &QPushButton::clicked, [&] { pressed = true; });
        button.show();
        button.setFocus();
        QTest::keyClick(&button, Qt::Key_Space);
        QVERIFY(pressed);
        waitUntilSettled(session);
        QCOMPARE(session.cursor(), total);

        // With focus on the view, the window's shortcut steps as before.
        window.currentView()->setFocus();
        QTest::keyClick(window.currentView(), Qt::Key_Home);
        waitUntilSettled(session);
        QCOMPARE(session.cursor(), 0);
        QVERIFY(FocusedKeys::widgetUsesKey(&slider, QKeyEvent(QEvent::KeyPress, Qt::Key_End, Qt::NoModifier)));
        QVERIFY(!FocusedKeys::widgetUsesKey(&slider, QKeyEvent(QEvent::KeyPress, Qt::Key_Space, Qt::NoModifier)));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
