#include "views/architectureview.h"

#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

constexpr double kFoldBelow = 0.75; // a whole diagram that would be drawn smaller than this folds its layers
constexpr double kMinScale = 0.6; // smaller text is unreadable: the scroll area around the view scrolls instead

// "Layer 0"; an encoder-decoder's "Encoder layer 0", "Decoder embedding" …: the diagram's column names capitalised.
QString columnTitle(const std::string &column)
{
    QString title = QString::fromStdString(column);
    if (!title.isEmpty())
        title[0] = title[0].toUpper();
    return title;
}

QString boxName(const DiagramBox &box)
{
    return (box.residual ? QStringLiteral("⊕ ") : QString()) + QString::fromStdString(box.label);
}

} // namespace

ArchitectureView::ArchitectureView(QWidget *parent)
    : View(parent)
{
    setMouseTracking(true);
    m_message = tr("Nothing to show yet: run the model");
}

QString ArchitectureView::runTitle(const DiagramColumnRun &run) const
{
    return columnTitle(columnRunName(m_diagram, run));
}

QStringList ArchitectureView::foldLines(const PlacedRun &placed) const
{
    const int layers = placed.run.last - placed.run.first + 1;
    return {QStringLiteral("⋮"), layers == 1 ? tr("one layer") : tr("%1 layers").arg(layers), tr("of the same"),
        tr("%1 operations").arg(placed.rows), tr("as layer 0"), QString(), tr("click to open")};
}

QString ArchitectureView::subtitle(bool shapes) const
{
    const int current = m_diagram.current;
    const QString stepper = current >= 0 ? tr("the stepper is after op %1, %2 %3")
                                               .arg(current + 1)
                                               .arg(QString::fromStdString(m_diagram.boxes[size_t(current)].label),
                                                   QString::fromStdString(m_diagram.boxes[size_t(current)].shape))
                                         : tr("nothing run yet");
    return tr("%1 · click an operation to step there%2 · ⊕ a residual add")
        .arg(stepper, shapes ? QString() : tr(", hover it for its shape"));
}

ArchitectureView::Layout ArchitectureView::layout(bool fold, bool shapes, int width) const
{
    const QFontMetrics label(sizedFont(font(), 9));
    const QFontMetrics title(sizedFont(font(), 12, true));
    const QFontMetrics head(sizedFont(font(), 10, true));
    Layout l;
    l.shapes = shapes;
    l.gap = std::max(6, label.height() / 2);
    l.top = kViewMargin + title.height() + label.height() + 2 * l.gap + head.height();
    l.boxHeight = label.height() + 6;
    l.rowPitch = l.boxHeight + std::max(3, label.height() / 4);
    const size_t columns = m_diagram.columns.size();
    std::vector<int> rows(columns, 0), widest(columns, 0);
    for (const DiagramBox &b : m_diagram.boxes) { // each label beside its shape, as painted
        const size_t c = size_t(b.column);
        rows[c] = std::max(rows[c], b.row + 1);
        widest[c] = std::max(widest[c],
            label.horizontalAdvance(boxName(b))
                + (shapes ? label.horizontalAdvance(QString::fromStdString(b.shape)) : 0) + 24);
    }
    l.runOfColumn.assign(columns, 0);
    for (const DiagramColumnRun &run : columnRuns(m_diagram, fold)) {
        PlacedRun placed {run};
        placed.rows = rows[size_t(run.first)];
        placed.width = head.horizontalAdvance(runTitle(run)) + 8;
        if (run.folded)
            for (const QString &line : foldLines(placed))
                placed.width = std::max(placed.width, label.horizontalAdvance(line) + 16);
        else
            placed.width = std::max(placed.width, widest[size_t(run.first)]);
        for (int c = run.first; c <= run.last; ++c)
            l.runOfColumn[size_t(c)] = int(l.runs.size());
        l.runs.push_back(placed);
    }
    int natural = 2 * kViewMargin - l.gap;
    int unfolded = 0, rowsDrawn = 1;
    for (const PlacedRun &placed : l.runs) {
        natural += placed.width + l.gap;
        unfolded += placed.run.folded ? 0 : 1;
        rowsDrawn = std::max(rowsDrawn, placed.rows);
    }
    const int extra = std::max(0, width - natural);
    int x = kViewMargin, widened = 0;
    for (PlacedRun &placed : l.runs) { // the unfolded columns share what is left of `width`
        if (!placed.run.folded && unfolded > 0)
            placed.width += extra / unfolded + (widened++ < extra % unfolded ? 1 : 0);
        placed.x = x;
        x += placed.width + l.gap;
    }
    const int textWidth = 2 * kViewMargin
        + std::max(title.horizontalAdvance(tr("The model, operation by operation")),
            label.horizontalAdvance(subtitle(shapes)));
    l.size = {std::max({x - l.gap + kViewMargin, textWidth, width}), l.top + rowsDrawn * l.rowPitch + kViewMargin};
    return l;
}

