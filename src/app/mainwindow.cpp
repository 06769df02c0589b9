#include "mainwindow.h"

#include "focusedkeys.h"
#include "ui_mainwindow.h"

#include "dialogs/comparedialog.h"
#include "dialogs/shortcutsdialog.h"
#include "dialogs/viewhelpdialog.h"
#include "icons.h"
#include "model/builtinmodels.h"
#include "panels/attentionkernelbar.h"
#include "panels/attentionsitebox.h"
#include "panels/generationpanel.h"
#include "panels/inputpanel.h"
#include "panels/lessonpanel.h"
#include "panels/modelchooser.h"
#include "panels/modelinfopanel.h"
#include "panels/operationpanel.h"
#include "panels/trainpanel.h"
#include "presentationmode.h"
#include "session/lessonplayer.h"
#include "session/savedspec.h"
#include "session/session.h"
#include "style/theme.h"
#include "tensor/backgroundfree.h"
#include "util/error.h"
#include "view/viewkinds.h"
#include "viewnavigator.h"
#include "views/comparisonview.h"
#include "views/view.h"
#include "views/viewexport.h"
#include "views/viewfactory.h"
#include "zoomcontroller.h"

#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>
#include <QToolButton>

#include <map>

// The .qrc lives in a static library: its registration must be pulled in explicitly (outside any namespace).
static void initAtlasResources()
{
    Q_INIT_RESOURCE(resources);
}

