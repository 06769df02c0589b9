#include "architecture/architectureview.h"

#include "views/palette.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <QComboBox>
#include <QMouseEvent>
#include <QPainter>
#include <QSettings>
#include <QToolTip>
#include <QVariantAnimation>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

constexpr double kFoldBelow = 0.75; // a whole diagram that would be drawn smaller than this folds its layers
constexpr double kMinScale = 0.6; // smaller text is unreadable: the scroll area around the view scrolls instead
constexpr const char *kAnimationSetting = "views/architectureAnimation";
constexpr const char *kAnimationNames[] = {"off", "slow", "normal", "fast"};
constexpr int kAnimationMilliseconds[] = {0, 1600, 800, 400};

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
    m_animationBox = new QComboBox(this);
    m_animationBox->addItems(
        {tr("Animate steps: off"), tr("Animate steps: slow"), tr("Animate steps: normal"), tr("Animate steps: fast")});
    m_animationBox->setToolTip(tr("When the stepper moves forward, a pulse runs along the arrows into the new "
                                  "operation: the tensors it reads. Off draws the step at once."));
    const QString saved = QSettings().value(kAnimationSetting, QStringLiteral("normal")).toString();
    for (int i = 0; i < 4; ++i)
        if (saved == QLatin1String(kAnimationNames[i]))
            m_animationBox->setCurrentIndex(i);
    connect(m_animationBox, &QComboBox::activated, this,
        [](int index) { QSettings().setValue(kAnimationSetting, QString::fromLatin1(kAnimationNames[index])); });
    m_pulse = new QVariantAnimation(this);
    m_pulse->setStartValue(0.0);
    m_pulse->setEndValue(1.0);
    m_pulse->setEasingCurve(QEasingCurve::InOutSine);
    connect(m_pulse, &QVariantAnimation::valueChanged, this, [this](const QVariant &value) {
        m_pulseAt = value.toDouble();
        update();
    });
    connect(m_pulse, &QVariantAnimation::finished, this, [this] {
        m_pulseOp = -1;
        m_pulseAt = 0;
        update();
    });
}

ArchitectureView::Animation ArchitectureView::animation() const
{
    return Animation(m_animationBox->currentIndex());
}

void ArchitectureView::setAnimation(Animation speed)
{
    m_animationBox->setCurrentIndex(int(speed));
    QSettings().setValue(kAnimationSetting, QString::fromLatin1(kAnimationNames[int(speed)]));
}

int ArchitectureView::animationMilliseconds() const
{
    return kAnimationMilliseconds[m_animationBox->currentIndex()];
}

std::vector<QWidget *> ArchitectureView::interfaceWidgets() const
{
    return {m_animationBox};
}

void ArchitectureView::resizeEvent(QResizeEvent *event)
{
    View::resizeEvent(event);
    const QSize hint = m_animationBox->sizeHint();
    m_animationBox->setGeometry(width() - hint.width() - kViewMargin, kViewMargin / 2, hint.width(), hint.height());
}

void ArchitectureView::startPulse(int op)
{
    if (edgesInto(m_diagram, op).empty())
        return;
    m_pulse->stop();
    m_pulseOp = op;
    m_pulseAt = 0;
    m_pulse->setDuration(animationMilliseconds());
    m_pulse->start();
}

QString ArchitectureView::runTitle(const DiagramColumnRun &run) const
{
    const std::string &kind = m_diagram.columnKinds.at(size_t(run.first));
    return columnTitle(columnRunName(m_diagram, run))
        + (run.folded || kind.empty() ? QString() : QStringLiteral(" · ") + QString::fromStdString(kind));
}

