// The explorer as a lecturer uses it: every tab laid out without clipping at 1280×720 and 1920×1080, at zoom 100 %
// and 150 %, in both themes; the stepping keys after Enter; the tab and zoom shortcuts. Set ATLAS_SCREENSHOTS=DIR to
// save a picture of every tab at every size.
#include "attentionmap/attentionview.h"
#include "dialogs/shortcutsdialog.h"
#include "dialogs/viewhelpdialog.h"
#include "experts/experts.h"
#include "experts/expertsview.h"
#include "layouttesting.h"
#include "mainwindow.h"
#include "panels/trainpanel.h"
#include "presentationmode.h"
#include "sanitizertesting.h"
#include "session/session.h"
#include "style/theme.h"
#include "testbundle.h"
#include "view/viewkinds.h"
#include "viewnavigator.h"
#include "views/heatmapplot.h"
#include "views/plottheme.h"
#include "views/view.h"
#include "zoomcontroller.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractScrollArea>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QMap>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QTabBar>
#include <QTabWidget>
#include <QTest>
#include <QTextBrowser>

#include <QToolBar>
#include <memory>

#include <qcustomplot.h>

#include <cmath>

using namespace atlas;
using atlas::testing::layoutProblems;
using atlas::testing::TextRecorder;
using atlas::testing::wordingProblems;

namespace {

// WCAG's contrast ratio of two colours: 1 (same) … 21 (black on white); 4.5 is the minimum for body text.
double contrast(const QColor &a, const QColor &b)
{
    auto luminance = [](const QColor &c) {
        auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
    };
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// Every visible, enabled text widget under `root` whose text colour does not stand out from its background by 4.5:1
// (the palette's roles, which a style sheet colour also sets).
QStringList illegibleWidgets(QWidget *root)
{
    QStringList out;
    for (QWidget *w : root->findChildren<QWidget *>()) {
        if (!w->isVisible() || !w->isEnabled())
            continue;
        const bool text = qobject_cast<QLabel *>(w) || qobject_cast<QAbstractButton *>(w)
            || qobject_cast<QLineEdit *>(w) || qobject_cast<QComboBox *>(w) || qobject_cast<QAbstractItemView *>(w);
        if (!text)
            continue;
        w->ensurePolished();
        const QPalette p = w->palette();
        const bool field = qobject_cast<QLineEdit *>(w) || qobject_cast<QAbstractItemView *>(w);
        const QColor fg = p.color(field ? QPalette::Text : w->foregroundRole());
        const QColor bg = p.color(field ? QPalette::Base : w->backgroundRole());
        if (const double c = contrast(fg, bg); c < 4.5)
            out << QStringLiteral("%1 '%2' %3 on %4 (%5:1)")
                       .arg(w->metaObject()->className(), w->objectName(), fg.name(), bg.name())
                       .arg(c, 0, 'f', 1);
    }
    return out;
}

} // namespace

class TestClassroom : public QObject
{
    Q_OBJECT

    std::unique_ptr<Session> m_tabsSession; // everyTabFitsAtProjectorSizesAndZooms' rows share it

