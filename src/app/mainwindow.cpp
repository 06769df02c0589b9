#include "mainwindow.h"
#include "ui_mainwindow.h"

#include "model/builtinmodels.h"
#include "panels/attentionkernelbar.h"
#include "panels/generationpanel.h"
#include "panels/inputpanel.h"
#include "panels/operationpanel.h"
#include "panels/trainpanel.h"
#include "session/session.h"
#include "theme.h"
#include "util/error.h"
#include "view/viewkinds.h"
#include "views/view.h"
#include "views/viewexport.h"
#include "views/viewfactory.h"

#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyle>
#include <QToolButton>

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
    initAtlasResources();
    m_ui->setupUi(this);
    setWindowIcon(QIcon(":/icons/transformer-atlas.svg"));
    for (const ViewKind &kind : viewKinds()) {
        View *view = createView(kind.kind, this).release();
        m_views.push_back(view);
        m_ui->viewTabs->addTab(view, tr(kind.title.c_str()));
        m_ui->viewTabs->setTabToolTip(m_ui->viewTabs->count() - 1, tr(kind.summary.c_str()));
        connect(view, &View::specEdited, m_session, &Session::setSpec);
    }
    createDocks();
    createToolBarWidgets();
    connectActions();
    connectSession();
    restoreSettings();
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks()
{
    auto addDock = [this](QWidget *panel, const QString &title, Qt::DockWidgetArea area) {
        auto *dock = new QDockWidget(title, this);
        dock->setObjectName(title);
        dock->setWidget(panel);
        addDockWidget(area, dock);
        m_ui->menuView->addAction(dock->toggleViewAction());
        return dock;
    };
    addDock(new InputPanel(m_session, this), tr("Input"), Qt::TopDockWidgetArea);
    auto *ops = new OperationPanel(m_session, this);
    addDock(ops, tr("Operations"), Qt::LeftDockWidgetArea);
    tabifyDockWidget(addDock(new GenerationPanel(m_session, this), tr("Generate"), Qt::LeftDockWidgetArea),
        findChild<QDockWidget *>(tr("Operations")));
    tabifyDockWidget(findChild<QDockWidget *>(tr("Generate")),
        addDock(new TrainPanel(m_session, this), tr("Train"), Qt::LeftDockWidgetArea));
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
    const QStyle *s = style();
    m_ui->actionRewind->setIcon(s->standardIcon(QStyle::SP_MediaSkipBackward));
    m_ui->actionBack->setIcon(s->standardIcon(QStyle::SP_MediaSeekBackward));
    m_ui->actionStep->setIcon(s->standardIcon(QStyle::SP_MediaSeekForward));
    m_ui->actionRunToEnd->setIcon(s->standardIcon(QStyle::SP_MediaSkipForward));
    bar->addSeparator();
    m_models = new QComboBox(this);
    m_models->setToolTip(tr("The built-in models; File ▸ Open Model Directory opens your own"));
    for (const BuiltinModel &m : builtinModels()) {
        m_models->addItem(QString::fromStdString(m.name), QString::fromStdString(m.name));
        m_models->setItemData(m_models->count() - 1, QString::fromStdString(m.description), Qt::ToolTipRole);
    }
    bar->addWidget(new QLabel(tr(" Model "), this));
    bar->addWidget(m_models);
    m_layer = new QSpinBox(this);
    m_layer->setToolTip(tr("Layer shown by the views (Ctrl+[ and Ctrl+])"));
    m_head = new QSpinBox(this);
    m_head->setToolTip(tr("Head shown by the views ([ and ])"));
    bar->addWidget(new QLabel(tr("  Layer "), this));
    bar->addWidget(m_layer);
    bar->addWidget(new QLabel(tr("  Head "), this));
    bar->addWidget(m_head);
    bar->addWidget(new AttentionKernelBar(m_session, this));

    m_progress = new QProgressBar(this);
    m_progress->setMaximumWidth(220);
    m_progress->setVisible(false);
    m_cancel = new QToolButton(this);
    m_cancel->setDefaultAction(m_ui->actionCancel);
    m_cancel->setVisible(false);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
}