namespace atlas {

MainWindow::MainWindow(Session *session, QWidget *parent)
    : QMainWindow(parent)
    , m_ui(std::make_unique<Ui::MainWindow>())
    , m_session(session)
{
    // The last reference to an old trace (GBs at thousands of tokens) often goes on this thread: its pages are
    // returned by another thread, so the window never waits for them.
    setFreeLargeBuffersInBackground(true);
    initAtlasResources();
    m_ui->setupUi(this);
    setWindowIcon(QIcon(":/icons/transformer-atlas.svg"));
    m_navigator = new ViewNavigator(this);
    m_ui->centralLayout->addWidget(m_navigator);
    std::vector<View *> views = m_navigator->views();
    views.push_back(m_navigator->comparison());
    for (View *view : views) {
        connect(view, &View::specEdited, m_session, &Session::setSpec);
        connect(view, &View::analysisCancelled, m_session, &Session::cancelAnalysis);
        connect(view, &View::modelRequested, this, [this](const QString &model) { m_session->openModel(model, true); });
        connect(view, &View::runAnywayRequested, m_session, &Session::runAnalysisAnyway);
    }
    m_zoom = new ZoomController(this);
    qApp->installEventFilter(new FocusedKeys(this));
    createDocks();
    createToolBarWidgets();
    createTabActions();
    paintIcons();
    connectActions();
    connectSession();
    connectLessons();
    restoreSettings();
    // A session that already holds a model and a spec (a second window, a test) sends no signal: show them now.
    showViewKind(QString::fromStdString(m_session->spec().view));
    refreshCurrentView();
    // The menus' shortcuts keep working while the menu bar is hidden (full screen, presentation).
    for (QMenu *menu : menuBar()->findChildren<QMenu *>())
        addActions(menu->actions());
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks()
{
    // Tall panels scroll inside their dock, so no panel can push the window past a 1280×720 projector.
    auto addDock = [this](QWidget *panel, const QString &title, Qt::DockWidgetArea area, bool scroll = false) {
        auto *dock = new QDockWidget(title, this);
        dock->setObjectName(title);
        if (scroll) {
            auto *scrollArea = new QScrollArea(dock);
            scrollArea->setWidget(panel);
            scrollArea->setWidgetResizable(true);
            scrollArea->setFrameShape(QFrame::NoFrame);
            dock->setWidget(scrollArea);
            // It scrolls down, not sideways: shown in a dock narrower than the panel, the dock widens to it (once the
            // window has laid the dock out: a dock raised as the window opens has no width yet).
            connect(dock, &QDockWidget::visibilityChanged, this, [this, dock, panel, scrollArea](bool visible) {
                if (!visible)
                    return;
                QMetaObject::invokeMethod(
                    this,
                    [this, dock, panel, scrollArea] {
                        const int needed
                            = panel->minimumSizeHint().width() + scrollArea->verticalScrollBar()->sizeHint().width();
                        if (dock->isVisible() && dock->width() < needed)
                            resizeDocks({dock}, {needed}, Qt::Horizontal);
                    },
                    Qt::QueuedConnection);
            });
        } else {
            dock->setWidget(panel);
        }
        addDockWidget(area, dock);
        m_ui->menuView->addAction(dock->toggleViewAction());
        return dock;
    };
    auto *input = new InputPanel(m_session, this);
    addDock(input, tr("Input"), Qt::TopDockWidgetArea)->setTitleBarWidget(new QWidget(this)); // height for the views
    connect(input, &InputPanel::submitted, this, [this] {
        if (currentView())
            currentView()->setFocus(); // Space, Home and the arrows step again after Enter
    });
    auto *ops = new OperationPanel(m_session, this);
    addDock(ops, tr("Operations"), Qt::LeftDockWidgetArea);
    tabifyDockWidget(addDock(new GenerationPanel(m_session, this), tr("Generate"), Qt::LeftDockWidgetArea, true),
        findChild<QDockWidget *>(tr("Operations")));
    m_train = new TrainPanel(m_session, this);
    tabifyDockWidget(
        findChild<QDockWidget *>(tr("Generate")), addDock(m_train, tr("Train"), Qt::LeftDockWidgetArea, true));
    QDockWidget *model = addDock(new ModelInfoPanel(m_session, this), tr("Model"), Qt::RightDockWidgetArea, true);
    model->hide(); // the toolbar's ⓘ button and View ▸ Model show it
    m_lessons = new LessonPlayer(m_session, this);
    m_lessonPanel = new LessonPanel(m_lessons, m_session, this);
    addDock(m_lessonPanel, tr("Lessons"), Qt::RightDockWidgetArea)->hide(); // Lessons ▸ Lessons Panel shows it
    findChild<QDockWidget *>(tr("Operations"))->raise();
    connect(ops, &OperationPanel::tensorChosen, this, [this](const QString &name) {
        ViewSpec spec = m_session->spec();
        spec.tensor = name.toStdString();
        m_session->setSpec(spec);
    });
}

void MainWindow::createToolBarWidgets()
{
    auto *bar = m_ui->stepToolBar;
    bar->addSeparator();
    auto *recent = new QMenu(tr("Open &Recent Model"), this);
    m_ui->menuFile->insertMenu(m_ui->actionOpenModel, recent);
    m_ui->menuFile->insertAction(recent->menuAction(), m_ui->actionOpenModel); // Open Model Directory first
    m_ui->menuFile->insertAction(recent->menuAction(), m_ui->actionOpenGguf);
    m_models = new ModelChooser(m_session, this, recent);
    setAcceptDrops(true); // a model, lesson or spec dropped anywhere on the window (wayfinding.cpp)
    bar->addWidget(new QLabel(tr(" Model "), this));
    bar->addWidget(m_models->box());
    auto *info = new QToolButton(this);
    m_infoButton = info;
    info->setToolTip(tr("What this model is, what to look at, its shape (the Model panel)"));
    connect(info, &QToolButton::clicked, this, [this] {
        QDockWidget *dock = findChild<QDockWidget *>(tr("Model"));
        dock->setVisible(!dock->isVisible());
    });
    bar->addWidget(info);
    m_layer = new QSpinBox(this);
    m_layer->setToolTip(tr("Layer shown by the views (Ctrl+[ and Ctrl+])"));
    m_head = new QSpinBox(this);
    m_head->setToolTip(tr("Head shown by the views ([ and ])"));
    bar->addWidget(new QLabel(tr("  Layer "), this));
    bar->addWidget(m_layer);
    bar->addWidget(new QLabel(tr("  Head "), this));
    bar->addWidget(m_head);
    m_attentionBar = addToolBar(tr("Attention"));
    m_attentionBar->setObjectName("attentionToolBar");
    new AttentionSiteBox(m_session, m_attentionBar);
    m_attentionBar->addWidget(new AttentionKernelBar(m_session, this));

    m_progress = new QProgressBar(this);
    m_progress->setMaximumWidth(220);
    m_progress->setVisible(false);
    m_cancel = new QToolButton(this);
    m_cancel->setDefaultAction(m_ui->actionCancel);
    m_cancel->setVisible(false);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
}

// View ▸ Go to View lists every view under its group, each with its summary; Ctrl+1 … Ctrl+9 go to the first nine,
// Ctrl+Page Down / Page Up to the next and previous.
void MainWindow::createTabActions()
{
    QMenu *goTo = m_ui->menuView->addMenu(tr("&Go to View"));
    goTo->setObjectName("menuGoToView");
    goTo->setToolTipsVisible(true);
    m_ui->menuView->insertMenu(m_ui->actionNextTab, goTo);
    const std::vector<ViewKind> &kinds = viewKinds();
    std::map<std::string, QMenu *> groups;
    for (size_t i = 0; i < kinds.size(); ++i) {
        QMenu *&group = groups[kinds[i].group];
        if (group == nullptr) {
            group = goTo->addMenu(tr(kinds[i].group.c_str()));
            group->setToolTipsVisible(true);
        }
        QAction *go = group->addAction(tr(kinds[i].title.c_str()));
        go->setToolTip(tr(kinds[i].summary.c_str()));
        go->setStatusTip(go->toolTip());
        if (i < 9)
            go->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + int(i))));
        connect(go, &QAction::triggered, this, [this, i] { m_navigator->setCurrentIndex(int(i)); });
    }
    auto *search = new QAction(tr("Go &To…"), this);
    search->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    search->setToolTip(tr("Open any view, lesson or model by typing a few letters of its name (Ctrl+K)"));
    m_ui->menuView->insertAction(goTo->menuAction(), search);
    connect(search, &QAction::triggered, this, &MainWindow::quickOpen);
    const auto shift = [this](int by) {
        const int n = m_navigator->count();
        m_navigator->setCurrentIndex((m_navigator->currentIndex() + by + n) % n);
    };
    connect(m_ui->actionNextTab, &QAction::triggered, this, [shift] { shift(1); });
    connect(m_ui->actionPrevTab, &QAction::triggered, this, [shift] { shift(-1); });
}