const ArchitectureView::Layout &ArchitectureView::layout() const
{
    if (m_layout && m_layoutSize == size())
        return *m_layout;
    m_layoutSize = size();
    const auto fitting = [this](const QSize &size) {
        return std::min({1.0, double(width()) / size.width(), double(height()) / size.height()});
    };
    bool fold = false, shapes = true;
    double scale = fitting(layout(false, true, 0).size);
    if (scale < kFoldBelow) { // folding narrows the diagram: it helps only where the width limits the scale
        const double folded = fitting(layout(true, true, 0).size);
        fold = folded > scale + 0.01;
        scale = std::max(scale, folded);
    }
    if (scale < kFoldBelow) { // then the shapes go (the tooltip and the subtitle still give them)
        const double bare = fitting(layout(true, false, 0).size);
        if (bare > scale + 0.01) {
            fold = true;
            shapes = false;
            scale = bare;
        }
    }
    scale = std::max(kMinScale, scale);
    m_layout = layout(fold, shapes, int(width() / scale));
    m_layout->scale = scale;
    return *m_layout;
}

QSize ArchitectureView::sizeHint() const
{
    return {1200, 800};
}

QSize ArchitectureView::minimumSizeHint() const
{
    const QSize folded = layout(true, false, 0).size;
    return {int(std::ceil(folded.width() * kMinScale)), int(std::ceil(folded.height() * kMinScale))};
}

QRect ArchitectureView::placed(const Layout &l, const QRect &rect) const
{
    if (rect.isEmpty())
        return {};
    const auto at = [&l](int v) { return int(std::lround(v * l.scale)); };
    return QRect(QPoint(at(rect.left()), at(rect.top())), QPoint(at(rect.right() + 1) - 1, at(rect.bottom() + 1) - 1));
}

QRect ArchitectureView::unscaledBoxRect(const Layout &l, int op) const
{
    const DiagramBox &b = m_diagram.boxes[size_t(op)];
    const PlacedRun &run = l.runs[size_t(l.runOfColumn[size_t(b.column)])];
    if (run.run.folded)
        return {};
    return {run.x, l.top + b.row * l.rowPitch, run.width, l.boxHeight};
}

QRect ArchitectureView::unscaledFoldRect(const Layout &l, int run) const
{
    const PlacedRun &placed = l.runs[size_t(run)];
    if (!placed.run.folded)
        return {};
    return {placed.x, l.top, placed.width, placed.rows * l.rowPitch - (l.rowPitch - l.boxHeight)};
}

QRect ArchitectureView::boxRect(int op) const
{
    if (op < 0 || op >= int(m_diagram.boxes.size()) || !m_message.isEmpty())
        return {};
    const Layout &l = layout();
    return placed(l, unscaledBoxRect(l, op));
}

QRect ArchitectureView::foldRect(int column) const
{
    if (column < 0 || column >= int(m_diagram.columns.size()) || !m_message.isEmpty())
        return {};
    const Layout &l = layout();
    return placed(l, unscaledFoldRect(l, l.runOfColumn[size_t(column)]));
}

int ArchitectureView::boxAt(const QPoint &point) const
{
    if (!m_message.isEmpty())
        return -1;
    const Layout &l = layout();
    for (const DiagramBox &b : m_diagram.boxes)
        if (placed(l, unscaledBoxRect(l, b.op)).contains(point))
            return b.op;
    return -1;
}

int ArchitectureView::foldAt(const QPoint &point) const
{
    if (!m_message.isEmpty())
        return -1;
    const Layout &l = layout();
    for (int r = 0; r < int(l.runs.size()); ++r)
        if (placed(l, unscaledFoldRect(l, r)).contains(point))
            return l.runs[size_t(r)].run.first;
    return -1;
}

void ArchitectureView::refresh()
{
    m_layout.reset();
    if (!m_input.program) {
        m_diagram = {};
        m_message = tr("Nothing to show yet: run the model");
    } else {
        m_diagram = architectureDiagram(*m_input.program, m_input.trace.get());
        m_message.clear();
    }
    updateGeometry();
    update();
}