void MainWindow::connectActions()
{
    connect(m_ui->actionStep, &QAction::triggered, m_session, &Session::step);
    connect(m_ui->actionBack, &QAction::triggered, m_session, &Session::back);
    connect(m_ui->actionRunToEnd, &QAction::triggered, m_session, &Session::runToEnd);
    connect(m_ui->actionRewind, &QAction::triggered, m_session, &Session::rewind);
    connect(m_ui->actionCancel, &QAction::triggered, m_session, &Session::cancel);
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
            const ViewSpec spec = ViewSpec::fromJson(QApplication::clipboard()->text().toStdString(), "clipboard");
            if (spec.model != m_session->spec().model)
                m_session->openModel(QString::fromStdString(spec.model));
            m_session->setSpec(spec);
            showViewKind(QString::fromStdString(spec.view));
        } catch (const Error &e) {
            QMessageBox::warning(this, tr("Paste View Spec"), QString::fromStdString(e.what()));
        }
    });
    connect(m_ui->actionOpenModel, &QAction::triggered, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a GPT-2 model directory"));
        if (!dir.isEmpty())
            m_session->openModel(dir);
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
    connect(m_ui->actionAbout, &QAction::triggered, this, [this] {
        QMessageBox::about(this, tr("About Transformer Atlas"),
            tr("<b>Transformer Atlas</b><p>Runs small transformers one operation at a time and shows "
               "what each operation does.</p>"));
    });
    connect(
        m_models, &QComboBox::activated, this, [this] { m_session->openModel(m_models->currentData().toString()); });
    connect(m_layer, &QSpinBox::valueChanged, this, [this](int v) { moveSelection(v - m_session->spec().layer, 0); });
    connect(m_head, &QSpinBox::valueChanged, this, [this](int v) { moveSelection(0, v - m_session->spec().head); });
    connect(m_ui->viewTabs, &QTabWidget::currentChanged, this, [this](int index) {
        // The spec names the view on screen: the session computes what it needs (its analysis), and the spec a
        // user copies, or a lesson records, is this view's.
        ViewSpec spec = m_session->spec();
        spec.view = viewKinds().at(size_t(index)).kind;
        if (spec == m_session->spec())
            refreshCurrentView();
        m_session->setSpec(spec);
    });
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
        m_models->setCurrentIndex(m_models->findData(QString::fromStdString(m_session->spec().model)));
        setWindowTitle(tr("Transformer Atlas — %1").arg(QString::fromStdString(m_session->model()->name)));
        m_models->setToolTip(QString::fromStdString(m_session->model()->config.description));
        statusBar()->showMessage(QString::fromStdString(m_session->model()->config.description), 20000);
        syncControls();
    });
    connect(m_session, &Session::busyChanged, this, [this](bool busy) {
        m_progress->setVisible(busy);
        m_cancel->setVisible(busy);
        m_progress->setRange(0, 0);
    });
    connect(m_session, &Session::progressChanged, this, [this](int done, int total) {
        m_progress->setRange(0, total);
        m_progress->setValue(done);
    });
    connect(m_session, &Session::errorOccurred, this, [this](const QString &message) {
        statusBar()->showMessage(message, 15000);
        // Window-modal but not blocking: the event loop (and any running work) goes on behind it.
        auto *box = new QMessageBox(QMessageBox::Warning, tr("Transformer Atlas"), message, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
}

View *MainWindow::currentView() const
{
    return qobject_cast<View *>(m_ui->viewTabs->currentWidget());
}

void MainWindow::showViewKind(const QString &kind)
{
    const std::vector<ViewKind> &kinds = viewKinds();
    for (size_t i = 0; i < kinds.size(); ++i)
        if (kind.toStdString() == kinds[i].kind)
            m_ui->viewTabs->setCurrentIndex(int(i));
}

void MainWindow::refreshCurrentView()
{
    View *view = currentView();
    if (!view || !m_session->hasModel())
        return;
    view->setInput(m_session->viewInput());
    view->setSpec(m_session->spec());
}

void MainWindow::syncControls()
{
    if (!m_session->hasModel())
        return;
    const ModelConfig &c = m_session->model()->config;
    const QSignalBlocker b1(m_layer), b2(m_head);
    m_layer->setRange(0, c.layers - 1);
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
    spec.layer = std::clamp(spec.layer + dLayer, 0, c.layers - 1);
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
    } catch (const Error &e) {
        QMessageBox::warning(this, tr("Export view"), QString::fromStdString(e.what()));
    }
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    restoreGeometry(settings.value("window/geometry").toByteArray());
    restoreState(settings.value("window/state").toByteArray());
    showViewKind(QString::fromStdString(m_session->spec().view));
    m_session->setMemoryBudget(size_t(settings.value("session/memoryBudgetGiB", 8.0).toDouble() * double(1 << 30)));
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    settings.setValue("session/spec", QString::fromStdString(m_session->spec().toJson()));
    QMainWindow::closeEvent(event);
}

} // namespace atlas