// The view alone on the whole screen: docks, toolbars, menus and the status bar hidden (F11; F11 or Esc back).
void MainWindow::setFullScreenView(bool on)
{
    if (on == isFullScreen())
        return;
    if (on) {
        m_windowedState = saveState();
        for (QDockWidget *dock : findChildren<QDockWidget *>())
            dock->hide();
        m_ui->stepToolBar->hide();
        m_attentionBar->hide();
        menuBar()->hide();
        statusBar()->hide();
        showFullScreen();
    } else {
        showNormal();
        menuBar()->show();
        statusBar()->show();
        restoreStateAfterRelayout(this, m_windowedState);
    }
    m_ui->actionFullScreen->setChecked(on);
}

void MainWindow::connectActions()
{
    connect(m_ui->actionStep, &QAction::triggered, m_session, &Session::step);
    connect(m_ui->actionBack, &QAction::triggered, m_session, &Session::back);
    connect(m_ui->actionRunToEnd, &QAction::triggered, m_session, &Session::runToEnd);
    connect(m_ui->actionRewind, &QAction::triggered, m_session, &Session::rewind);
    connect(m_ui->actionCancel, &QAction::triggered, this, [this] {
        if (m_presentation->isActive() && !m_session->busy())
            m_presentation->setActive(false); // Esc leaves presentation, or full screen, when nothing is running
        else if (isFullScreen() && !m_session->busy())
            setFullScreenView(false);
        else
            m_session->cancel();
    });
    connect(m_ui->actionQuit, &QAction::triggered, this, &QWidget::close);
    connect(m_ui->actionExportView, &QAction::triggered, this, &MainWindow::exportCurrentView);
    connect(m_ui->actionNextHead, &QAction::triggered, this, [this] { moveSelection(0, 1); });
    connect(m_ui->actionPrevHead, &QAction::triggered, this, [this] { moveSelection(0, -1); });
    connect(m_ui->actionNextLayer, &QAction::triggered, this, [this] { moveSelection(1, 0); });
    connect(m_ui->actionPrevLayer, &QAction::triggered, this, [this] { moveSelection(-1, 0); });
    connect(m_ui->actionDarkTheme, &QAction::toggled, this, [this](bool dark) {
        applyTheme(dark);
        ViewSpec spec = m_session->spec();
        spec.theme = dark ? "dark" : "light";
        m_session->setSpec(spec);
    });
    connect(m_ui->actionCopySpec, &QAction::triggered, this, [this] {
        const ViewSpec spec = m_session->spec();
        QApplication::clipboard()->setText(QString::fromStdString(spec.toJson()));
        statusBar()->showMessage(tr("View spec copied: `transformer-atlas render --spec FILE.json` draws it"), 5000);
    });
    connect(m_ui->actionPasteSpec, &QAction::triggered, this, [this] {
        try {
            m_session->applySpec(
                ViewSpec::fromJson(QApplication::clipboard()->text().toStdString(), "clipboard"), tr("clipboard"));
        } catch (const std::exception &e) { // atlas::Error, or std::bad_alloc: the app keeps running
            QMessageBox::warning(this, tr("Paste View Spec"), QString::fromStdString(e.what()));
        }
    });
    connect(m_ui->actionCompare, &QAction::triggered, this, [this] {
        if (!m_session->hasModel())
            return;
        CompareDialog dialog(m_session->spec(), this);
        if (dialog.exec() == QDialog::Accepted)
            m_session->setSpec(dialog.spec());
    });
    connect(m_ui->actionOpenModel, &QAction::triggered, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Open a Hugging Face model directory (config.json and safetensors)"));
        if (!dir.isEmpty())
            m_session->openModel(dir);
    });
    connect(m_ui->actionOpenGguf, &QAction::triggered, this, [this] {
        const QString file = QFileDialog::getOpenFileName(
            this, tr("Open a GGUF model file"), QString(), tr("GGUF models (*.gguf);;All files (*)"));
        if (!file.isEmpty())
            m_session->openModel(file);
    });
    connect(m_ui->actionOpenText, &QAction::triggered, this, [this] {
        QSettings settings;
        const QString file = QFileDialog::getOpenFileName(this, tr("Open a text file as the input"),
            settings.value("session/textDirectory").toString(), tr("Text (*.txt *.md);;All files (*)"));
        if (file.isEmpty())
            return;
        settings.setValue("session/textDirectory", QFileInfo(file).absolutePath());
        m_session->openTextFile(file);
    });
    connect(m_ui->actionMemoryBudget, &QAction::triggered, this, [this] {
        bool ok = false;
        const double gib = QInputDialog::getDouble(this, tr("Trace memory budget"),
            tr("Largest trace to keep in memory (GiB).\nA trace holds every "
               "intermediate tensor; attention matrices grow as T²."),
            double(m_session->memoryBudget()) / double(1 << 30), 0.25, 1024, 2, &ok);
        if (!ok)
            return;
        m_session->setMemoryBudget(size_t(gib * double(1 << 30)));
        QSettings().setValue("session/memoryBudgetGiB", gib);
    });
    connect(m_ui->actionZoomIn, &QAction::triggered, m_zoom, &ZoomController::zoomIn);
    m_ui->actionZoomIn->setShortcuts({QKeySequence(tr("Ctrl+=")), QKeySequence(tr("Ctrl++"))});
    connect(m_ui->actionZoomOut, &QAction::triggered, m_zoom, &ZoomController::zoomOut);
    connect(m_ui->actionZoomReset, &QAction::triggered, m_zoom, &ZoomController::reset);
    // Each zoom level keeps the layout it was left with: the docks widen for large fonts, and back at 100 % they
    // return to their widths instead of keeping the large ones (not while presenting or showing the view alone).
    connect(m_zoom, &ZoomController::zoomAboutToChange, this, [this](double zoom) {
        if (!m_presentation->isActive() && !isFullScreen())
            m_layoutAtZoom[zoom] = saveState();
    });
    connect(m_zoom, &ZoomController::zoomChanged, this, [this](double zoom) {
        if (!m_presentation->isActive() && !isFullScreen() && m_layoutAtZoom.contains(zoom))
            restoreStateAfterRelayout(this, m_layoutAtZoom[zoom]);
        statusBar()->showMessage(tr("Zoom %1 %").arg(std::lround(zoom * 100)), 3000);
        QMetaObject::invokeMethod(this, &MainWindow::fitToolBars, Qt::QueuedConnection); // after the relayout
    });
    connect(m_ui->actionFullScreen, &QAction::toggled, this, &MainWindow::setFullScreenView);
    connect(m_ui->actionShortcuts, &QAction::triggered, this, [this] {
        auto *dialog = new ShortcutsDialog(menuBar(), this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->open();
    });
    connect(m_ui->actionWelcome, &QAction::triggered, this, [this] { showWelcome(true); });
    connect(m_ui->actionAboutView, &QAction::triggered, this, &MainWindow::showViewHelp);
    connect(m_ui->actionAbout, &QAction::triggered, this, [this] {
        QMessageBox::about(this, tr("About Transformer Atlas"),
            tr("<b>Transformer Atlas</b><p>Runs small transformers one operation at a time and shows "
               "what each operation does.</p>"));
    });
    connect(m_layer, &QSpinBox::valueChanged, this, [this](int v) { moveSelection(v - m_session->spec().layer, 0); });
    connect(m_head, &QSpinBox::valueChanged, this, [this](int v) { moveSelection(0, v - m_session->spec().head); });
    connect(m_navigator, &ViewNavigator::currentChanged, this, [this](int index) {
        // The spec names the view on screen: the session computes what it needs (its analysis), and the spec a
        // user copies, or a lesson records, is this view's.
        ViewSpec spec = m_session->spec();
        spec.view = viewKinds().at(size_t(index)).kind;
        if (spec == m_session->spec())
            refreshCurrentView();
        m_session->setSpec(spec);
    });
}

