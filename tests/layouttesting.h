#pragma once

// What a window test asks of a laid-out window: nothing cut, nothing squeezed, no text smaller than it may be.
#include "view/viewspec.h"
#include "views/heatmapplot.h"
#include "views/view.h"

#include <QAbstractScrollArea>
#include <QElapsedTimer>
#include <QFontMetrics>
#include <QLabel>
#include <QMainWindow>
#include <QPaintDevice>
#include <QPaintEngine>
#include <QRegularExpression>
#include <QStringList>
#include <QTabBar>
#include <QTest>
#include <QTextItem>

#include <qcustomplot.h>

#include <cmath>
#include <vector>

namespace atlas::testing {

// A picture of what a test drew, written to $ATLAS_SAVE_PNG/NAME.png when that is set (to look at it).
inline void maybeSave(QWidget &w, const QString &name)
{
    const QString dir = qEnvironmentVariable("ATLAS_SAVE_PNG");
    if (!dir.isEmpty())
        w.grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
}

// Inside a scroll area a widget may be larger than what shows: that is scrolling, not clipping. A view's own
// scroll area does not count: a view is never smaller than the minimum it asks for, and inside it nothing may cut.
inline bool insideScrollArea(const QWidget *w, const QWidget *top)
{
    for (const QWidget *p = w->parentWidget(); p && p != top && !qobject_cast<const View *>(p); p = p->parentWidget())
        if (qobject_cast<const QAbstractScrollArea *>(p))
            return true;
    return false;
}

// What does not fit in the window as it is laid out now: labels cut short, plots squeezed, tabs hidden, views
// that had to elide text.
inline QStringList layoutProblems(QMainWindow &window)
{
    QStringList problems;
    for (QLabel *label : window.findChildren<QLabel *>()) {
        if (!label->isVisibleTo(&window) || label->text().isEmpty() || insideScrollArea(label, &window))
            continue;
        if (label->wordWrap() ? label->height() + 1 < label->heightForWidth(label->width())
                              : label->width() + 1 < label->sizeHint().width())
            problems << QString("label '%1' is cut: %2×%3, needs %4")
                            .arg(label->text().left(40))
                            .arg(label->width())
                            .arg(label->height())
                            .arg(label->wordWrap() ? label->heightForWidth(label->width()) : label->sizeHint().width());
    }
    for (QCustomPlot *plot : window.findChildren<QCustomPlot *>()) {
        if (!plot->isVisibleTo(&window) || insideScrollArea(plot, &window))
            continue;
        if (auto *heat = qobject_cast<HeatmapPlot *>(plot); heat && heat->showingMessage())
            continue;
        for (QCPLayoutElement *element : plot->plotLayout()->elements(true))
            if (auto *text = qobject_cast<QCPTextElement *>(element);
                text && text->visible() && text->outerRect().width() + 1 < element->minimumOuterSizeHint().width())
                problems << QString("a plot's text '%1' is cut: %2 px wide, needs %3 in %4")
                                .arg(text->text().left(40))
                                .arg(text->outerRect().width())
                                .arg(element->minimumOuterSizeHint().width())
                                .arg(plot->parentWidget()->metaObject()->className());
        // A legend inside the axes covers data; the one allowed (the Sparse FFN's, in the corner its falling curve
        // leaves empty) says so with its object name.
        for (QCPLegend *legend : plot->findChildren<QCPLegend *>()) // the plot's own, then those views add
            if (legend->visible() && legend->realVisibility() && legend->layout()
                && qobject_cast<QCPLayoutInset *>(legend->layout()) && legend->objectName() != "emptyCornerLegend")
                problems << QString("a legend lies inside the axes in %1")
                                .arg(plot->parentWidget()->metaObject()->className());
        for (QCPAxisRect *r : plot->axisRects()) {
            if (r->width() < 80 || r->height() < 60)
                problems << QString("a plot's axes are squeezed to %1×%2 in %3")
                                .arg(r->width())
                                .arg(r->height())
                                .arg(plot->parentWidget()->metaObject()->className());
            // A panel's title (AnalysisPlotView::setPanelTitle, on the top axis) wider than its panel runs into the
            // next one's.
            const QCPAxis *top = r->axis(QCPAxis::atTop);
            if (!top || !top->visible())
                continue;
            for (const QString &line : top->label().split(QLatin1Char('\n')))
                if (const int needs = QFontMetrics(top->labelFont()).horizontalAdvance(line);
                    needs > r->outerRect().width() + 1)
                    problems << QString("a panel's title '%1' is wider than its panel (%2 px, needs %3) in %4")
                                    .arg(line.left(40))
                                    .arg(r->outerRect().width())
                                    .arg(needs)
                                    .arg(plot->parentWidget()->metaObject()->className());
        }
    }
    for (QTabBar *bar : window.findChildren<QTabBar *>()) {
        if (!bar->isVisibleTo(&window))
            continue;
        // A bar narrower than its tabs want elides their text or hides some behind scroll arrows.
        if (bar->width() + 1 < bar->sizeHint().width())
            problems << QString("the tabs '%1' … do not fit their bar (%2 px, they need %3)")
                            .arg(bar->tabText(0))
                            .arg(bar->width())
                            .arg(bar->sizeHint().width());
    }
    for (View *view : window.findChildren<View *>())
        if (view->isVisibleTo(&window))
            for (const QString &text : view->clippedTexts())
                problems
                    << QString("the %1 view cut '%2'").arg(QString::fromStdString(view->spec().view), text.left(60));
    return problems;
}

// What `problems()` finds once the window has settled: queued relayouts and replots run and the window drawn again,
// up to `milliseconds` for the problems to go; what stays is a problem (one look after a fixed wait was flaky under
// the sanitizers' slower build).
template <typename Check> QStringList settledProblems(QMainWindow &window, Check problems, int milliseconds = 5000)
{
    QElapsedTimer clock;
    clock.start();
    for (;;) {
        QTest::qWait(25);
        window.grab();
        const QStringList found = problems();
        if (found.isEmpty() || clock.elapsed() > milliseconds)
            return found;
    }
}

inline QStringList settledLayoutProblems(QMainWindow &window)
{
    return settledProblems(window, [&] { return layoutProblems(window); });
}

// A piece of text as it reaches the screen: its height in pixels after the painter's scaling.
struct PaintedText
{
    QString text;
    double pixels = 0;
};

// A paint device that keeps the text painted on it, with its size, and draws nothing: what a widget shows, read
// from its own paint calls (labels, buttons, painted views, and plots through QCustomPlot::toPainter).
class TextRecorder : public QPaintDevice
{
public:
    explicit TextRecorder(int dpi)
        : m_engine(dpi)
    {
    }

