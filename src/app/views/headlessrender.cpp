#include "views/headlessrender.h"

#include "engine/recompute.h"
#include "util/error.h"
#include "view/specrun.h"
#include "views/comparisonview.h"
#include "views/heatmapplot.h"
#include "views/view.h"
#include "views/viewexport.h"
#include "views/viewfactory.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <random>

namespace atlas {

namespace {

// Runs before QApplication's constructor, which reads QT_QPA_PLATFORM.
int &offscreenUnlessChosen(int &argc)
{
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    return argc;
}

// The offscreen platform warns each time a window it shows (a view drawn for export) sets size hints, which it
// has no use for: that line would repeat for every image written. Everything else goes to Qt's own handler.
QtMessageHandler g_qtHandler = nullptr;

void quietOffscreen(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    if (type == QtWarningMsg && message == QLatin1String("This plugin does not support propagateSizeHints()"))
        return;
    if (g_qtHandler)
        g_qtHandler(type, context, message);
    else
        std::fprintf(stderr, "%s\n", qPrintable(qFormatLogMessage(type, context, message)));
}

} // namespace

HeadlessApplication::HeadlessApplication()
    : m_app(std::make_unique<QApplication>(offscreenUnlessChosen(m_argc), m_argv))
{
    g_qtHandler = qInstallMessageHandler(quietOffscreen);
}

HeadlessApplication::~HeadlessApplication() = default;

ViewInput preparedViewInput(const ViewSpec &spec, const std::string &source, size_t memoryBudget, bool checkOnly)
{
    try {
        const SpecRun run = runSpec(spec, memoryBudget);
        if (const std::string problem = drawProblem(spec, run, source); !problem.empty())
            throw Error(problem);
        ViewInput input = makeViewInput(run);
        analyzeNow(input, spec, checkOnly);
        if (!input.analysis.problem.isEmpty())
            throw Error(
                source + ": the " + spec.view + " view cannot be drawn: " + input.analysis.problem.toStdString());
        return input;
    } catch (const Error &e) { // a model or input that fails to load is named by its own path: say whose it is
        if (std::string_view(e.what()).starts_with(source))
            throw;
        throw Error(source + ": " + e.what());
    }
}

std::unique_ptr<View> preparedView(const ViewSpec &spec, const ViewInput &input, int width, int height, double zoom)
{
    std::unique_ptr<View> view = spec.compare.empty() ? createView(spec.view) : std::make_unique<ComparisonView>();
    if (zoom != 1.0) { // as the app's zoom: every text of the view scaled, the view laid out for it
        QFont font = view->font();
        font.setPointSizeF(font.pointSizeF() * zoom);
        view->setFont(font);
    }
    view->resize(width, height);
    view->setInputAndSpec(input, spec);
    view->ensurePolished();
    return view;
}

std::unique_ptr<View> headlessView(const ViewSpec &spec, int width, int height)
{
    ViewInput input = makeViewInput(runSpec(spec));
    analyzeNow(input, spec);
    return preparedView(spec, input, width, height);
}

std::unique_ptr<View> drawableView(
    const ViewSpec &spec, int width, int height, const std::string &source, size_t memoryBudget, double zoom)
{
    return preparedView(spec, preparedViewInput(spec, source, memoryBudget), width, height, zoom);
}

std::string renderSpecToFile(const ViewSpec &spec, const std::string &path, int width, int height,
    const std::string &source, size_t memoryBudget)
{
    const std::unique_ptr<View> view = drawableView(spec, width, height, source, memoryBudget);
    exportView(view.get(), QString::fromStdString(path), QSize(width, height));
    return view->input().model ? view->input().model->name : spec.model;
}

namespace {

// Until `view`'s picture is complete and painted, asleep in the event loop as a window is (processEvents with a time
// spins, taking a core from the workers), looking every `tickMs`.
void waitForPicture(View *view, int tickMs)
{
    while (view->drawing()) {
        QEventLoop wait;
        QTimer::singleShot(tickMs, &wait, &QEventLoop::quit);
        wait.exec();
    }
    view->repaint();
}

} // namespace

ViewSwitchTimes timeViewSwitching(ViewSpec spec, int repeat, size_t memoryBudget)
{
    const SpecRun run = runSpec(spec, memoryBudget);
    ViewInput input = makeViewInput(run);
    analyzeNow(input, spec);
    std::unique_ptr<View> view = createView(spec.view);
    view->resize(1200, 1000);
    view->setInputAndSpec(input, spec);
    view->show();
    QApplication::processEvents();
    ViewSwitchTimes times {run.model->name, {}};
    for (int r = 0; r < repeat; ++r) {
        spec.layer = r % input.layers;
        spec.head = (r / input.layers) % input.heads;
        ViewInput next = input;
        // A run keeping only each block's input: the layer's queries and keys recomputed first, as the session's
        // worker does before the view is given the trace; part of the switch's time.
        QElapsedTimer recompute;
        recompute.start();
        const std::vector<std::string> names = recomputedForSpec(spec, run.model->config, *run.program, *run.trace);
        if (!names.empty()) {
            auto trace = std::make_shared<Trace>(*run.trace);
            putRecomputed(
                *trace, *run.program, names, recomputeTensors(*run.model, *run.program, run.input, *run.trace, names));
            next.trace = std::move(trace);
            times.recomputes.push_back(double(recompute.nsecsElapsed()) / 1e6);
        }
        const double recomputed = names.empty() ? 0.0 : times.recomputes.back();
        analyzeNow(next, spec); // the analysis of the new layer and head, not timed (the session makes it off the
        QElapsedTimer timer; // GUI thread)
        timer.start();
        view->setInputAndSpec(next, spec);
        QApplication::processEvents();
        view->repaint();
        times.blocked.push_back(double(timer.nsecsElapsed()) / 1e6);
        waitForPicture(view.get(), 5);
        times.milliseconds.push_back(recomputed + double(timer.nsecsElapsed()) / 1e6);
    }
    if (HeatmapPlot *plot = view->findChild<HeatmapPlot *>(); plot && plot->matrixRows() > 0) {
        // Zooming in a notch at a time towards a cell on the diagonal, then out again, as the wheel does.
        const int row = plot->matrixRows() * 2 / 3, col = std::min(plot->matrixCols() - 1, row);
        for (int step = 0; step < 16; ++step) {
            QElapsedTimer timer;
            timer.start();
            plot->zoomAround(row, col, step < 8 ? 0.8 : 1.25);
            waitForPicture(view.get(), 1);
            times.zooms.push_back(double(timer.nsecsElapsed()) / 1e6);
        }
        std::mt19937 rng(5);
        for (int h = 0; h < 64; ++h) {
            const QPointF at = plot->cellCenter(
                int(rng() % unsigned(plot->matrixRows())), int(rng() % unsigned(plot->matrixCols())));
            QElapsedTimer timer;
            timer.start();
            const QString text = plot->hoverTextAt(at);
            times.hovers.push_back(double(timer.nsecsElapsed()) / 1e6);
            if (text.isEmpty())
                throw Error("bench-view: the heat map gave no tooltip at a cell it draws");
        }
    }
    for (std::vector<double> *v : {&times.milliseconds, &times.blocked, &times.hovers, &times.zooms, &times.recomputes})
        std::sort(v->begin(), v->end());
    return times;
}

} // namespace atlas