void MainWindow::showProblem(const QString &title, const QString &message)
{
    statusBar()->showMessage(message, 15000);
    // Window-modal but not blocking: the event loop (and any running work) goes on behind it.
    auto *box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    box->raise(); // in front of the window, even where the window manager keeps the focus on it (Xvfb, some X11 setups)
    box->activateWindow();
}

void MainWindow::connectSession()
{
    connect(m_session, &Session::traceChanged, this, &MainWindow::refreshCurrentView);
    connect(m_session, &Session::specChanged, this, [this] {
        syncControls();
        showViewKind(QString::fromStdString(m_session->spec().view)); // e.g. a click in the heads grid opens a head
        refreshCurrentView();
    });
    connect(m_session, &Session::analysisChanged, this, &MainWindow::refreshCurrentView);
    connect(m_session, &Session::modelChanged, this, [this] {
        setWindowTitle(QString::fromStdString(m_session->model()->name)); // Qt appends " — Transformer Atlas"
        const ModelConfig &c = m_session->model()->config;
        statusBar()->showMessage(tr("%1: %2, d_model %3, context %4 (the Model panel says what it is)")
                                     .arg(QString::fromStdString(m_session->model()->name), modelShapeText(c))
                                     .arg(c.dModel)
                                     .arg(c.context),
            20000);
        syncControls();
    });
    connect(m_session, &Session::busyChanged, this, [this](bool busy) {
        m_progress->setVisible(busy);
        m_cancel->setVisible(busy);
        m_progress->setRange(0, 0);
    });
    connect(m_session, &Session::progressChanged, this, [this](int done, int total, const QString &what) {
        m_progress->setFormat(what.isEmpty() ? QStringLiteral("%p%") : what + QStringLiteral(" %p%"));
        m_progress->setRange(0, total);
        m_progress->setValue(done);
    });
    connect(m_session, &Session::noticed, this,
        [this](const QString &message) { statusBar()->showMessage(message, 15000); });
    connect(m_session, &Session::errorOccurred, this,
        [this](const QString &message) { showProblem(tr("Transformer Atlas"), message); });
}