    static void waitIdle(Session &session)
    {
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy(), kComputeWaitFactor * 20000);
        QTest::qWait(20);
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy() && !session.analysis().pending, kComputeWaitFactor * 30000);
    }

    // The window shown at `size` on the reverse model, its default input run to the end.
    static void showOnReverse(Session &session, MainWindow &window, QSize size)
    {
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        session.openModel("reverse");
        QTRY_VERIFY_WITH_TIMEOUT(session.program() != nullptr, 20000);
        waitIdle(session);
    }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("TransformerAtlasTest");
        QCoreApplication::setApplicationName("tst_classroom");
        QSettings().clear();
        QFont font = QApplication::font();
        font.setPointSizeF(10); // the app's own default (main.cpp)
        QApplication::setFont(font);
    }

    void everyTabFitsAtProjectorSizesAndZooms_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<double>("zoom");
        QTest::addColumn<QString>("theme");
        QTest::newRow("1280x720 100%") << QSize(1280, 720) << 1.0 << "light";
        QTest::newRow("1280x720 150%") << QSize(1280, 720) << 1.5 << "dark";
        // Under the sanitizers the larger projector is left out: its rows run the same code as the smaller one's
        // (both themes and zooms are there) on other geometry, which the normal build checks.
        if (kUnderSanitizers)
            return;
        QTest::newRow("1920x1080 100%") << QSize(1920, 1080) << 1.0 << "dark";
        QTest::newRow("1920x1080 150%") << QSize(1920, 1080) << 1.5 << "light";
    }

    void everyTabFitsAtProjectorSizesAndZooms()
    {
        QFETCH(QSize, size);
        QFETCH(double, zoom);
        QFETCH(QString, theme);
        const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS");
        // One session for every size, as a lecturer's app keeps one: each size shows the tabs' results computed
        // at the first (the session's recent analyses; the memory sweeps take seconds).
        if (!m_tabsSession) {
            m_tabsSession = std::make_unique<Session>();
            // Layout is checked here, not numbers: under the sanitizers the analyses run on the least work (one
            // measured step per memory sweep point, two held-out examples), as the lesson walk's do there.
            m_tabsSession->setAnalysesOnLeastWork(kAnalysesOnLeastWork);
        }
        Session &session = *m_tabsSession;
        ViewSpec spec;
        spec.model = "reverse";
        spec.text = "abcdefgh>hgfedcba";
        spec.theme = theme.toStdString();
        session.setSpec(spec);
        MainWindow window(&session);
        window.findChild<QAction *>("actionDarkTheme")->setChecked(theme == "dark"); // as the View menu does
        window.zoom()->setZoom(zoom);
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        if (qEnvironmentVariableIsSet("ATLAS_DEBUG_SIZES")) {
            qDebug() << "window min" << window.minimumSizeHint();
            for (QDockWidget *d : window.findChildren<QDockWidget *>())
                qDebug() << d->objectName() << d->minimumSizeHint() << d->isVisible();
            for (View *v : window.navigator()->views())
                qDebug() << v->metaObject()->className() << v->minimumSizeHint();
            qDebug() << "navigator" << window.navigator()->minimumSizeHint();
            for (QToolBar *t : window.findChildren<QToolBar *>())
                qDebug() << "toolbar" << t->minimumSizeHint() << t->sizeHint();
        }
        QVERIFY2(window.minimumSizeHint().width() <= size.width() && window.minimumSizeHint().height() <= size.height(),
            qPrintable(QString("the window needs at least %1×%2")
                           .arg(window.minimumSizeHint().width())
                           .arg(window.minimumSizeHint().height())));
        if (!session.model() || session.model()->name != "reverse")
            session.openModel("reverse");
        QTRY_VERIFY_WITH_TIMEOUT(session.program() != nullptr, 20000);
        waitIdle(session);
        ViewNavigator *tabs = window.navigator();
        QStringList problems;
        for (int i = 0; i < tabs->count(); ++i) {
            tabs->setCurrentIndex(i);
            waitIdle(session);
            const QString kind = QString::fromStdString(viewKinds()[size_t(i)].kind);
            for (const QString &p : settledLayoutProblems(window)) // painted, so painted views report what they cut
                problems << kind + ": " + p;
            // The page in the theme's colours, not the application's: a caption written for the dark theme on the
            // light grey was unreadable.
            if (const QColor corner = tabs->currentView()->grab().toImage().pixelColor(0, 0);
                corner != themeColors(spec.theme).background)
                problems << kind + ": the page's corner is " + corner.name() + ", not the theme's background";
            TextRecorder recorder(window.logicalDpiY());
            recorder.record(tabs->currentView());
            for (const QString &p : wordingProblems(recorder.texts()))
                problems << kind + ": " + p;
            if (!dir.isEmpty())
                QVERIFY(window.grab().save(QString("%1/%2x%3-%4-%5.png")
                                               .arg(dir)
                                               .arg(size.width())
                                               .arg(size.height())
                                               .arg(int(zoom * 100))
                                               .arg(kind)));
        }
        problems.removeDuplicates();
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        window.zoom()->setZoom(1.0);
    }

    // The Experts tab draws routing only for a model with experts: austen-switch at the projector's size, its slider
    // re-routing through the session.
    void expertsTabFitsWithASwitchModel_data()
    {
        QTest::addColumn<double>("zoom");
        QTest::newRow("1280x720 100%") << 1.0;
        QTest::newRow("1280x720 150%") << 1.5;
    }
    void expertsTabFitsWithASwitchModel()
    {
        QFETCH(double, zoom);
        Session session;
        ViewSpec spec;
        spec.model = "austen-switch";
        spec.text = "It is a truth universally acknowledged";
        spec.view = "experts";
        session.setSpec(spec);
        MainWindow window(&session);
        window.zoom()->setZoom(zoom);
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        session.openModel("austen-switch");
        QTRY_VERIFY_WITH_TIMEOUT(session.program() != nullptr, 20000);
        waitIdle(session);
        ViewNavigator *tabs = window.navigator();
        int experts = -1;
        for (size_t i = 0; i < viewKinds().size(); ++i)
            experts = viewKinds()[i].kind == "experts" ? int(i) : experts;
        tabs->setCurrentIndex(experts);
        auto *view = qobject_cast<ExpertsView *>(tabs->views()[size_t(experts)]);
        QVERIFY(view);
        QTRY_VERIFY_WITH_TIMEOUT(view->drawnAnalysis() != nullptr, 20000);
        const QStringList problems = settledLayoutProblems(window);
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            window.grab().save(QString("%1/1280x720-%2-experts-first.png").arg(dir).arg(int(zoom * 100)));
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        QCOMPARE(view->drawnAnalysis()->routing.capacity, 12); // ⌈1.25 · 38 / 4⌉ = ⌈11.875⌉
        // The slider runs in the factor's order (0.25 at its left end), starting at the model's own 1.25.
        QCOMPARE(view->capacitySlider()->minimum(), 1);
        QCOMPARE(view->capacitySlider()->value(), 5);
        view->capacitySlider()->setValue(2); // 0.5: ⌈0.5 · 38 / 4⌉ = 5
        QTRY_VERIFY_WITH_TIMEOUT(view->drawnAnalysis()->routing.capacity == 5, 20000);
        QCOMPARE(session.spec().get(views::experts::kCapacityFactor), 0.5);
        QCOMPARE(view->capacitySlider()->value(), 2);
        view->capacitySlider()->setValue(5); // back to 1.25: the model's own again
        QTRY_VERIFY_WITH_TIMEOUT(view->drawnAnalysis()->routing.capacity == 12, 20000);
        QCOMPARE(session.spec().get(views::experts::kCapacityFactor), 0.0);
        QCOMPARE(view->capacitySlider()->value(), 5);
        view->capacitySlider()->setValue(2);
        QTRY_VERIFY_WITH_TIMEOUT(view->drawnAnalysis()->routing.capacity == 5, 20000);
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(
                window.grab().save(QString("%1/1280x720-%2-experts-austen-switch.png").arg(dir).arg(int(zoom * 100))));
        window.zoom()->setZoom(1.0);
    }

    // An encoder-decoder at 1280×720, 100 % and 150 %: the Input panel's Source and Decoder boxes, the toolbar's
    // Attention box (shown for this model only) switching the attention views to cross-attention, every one of them
    // laid out whole.
    void anEncoderDecoderFitsTheProjector_data() { expertsTabFitsWithASwitchModel_data(); }
    void anEncoderDecoderFitsTheProjector()
    {
        QFETCH(double, zoom);
        Session session;
        MainWindow window(&session);
        window.zoom()->setZoom(zoom);
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto *site = window.findChild<QComboBox *>("attentionSite");
        QVERIFY(site);
        session.openModel("seq2seq-sort", true);
        QTRY_VERIFY_WITH_TIMEOUT(session.program() != nullptr && !session.busy(), 20000);
        QTRY_VERIFY(site->isVisible());
        auto *decoder = window.findChild<QLineEdit *>("decoderText");
        QVERIFY(decoder && decoder->isVisible());
        QCOMPARE(decoder->text(), QString::fromStdString(session.model()->config.decoderSample));
        site->setCurrentIndex(site->findData("cross"));
        emit site->activated(site->currentIndex());
        QCOMPARE(session.spec().site, std::string("cross"));
        ViewNavigator *tabs = window.navigator();
        QStringList problems;
        for (const char *kind : {"attention", "heads", "lines", "mask"}) {
            window.showViewKind(kind);
            waitIdle(session);
            for (const QString &p : settledLayoutProblems(window))
                problems << QString(kind) + ": " + p;
            QCOMPARE(tabs->currentView()->input().site.cross, true);
            if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
                QVERIFY(window.grab().save(
                    QString("%1/1280x720-%2-seq2seq-cross-%3.png").arg(dir).arg(int(zoom * 100)).arg(kind)));
        }
        // The Train panel trains the task after a few steps: the probe's source and decoder input, its Show box.
        auto *train = window.findChild<QDockWidget *>("Train");
        train->show();
        train->raise();
        auto *task = window.findChild<QComboBox *>("trainTask");
        task->setCurrentIndex(task->findData("seq2seq-sort"));
        window.findChild<QSpinBox *>("trainSteps")->setValue(6);
        window.findChild<QPushButton *>("trainStart")->click();
        auto *panel = window.findChild<TrainPanel *>();
        QTRY_VERIFY_WITH_TIMEOUT(panel->worker()->state() == TrainingWorker::State::Finished, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(panel->attentionView()->input().trace != nullptr, 10000);
        for (const QString &p : settledLayoutProblems(window))
            problems << QString("train: ") + p;
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(window.grab().save(QString("%1/1280x720-%2-seq2seq-train.png").arg(dir).arg(int(zoom * 100))));
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        session.openModel("reverse", true); // a one-stack model: no Attention box, no Decoder box
        QTRY_VERIFY_WITH_TIMEOUT(session.model()->name == "reverse" && !session.busy(), 20000);
        QTRY_VERIFY(!site->isVisible() && !decoder->isVisible());
        QCOMPARE(session.spec().site, std::string("self"));
        window.zoom()->setZoom(1.0);
    }

    // After Enter in the Input box the focus leaves it, so Space steps instead of typing a space.
    void steppingKeysWorkAfterEnter()
    {
        Session session;
        MainWindow window(&session);
        showOnReverse(session, window, QSize(1280, 720));
        auto *box = window.findChild<QDockWidget *>("Input")->findChild<QLineEdit *>();
        box->setFocus();
        box->setText("abcd>dcba");
        QTest::keyClick(box, Qt::Key_Return);
        waitIdle(session);
        QVERIFY(!box->hasFocus());
        QTest::keyClick(window.focusWidget() ? window.focusWidget() : &window, Qt::Key_Home);
        waitIdle(session);
        QCOMPARE(session.cursor(), 0);
        QTest::keyClick(window.focusWidget() ? window.focusWidget() : &window, Qt::Key_Space);
        waitIdle(session);
        QCOMPARE(session.cursor(), 1);
        QCOMPARE(box->text(), QString("abcd>dcba")); // no space typed into it
    }

    void tabAndZoomShortcuts()
    {
        Session session;
        MainWindow window(&session);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ViewNavigator *tabs = window.navigator();
        QTest::keyClick(&window, Qt::Key_3, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), 2);
        QTest::keyClick(&window, Qt::Key_PageDown, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), 3);
        QCOMPARE(session.spec().view, viewKinds()[3].kind); // the spec names the tab on screen
        const double before = QApplication::font().pointSizeF();
        QTest::keyClick(&window, Qt::Key_Equal, Qt::ControlModifier);
        QVERIFY(QApplication::font().pointSizeF() > before);
        QCOMPARE(QSettings().value("view/zoom").toDouble(), window.zoom()->zoom());
        QTest::keyClick(&window, Qt::Key_0, Qt::ControlModifier);
        QCOMPARE(QApplication::font().pointSizeF(), before);
    }

    // Zooming to 200 % and back (Ctrl+0), or presenting (F5) and leaving, gives the window its layout back: the docks
    // widen for the large fonts and must not keep that width afterwards (the view shrank to 340 px at 1280×720).
    void zoomingBackRestoresTheLayout()
    {
        Session session;
        MainWindow window(&session);
        showOnReverse(session, window, QSize(1280, 720));
        QTest::qWait(50);
        const auto widths = [&window] {
            QMap<QString, int> w;
            for (QDockWidget *dock : window.findChildren<QDockWidget *>())
                if (dock->isVisible())
                    w[dock->objectName()] = dock->width();
            w["the view"] = window.navigator()->width();
            return w;
        };
        // Bounded waits, not fixed ones: under the sanitizers a relayout takes more than 100 ms.
        const QMap<QString, int> before = widths();
        window.zoom()->setZoom(2.0);
        QTRY_VERIFY2_WITH_TIMEOUT(
            widths()["Operations"] > before["Operations"], "the large fonts widen the Operations dock", 20000);
        QTest::keyClick(&window, Qt::Key_0, Qt::ControlModifier);
        QTRY_COMPARE_WITH_TIMEOUT(widths(), before, 20000);

        window.presentation()->setActive(true);
        QTest::qWait(100);
        window.presentation()->setActive(false);
        QTRY_COMPARE_WITH_TIMEOUT(window.size(), QSize(1280, 720), 20000);
        QTRY_COMPARE_WITH_TIMEOUT(widths(), before, 20000);
    }

    // View ▸ Go to View lists every view under its group, not only the nine with a Ctrl+digit shortcut.
    void goToViewListsEveryViewByGroup()
    {
        Session session;
        MainWindow window(&session);
        window.show();
        auto *goTo = window.findChild<QMenu *>("menuGoToView");
        QVERIFY(goTo);
        QStringList groups;
        std::vector<QAction *> views;
        for (QAction *groupAction : goTo->actions()) {
            QVERIFY(groupAction->menu());
            groups << groupAction->text();
            for (QAction *view : groupAction->menu()->actions())
                views.push_back(view);
        }
        QCOMPARE(views.size(), viewKinds().size());
        QCOMPARE(groups.first(), QString::fromStdString(viewKinds().front().group));
        QVERIFY(groups.size() >= 5);
        for (size_t i = 0; i < views.size(); ++i) {
            QCOMPARE(views[i]->text(), QString::fromStdString(viewKinds()[i].title));
            QVERIFY(!views[i]->toolTip().isEmpty());
        }
        views.back()->trigger();
        QCOMPARE(window.navigator()->currentIndex(), int(views.size()) - 1);
        QCOMPARE(views[8]->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_9));
        QVERIFY(views[9]->shortcut().isEmpty());
    }

    // Every docked panel and the shortcuts dialog, in both palettes: text stands out from its background (4.5:1),
    // warnings included. ATLAS_SCREENSHOTS keeps a picture of each.
    void panelsAndDialogsAreLegibleInBothThemes_data()
    {
        QTest::addColumn<QString>("theme");
        QTest::newRow("light") << "light";
        QTest::newRow("dark") << "dark";
    }
    void panelsAndDialogsAreLegibleInBothThemes()
    {
        QFETCH(QString, theme);
        Session session;
        MainWindow window(&session);
        window.findChild<QAction *>("actionDarkTheme")->setChecked(theme == "dark");
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        session.openModel("reverse");
        QTRY_VERIFY_WITH_TIMEOUT(session.program() != nullptr, 20000);
        waitIdle(session);
        const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS");
        QStringList problems;
        for (QDockWidget *dock : window.findChildren<QDockWidget *>()) {
            dock->show();
            dock->raise();
            QTest::qWait(30);
            for (const QString &p : illegibleWidgets(dock))
                problems << dock->windowTitle() + ": " + p;
            if (!dir.isEmpty())
                dock->grab().save(QString("%1/panel-%2-%3.png").arg(dir, theme, dock->windowTitle()));
        }
        // The warning and accent colours the panels write in (a refused layer list, a failed run, generated text).
        for (const QColor &c : {warningTextColor(), accentTextColor()})
            for (auto role : {QPalette::Window, QPalette::Base})
                if (const double r = contrast(c, QApplication::palette().color(role)); r < 4.5)
                    problems << QStringLiteral("%1 on the palette's %2: %3:1").arg(c.name()).arg(int(role)).arg(r);
        ShortcutsDialog shortcuts(window.menuBar(), &window);
        shortcuts.show();
        QVERIFY(QTest::qWaitForWindowExposed(&shortcuts));
        for (const QString &p : illegibleWidgets(&shortcuts))
            problems << "Keyboard Shortcuts: " + p;
        if (!dir.isEmpty())
            shortcuts.grab().save(QString("%1/dialog-%2-shortcuts.png").arg(dir, theme));
        window.findChild<QAction *>("actionAboutView")->trigger(); // Help ▸ About This View, of the Attention view
        auto *help = window.findChild<ViewHelpDialog *>();
        QVERIFY(help && QTest::qWaitForWindowExposed(help));
        QVERIFY2(help->text()->toPlainText().contains("Keys it reads:"), qPrintable(help->text()->toPlainText()));
        for (const QString &p : illegibleWidgets(help))
            problems << "About This View: " + p;
        if (!dir.isEmpty())
            help->grab().save(QString("%1/dialog-%2-about-view.png").arg(dir, theme));
        help->close();
        problems.removeDuplicates();
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        window.findChild<QAction *>("actionDarkTheme")->setChecked(false);
    }
};

QTEST_MAIN(TestClassroom)
#include "tst_classroom.moc"