void ArchitectureView::paintEvent(QPaintEvent *)
{
    clearClipped();
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const ThemeColors colors = themeColors(m_spec.theme);
    const bool dark = m_spec.theme == "dark";
    p.fillRect(rect(), colors.background);
    p.setPen(colors.text);
    if (!m_message.isEmpty()) {
        p.setFont(sizedFont(font(), 12));
        p.drawText(rect().adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, m_message);
        return;
    }
    const Layout &l = layout();
    p.scale(l.scale, l.scale);
    const QFont titleFont = sizedFont(font(), 12, true), labelFont = sizedFont(font(), 9),
                headFont = sizedFont(font(), 10, true);
    p.setFont(titleFont);
    p.drawText(
        QPoint(kViewMargin, kViewMargin + QFontMetrics(titleFont).ascent()), tr("The model, operation by operation"));
    p.setFont(labelFont);
    QColor muted = colors.text;
    muted.setAlphaF(0.7f);
    p.setPen(muted);
    p.drawText(
        QPoint(kViewMargin, kViewMargin + QFontMetrics(titleFont).height() + QFontMetrics(labelFont).ascent() + 2),
        subtitle(l.shapes));
    p.setFont(headFont);
    p.setPen(colors.text);
    const int headHeight = QFontMetrics(headFont).height();
    for (const PlacedRun &placed : l.runs)
        p.drawText(QRect(placed.x, l.top - l.gap - headHeight, placed.width, headHeight), Qt::AlignCenter,
            runTitle(placed.run));
    const QColor accent = dark ? QColor(0x4ea3ff) : QColor(0x1f77b4);
    QColor doneFill = accent;
    doneFill.setAlpha(dark ? 70 : 40);
    p.setFont(labelFont);
    const QFontMetrics fm(labelFont);
    for (int r = 0; r < int(l.runs.size()); ++r) { // a folded run: one tall box, filled once its layers have run
        const PlacedRun &placed = l.runs[size_t(r)];
        if (!placed.run.folded)
            continue;
        const bool done = std::all_of(m_diagram.boxes.begin(), m_diagram.boxes.end(), [&placed](const DiagramBox &b) {
            return b.done || b.column < placed.run.first || b.column > placed.run.last;
        });
        const QRect body = unscaledFoldRect(l, r);
        p.setPen(QPen(colors.axis, 1, done ? Qt::SolidLine : Qt::DashLine));
        p.setBrush(done ? doneFill : QBrush(Qt::NoBrush));
        p.drawRoundedRect(body.adjusted(1, 1, -1, -1), 4, 4);
        p.setPen(muted);
        p.drawText(body, Qt::AlignCenter, foldLines(placed).join(QLatin1Char('\n')));
    }
    const int current = m_diagram.current;
    for (const DiagramBox &b : m_diagram.boxes) {
        const QRect r = unscaledBoxRect(l, b.op);
        if (r.isEmpty())
            continue;
        const bool isCurrent = b.op == current;
        QPen pen(isCurrent ? accent : colors.axis, isCurrent ? 2.5 : 1, b.done ? Qt::SolidLine : Qt::DashLine);
        p.setPen(pen);
        p.setBrush(isCurrent ? accent : b.done ? doneFill : QBrush(Qt::NoBrush));
        p.drawRoundedRect(r.adjusted(1, 1, -1, -1), 4, 4);
        p.setPen(isCurrent ? QColor(Qt::white) : colors.text);
        const QString shape = QString::fromStdString(b.shape);
        const int shapeWidth = l.shapes ? fm.horizontalAdvance(shape) : 0;
        const QRect text = r.adjusted(6, 0, -6, 0);
        const QString name = boxName(b);
        const QString shown = fm.elidedText(name, Qt::ElideRight, text.width() - shapeWidth - 6);
        if (shown != name)
            noteClipped(name);
        p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, shown);
        if (l.shapes)
            p.drawText(text, Qt::AlignRight | Qt::AlignVCenter, shape);
    }
}

void ArchitectureView::mousePressEvent(QMouseEvent *event)
{
    const QPoint at = event->position().toPoint();
    int op = boxAt(at);
    if (const int folded = foldAt(at); folded >= 0) // steps into the run's first layer, which unfolds it
        op = int(std::find_if(m_diagram.boxes.begin(), m_diagram.boxes.end(), [folded](const DiagramBox &b) {
            return b.column == folded;
        }) - m_diagram.boxes.begin());
    if (event->button() != Qt::LeftButton || op < 0 || op >= int(m_diagram.boxes.size()))
        return View::mousePressEvent(event);
    m_spec.op = m_diagram.boxes[size_t(op)].name;
    emit specEdited(m_spec);
}

void ArchitectureView::mouseMoveEvent(QMouseEvent *event)
{
    const QPoint at = event->position().toPoint();
    if (const int folded = foldAt(at); folded >= 0) {
        const Layout &l = layout();
        const PlacedRun &placed = l.runs[size_t(l.runOfColumn[size_t(folded)])];
        return QToolTip::showText(event->globalPosition().toPoint(),
            tr("%1: folded to fit the width, each runs the same %2 operations as layer 0.\nClick to step into "
               "the first of them, which opens it; a wider window shows them all.")
                .arg(runTitle(placed.run))
                .arg(placed.rows),
            this);
    }
    const int op = boxAt(at);
    if (op < 0)
        return QToolTip::hideText();
    const DiagramBox &b = m_diagram.boxes[size_t(op)];
    QToolTip::showText(event->globalPosition().toPoint(),
        tr("%1 (%2), shape %3\n%4\nclick to step here")
            .arg(QString::fromStdString(b.label), QString::fromStdString(b.name), QString::fromStdString(b.shape),
                QString::fromStdString(b.formula)),
        this);
}

} // namespace atlas