// The toolbar's icons in the palette's text colour: visible on the light and on the dark palette.
void MainWindow::paintIcons()
{
    const QColor color = palette().color(QPalette::ButtonText);
    m_ui->actionRewind->setIcon(appIcon(AppIcon::Rewind, color));
    m_ui->actionBack->setIcon(appIcon(AppIcon::StepBack, color));
    m_ui->actionStep->setIcon(appIcon(AppIcon::Step, color));
    m_ui->actionRunToEnd->setIcon(appIcon(AppIcon::RunToEnd, color));
    m_infoButton->setIcon(appIcon(AppIcon::Info, color));
}

void MainWindow::changeEvent(QEvent *event)
{
    QMainWindow::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && m_infoButton)
        paintIcons();
}

View *MainWindow::currentView() const
{
    return m_navigator->currentView();
}

void MainWindow::showViewKind(const QString &kind)
{
    m_navigator->setCurrentKind(kind.toStdString());
}

void MainWindow::showViewHelp()
{
    const ViewKind *kind = findViewKind(m_session->spec().view);
    if (!kind)
        return;
    auto *dialog = new ViewHelpDialog(*kind, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

void MainWindow::refreshCurrentView()
{
    m_navigator->setComparing(!m_session->spec().compare.empty());
    View *view = currentView();
    if (!view || !m_session->hasModel())
        return;
    view->setInputAndSpec(m_session->viewInput(), m_session->spec());
}

void MainWindow::syncControls()
{
    if (!m_session->hasModel())
        return;
    const ModelConfig &c = m_session->model()->config;
    const QSignalBlocker b1(m_layer), b2(m_head);
    m_layer->setRange(0, m_session->layersShown() - 1);
    m_head->setRange(0, c.heads - 1);
    m_layer->setValue(m_session->spec().layer);
    m_head->setValue(std::max(0, m_session->spec().head));
    m_ui->actionDarkTheme->setChecked(m_session->spec().theme == "dark");
}

void MainWindow::moveSelection(int dLayer, int dHead)
{
    if (!m_session->hasModel())
        return;
    const ModelConfig &c = m_session->model()->config;
    ViewSpec spec = m_session->spec();
    spec.layer = std::clamp(spec.layer + dLayer, 0, m_session->layersShown() - 1);
    spec.head = std::clamp(spec.head + dHead, 0, c.heads - 1);
    m_session->setSpec(spec);
}

void MainWindow::exportCurrentView()
{
    View *view = currentView();
    const QString path = QFileDialog::getSaveFileName(this, tr("Export view"),
        QString::fromStdString(view->spec().view), tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"));
    if (path.isEmpty())
        return;
    try {
        exportView(view, path, view->size());
        statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
    } catch (const std::exception &e) {
        QMessageBox::warning(this, tr("Export view"), QString::fromStdString(e.what()));
    }
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    if (!restoreGeometry(settings.value("window/geometry").toByteArray())) {
        // First start: as large as suits the views, never larger than the screen (a 1280×720 projector).
        const QSize available = screen() ? screen()->availableGeometry().size() : QSize(1280, 720);
        resize(QSize(1400, 900).boundedTo(available * 0.95));
    }
    m_firstStart = !restoreState(settings.value("window/state").toByteArray());
    showViewKind(QString::fromStdString(m_session->spec().view));
    m_session->setMemoryBudget(size_t(settings.value("session/memoryBudgetGiB", 8.0).toDouble() * double(1 << 30)));
}

// The attention chooser shares the stepper's row when both fit, and takes a row of its own when they do not
// (a projector, a large zoom), so no control hides behind a toolbar's overflow arrow.
void MainWindow::fitToolBars()
{
    const bool fits = m_ui->stepToolBar->sizeHint().width() + m_attentionBar->sizeHint().width() + 24 <= width();
    if (fits && toolBarBreak(m_attentionBar))
        removeToolBarBreak(m_attentionBar);
    else if (!fits && !toolBarBreak(m_attentionBar))
        insertToolBarBreak(m_attentionBar);
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (!m_firstStart)
        return;
    m_firstStart = false; // first start: the Operations dock as narrow as its labels allow, the rest to the views
    QDockWidget *ops = findChild<QDockWidget *>(tr("Operations"));
    resizeDocks({ops}, {ops->minimumSizeHint().width()}, Qt::Horizontal);
}

void MainWindow::resizeEvent(QResizeEvent *event)
{
    QMainWindow::resizeEvent(event);
    fitToolBars();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    saveSpec(settings, m_session->spec());
    QMainWindow::closeEvent(event);
}

} // namespace atlas