    // Every text `root` and its visible children paint, plots included.
    void record(QWidget *root)
    {
        root->render(this, QPoint(), QRegion(), QWidget::DrawChildren);
        for (QCustomPlot *plot : root->findChildren<QCustomPlot *>()) {
            if (!plot->isVisibleTo(root))
                continue;
            QCPPainter painter(this); // a plot paints from its buffer: draw its layers again, here
            plot->toPainter(&painter, plot->width(), plot->height());
        }
    }
    const std::vector<PaintedText> &texts() const { return m_engine.texts; }
    // The smallest text drawn, with its size; none: pixels 0.
    PaintedText smallest() const
    {
        PaintedText least;
        for (const PaintedText &t : texts())
            if (!t.text.trimmed().isEmpty() && (least.pixels == 0 || t.pixels < least.pixels))
                least = t;
        return least;
    }
    QPaintEngine *paintEngine() const override { return &m_engine; }

protected:
    int metric(PaintDeviceMetric m) const override
    {
        switch (m) {
        case PdmWidth:
        case PdmHeight:
            return 4096;
        case PdmWidthMM:
        case PdmHeightMM:
            return 4096 * 254 / (10 * m_engine.dpi);
        case PdmDpiX:
        case PdmDpiY:
        case PdmPhysicalDpiX:
        case PdmPhysicalDpiY:
            return m_engine.dpi;
        case PdmDevicePixelRatio:
            return 1;
        case PdmDevicePixelRatioScaled:
            return int(QPaintDevice::devicePixelRatioFScale());
        case PdmNumColors:
            return INT_MAX;
        case PdmDepth:
            return 32;
        }
        return 0;
    }

private:
    struct Engine : QPaintEngine
    {
        explicit Engine(int d)
            : QPaintEngine(QPaintEngine::AllFeatures)
            , dpi(d)
        {
        }
        bool begin(QPaintDevice *) override { return true; }
        bool end() override { return true; }
        void updateState(const QPaintEngineState &state) override
        {
            if (state.state() & QPaintEngine::DirtyTransform)
                transform = state.transform();
        }
        void drawPixmap(const QRectF &, const QPixmap &, const QRectF &) override { }
        void drawPath(const QPainterPath &) override { }
        void drawPolygon(const QPointF *, int, PolygonDrawMode) override { }
        void drawTextItem(const QPointF &, const QTextItem &item) override
        {
            const QFont font = item.font();
            const double pixels = font.pixelSize() > 0 ? font.pixelSize() : font.pointSizeF() * dpi / 72.0;
            texts.push_back({item.text(), pixels * std::sqrt(std::abs(transform.determinant()))});
        }
        Type type() const override { return QPaintEngine::User; }

        int dpi;
        QTransform transform;
        std::vector<PaintedText> texts;
    };
    mutable Engine m_engine;
};

// What a painted text says wrongly (issue 58): a unit said twice ("22 % %"), a plural after one ("1 tokens"), a
// "(s)" the app does not resolve, or a name the user never typed: a config key (atlas_task), "spec key", a spec key
// spelled as code (noise_positions).
inline QStringList wordingProblems(const std::vector<PaintedText> &texts)
{
    static const QRegularExpression wrong(QStringLiteral(
        "%[\\s\u202F]*%|[a-z]{2}\\(s\\)|(?<![\\d.,])(?<!layer |block |head |step )1 "
        "(tokens|bytes|layers|heads|blocks|steps|keys|queries|positions|"
        "examples|pairs|experts|passes|points|characters|sentences|spans|scorings)\\b|\\batlas_[a-z_]+|\\bspec "
        "key\\b"));
    QStringList specKeyNames;
    for (const SpecKey &key : specKeys())
        if (key.name.find('_') != std::string::npos)
            specKeyNames << QRegularExpression::escape(QString::fromStdString(key.name));
    const QRegularExpression keys(QStringLiteral("\\b(%1)\\b").arg(specKeyNames.join('|')));
    QStringList problems;
    for (const PaintedText &t : texts)
        for (const QRegularExpression *rule : {&wrong, &keys})
            if (const QRegularExpressionMatch m = rule->match(t.text); m.hasMatch())
                problems << QStringLiteral("'%1' in the text '%2' reads wrongly").arg(m.captured(), t.text.left(80));
    problems.removeDuplicates();
    return problems;
}

} // namespace atlas::testing