// The kinds of a folded run's layers with their counts ("2 × window 512", "1 × global"), or empty when every one is
// of the kind of the stack's first layer, whose operations they then repeat.
QStringList ArchitectureView::foldKinds(const DiagramColumnRun &run) const
{
    std::vector<std::pair<std::string, int>> counts;
    bool likeFirst = true;
    const auto first = std::find(m_diagram.columnLayers.begin(), m_diagram.columnLayers.end(), 0);
    const std::string firstKind = first == m_diagram.columnLayers.end()
        ? ""
        : m_diagram.columnKinds[size_t(first - m_diagram.columnLayers.begin())];
    for (int c = run.first; c <= run.last; ++c) {
        const std::string &kind = m_diagram.columnKinds[size_t(c)];
        likeFirst = likeFirst && kind == firstKind;
        auto it = std::find_if(counts.begin(), counts.end(), [&kind](const auto &k) { return k.first == kind; });
        if (it == counts.end())
            counts.push_back({kind, 1});
        else
            ++it->second;
    }
    QStringList lines;
    if (!likeFirst)
        for (const auto &[kind, count] : counts)
            lines << tr("%1 × %2").arg(count).arg(kind.empty() ? tr("plain") : QString::fromStdString(kind));
    return lines;
}

QStringList ArchitectureView::foldLines(const PlacedRun &placed) const
{
    const int layers = placed.run.last - placed.run.first + 1;
    QStringList lines = {QStringLiteral("⋮"), layers == 1 ? tr("one layer") : tr("%1 layers").arg(layers)};
    const QStringList kinds = foldKinds(placed.run);
    if (kinds.isEmpty())
        lines << tr("of the same") << tr("%1 operations").arg(placed.rows) << tr("as layer 0");
    else
        lines << kinds;
    return lines << QString() << tr("click to open");
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

ArchitectureView::Layout ArchitectureView::layout(bool fold, bool shapes, int width, bool compact) const
{
    const QFontMetrics label(sizedFont(font(), 9));
    const QFontMetrics title(sizedFont(font(), 12, true));
    const QFontMetrics head(sizedFont(font(), 10, true));
    Layout l;
    l.shapes = shapes;
    l.gap = std::max(6, label.height() / 2);
    l.top = kViewMargin + title.height() + label.height() + 2 * l.gap + head.height();
    l.boxHeight = label.height() + 6;
    // Room for an arrow between two boxes; compact where the height is short, the arrows then barely show.
    l.rowPitch = l.boxHeight + (compact ? std::max(3, label.height() / 4) : std::max(8, label.height() * 3 / 5));
    l.spineLane = std::max(8, label.height() / 2);
    l.laneStep = 4;
    const size_t columns = m_diagram.columns.size();
    std::vector<int> rows(columns, 0), widest(columns, 0);
    // Right lanes, per column: a flow that skips rows, and the encoder's K/V, each its own lane while it runs
    // (greedy over the rows it spans).
    std::vector<std::vector<int>> laneEnds(columns);
    l.laneOfEdge.assign(m_diagram.edges.size(), -1);
    int maxRows = 0;
    for (const DiagramBox &b : m_diagram.boxes)
        maxRows = std::max(maxRows, b.row + 1);
    for (size_t e = 0; e < m_diagram.edges.size(); ++e) {
        const DiagramEdge &edge = m_diagram.edges[e];
        const DiagramBox &from = m_diagram.boxes[size_t(edge.from)], &to = m_diagram.boxes[size_t(edge.to)];
        int first = 0, last = 0;
        if (edge.kind == DiagramEdge::Kind::EncoderKeyValue) {
            first = to.row;
            last = maxRows;
        } else if (edge.kind == DiagramEdge::Kind::Flow && from.column == to.column && to.row > from.row + 1) {
            first = from.row;
            last = to.row;
        } else {
            continue;
        }
        std::vector<int> &ends = laneEnds[size_t(to.column)];
        auto lane = std::find_if(ends.begin(), ends.end(), [first](int end) { return end < first; });
        if (lane == ends.end())
            lane = ends.insert(ends.end(), last);
        *lane = last;
        l.laneOfEdge[e] = int(lane - ends.begin());
    }
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
        placed.lanes = run.folded ? 0 : int(laneEnds[size_t(run.first)].size());
        const int margins = l.spineLane + (placed.lanes > 0 ? 3 + placed.lanes * l.laneStep : 0);
        placed.width = head.horizontalAdvance(runTitle(run)) + 8;
        if (run.folded)
            for (const QString &line : foldLines(placed))
                placed.width = std::max(placed.width, label.horizontalAdvance(line) + 16 + margins);
        else
            placed.width = std::max(placed.width, widest[size_t(run.first)] + margins);
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
    int legendWidth = 0;
    for (const LegendItem &item : legend())
        legendWidth += 27 + label.horizontalAdvance(item.text) + 14;
    // The key to the arrows follows the subtitle where the columns leave room, else it takes a line of its own: it
    // never widens the diagram (which would shrink every box's text).
    const int subtitleWidth = label.horizontalAdvance(subtitle(shapes));
    l.legendOwnLine = subtitleWidth + 16 + legendWidth + 2 * kViewMargin > std::max(x - l.gap + kViewMargin, width);
    if (l.legendOwnLine)
        l.top += label.height() + 2;
    const int textWidth = 2 * kViewMargin
        + std::max(
            {title.horizontalAdvance(tr("The model, operation by operation")) + m_animationBox->sizeHint().width(),
                l.legendOwnLine ? subtitleWidth : subtitleWidth + 16 + legendWidth, legendWidth});
    l.bottom = l.top + rowsDrawn * l.rowPitch - (l.rowPitch - l.boxHeight);
    const bool encoderArrows = std::any_of(m_diagram.edges.begin(), m_diagram.edges.end(),
        [](const DiagramEdge &e) { return e.kind == DiagramEdge::Kind::EncoderKeyValue; });
    l.size = {std::max({x - l.gap + kViewMargin, textWidth, width}), l.bottom + (encoderArrows ? 12 : 0) + kViewMargin};
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
    bool fold = false, shapes = true, compact = false;
    double scale = fitting(layout(false, true, 0).size);
    if (scale < 1) { // rows closer together first: only the arrows between them get shorter
        const double closer = fitting(layout(false, true, 0, true).size);
        compact = closer > scale + 0.01;
        scale = std::max(scale, closer);
    }
    if (scale < kFoldBelow) { // folding narrows the diagram: it helps only where the width limits the scale
        const double folded = fitting(layout(true, true, 0, compact).size);
        fold = folded > scale + 0.01;
        scale = std::max(scale, folded);
    }
    if (scale < kFoldBelow) { // then the shapes go (the tooltip and the subtitle still give them)
        const double bare = fitting(layout(true, false, 0, compact).size);
        if (bare > scale + 0.01) {
            fold = true;
            shapes = false;
            scale = bare;
        }
    }
    scale = std::max(kMinScale, scale);
    m_layout = layout(fold, shapes, int(width() / scale), compact);
    m_layout->scale = scale;
    return *m_layout;
}

QSize ArchitectureView::sizeHint() const
{
    return {1200, 800};
}

QSize ArchitectureView::minimumSizeHint() const
{
    const QSize folded = layout(true, false, 0, true).size;
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
    const int right = run.lanes > 0 ? 3 + run.lanes * l.laneStep : 0;
    return {run.x + l.spineLane, l.top + b.row * l.rowPitch, run.width - l.spineLane - right, l.boxHeight};
}

QRect ArchitectureView::unscaledFoldRect(const Layout &l, int run) const
{
    const PlacedRun &placed = l.runs[size_t(run)];
    if (!placed.run.folded)
        return {};
    return {placed.x + l.spineLane, l.top, placed.width - l.spineLane,
        placed.rows * l.rowPitch - (l.rowPitch - l.boxHeight)};
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
        m_diagram = architectureDiagram(
            *m_input.program, m_input.trace.get(), m_input.model ? &m_input.model->config : nullptr);
        m_message.clear();
        // A step forward on the same program pulses into the new operation (not a new model or input, nor a
        // drawing that nobody sees: an export).
        const bool sameRun = m_input.model.get() == m_shownModel && m_input.tokenIds == m_shownTokens
            && m_input.sourceIds == m_shownSource && m_input.padding == m_shownPadding;
        if (sameRun && m_diagram.current > m_shownCurrent && m_diagram.current >= 0 && animationMilliseconds() > 0
            && isVisible())
            startPulse(m_diagram.current);
    }
    m_shownModel = m_input.model.get();
    m_shownTokens = m_input.tokenIds;
    m_shownSource = m_input.sourceIds;
    m_shownPadding = m_input.padding;
    m_shownCurrent = m_diagram.current;
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
    const int subtitleBaseline = kViewMargin + QFontMetrics(titleFont).height() + QFontMetrics(labelFont).ascent() + 2;
    p.drawText(QPoint(kViewMargin, subtitleBaseline), subtitle(l.shapes));
    // The key to the arrows, after the subtitle or below it.
    const QFontMetrics labelMetrics(labelFont);
    double x = l.legendOwnLine ? kViewMargin : kViewMargin + labelMetrics.horizontalAdvance(subtitle(l.shapes)) + 16;
    const int legendBaseline = l.legendOwnLine ? subtitleBaseline + labelMetrics.height() + 2 : subtitleBaseline;
    for (const auto &[color, width, style, text] : legend()) {
        const double y = legendBaseline - labelMetrics.ascent() / 2.0 + 1;
        p.setPen(QPen(color, width, style, Qt::FlatCap));
        p.drawLine(QPointF(x, y), QPointF(x + 22, y));
        p.setPen(muted);
        p.drawText(QPointF(x + 27, legendBaseline), text);
        x += 27 + labelMetrics.horizontalAdvance(text) + 14;
    }
    p.setFont(headFont);
    p.setPen(colors.text);
    const int headHeight = QFontMetrics(headFont).height();
    for (const PlacedRun &placed : l.runs)
        p.drawText(QRect(placed.x, l.top - l.gap - headHeight, placed.width, headHeight), Qt::AlignCenter,
            runTitle(placed.run));
    const QColor accent = colors.accent;
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
    paintEdges(p, l, accent);
    const int current = m_diagram.current;
    for (const DiagramBox &b : m_diagram.boxes) {
        const QRect r = unscaledBoxRect(l, b.op);
        if (r.isEmpty())
            continue;
        const bool isCurrent = b.op == current;
        QPen pen(isCurrent ? accent : colors.axis, isCurrent ? 2.5 : 1, b.done ? Qt::SolidLine : Qt::DashLine);
        p.setPen(pen);
        QColor currentFill = accent; // while a pulse runs into it, it fills as the pulse arrives
        const bool arriving = isCurrent && b.op == m_pulseOp;
        if (arriving)
            currentFill.setAlphaF(float(0.25 + 0.75 * m_pulseAt));
        p.setBrush(isCurrent ? currentFill : b.done ? doneFill : colors.background);
        p.drawRoundedRect(r.adjusted(1, 1, -1, -1), 4, 4);
        p.setPen(isCurrent && (!arriving || m_pulseAt > 0.5) ? palette::inkOn(currentFill) : colors.text);
        const QString shape = QString::fromStdString(b.shape);
        const int shapeWidth = l.shapes ? fm.horizontalAdvance(shape) : 0;
        const QRect text = r.adjusted(6, 0, -6, 0);
        const QString name = boxName(b);
        const QString shown = fm.elidedText(name, Qt::ElideRight, text.width() - shapeWidth - 6);
        if (shown != name)
            noteClipped(name);
        p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, shown);
        if (l.shapes) {
            QFont shapeFont = labelFont; // the stepper's tensor's shape stands out
            shapeFont.setBold(isCurrent);
            p.setFont(shapeFont);
            p.drawText(text, Qt::AlignRight | Qt::AlignVCenter, shape);
            p.setFont(labelFont);
        }
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
        const QStringList kinds = foldKinds(placed.run);
        const QString what = kinds.isEmpty() ? tr("each runs the same %1 operations as layer 0").arg(placed.rows)
                                             : tr("their layers differ: %1").arg(kinds.join(QStringLiteral(", ")));
        return QToolTip::showText(event->globalPosition().toPoint(),
            tr("%1: folded to fit the width, %2.\nClick to step into the first of them, which opens it; a wider "
               "window shows them all.")
                .arg(runTitle(placed.run), what),
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

std::unique_ptr<atlas::View> atlas::views::architecture::makeView(QWidget *parent)
{
    return std::make_unique<ArchitectureView>(parent);
}
