#include "memorygraph/memorygraphview.h"

#include "view/memoryanalysis.h"
#include "views/byteunits.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QVBoxLayout>

#include <algorithm>

namespace atlas {

namespace {

QColor stateColor(NodeState state, bool dark)
{
    QColor c;
    switch (state) {
    case NodeState::Waiting:
        return Qt::transparent;
    case NodeState::Computing:
        c = palette::tableauBlue;
        break;
    case NodeState::Kept:
        c = palette::nodeKept;
        break;
    case NodeState::Dropped:
        c = palette::tableauGrey;
        break;
    case NodeState::Recomputing:
        c = palette::nodeRecomputing;
        break;
    case NodeState::Recomputed:
        c = palette::nodeRecomputed;
        break;
    case NodeState::Backward:
        c = palette::nodeBackward;
        break;
    case NodeState::Done:
        c = palette::nodeDone;
        break;
    }
    return dark ? c.darker(115) : c;
}

bool isActive(NodeState s)
{
    return s == NodeState::Computing || s == NodeState::Recomputing || s == NodeState::Backward;
}

} // namespace

MemoryGraphView::MemoryGraphView(QWidget *parent)
    : View(parent)
    , m_messageLabel(newMessageLabel())
{
    setFocusPolicy(Qt::StrongFocus);
    setAutoFillBackground(false);
    // The message is a label over the painted graph's place: its links (a built-in model, Run anyway) are clickable.
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_messageLabel);
    showMessage(tr("Nothing to show yet: run the model"));
}

void MemoryGraphView::showMessage(const QString &text)
{
    m_message = text;
    m_messageLabel->setVisible(!text.isEmpty());
    if (text.isEmpty())
        return;
    m_messageLabel->setFont(sizedFont(font(), 12));
    applyThemeBackground(m_messageLabel, m_spec.theme);
    setMessageText(m_messageLabel, text);
}

QSize MemoryGraphView::minimumSizeHint() const
{
    const int line = QFontMetrics(sizedFont(font(), 10)).height();
    return {36 * line, 3 * 7 * line + 4 * line};
}

int MemoryGraphView::strategyRows() const
{
    return m_drawn ? int(m_drawn->timeline.strategies.size()) : 0;
}

int MemoryGraphView::maxOps() const
{
    return m_drawn ? std::max(1, m_drawn->timeline.maxOps) : 1;
}

std::vector<GraphNode> MemoryGraphView::nodes(int row) const
{
    if (!m_drawn || row < 0 || row >= strategyRows())
        return {};
    const MemoryTimeline &t = m_drawn->timeline;
    return computationGraphAt(t.strategies[size_t(row)], t.layers, m_spec.cursor, t.encoderLayers);
}

void MemoryGraphView::refresh()
{
    const auto *analysis = currentAnalysis<MemoryTimelineAnalysis>();
    if (!analysis) {
        m_drawn.reset();
        showMessage(!m_input.analysis.problem.isEmpty() ? m_input.analysis.problem
                : m_input.trace ? tr("Computing… one training step under each memory strategy")
                                : tr("Nothing to show yet: run the model"));
    } else {
        m_drawn = std::static_pointer_cast<const MemoryTimelineAnalysis>(m_input.analysis.result);
        showMessage({});
    }
    update();
}

void MemoryGraphView::paintEvent(QPaintEvent *)
{
    clearClipped();
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const ThemeColors colors = themeColors(m_spec.theme);
    p.fillRect(rect(), colors.background);
    p.setPen(colors.text);
    if (!m_drawn) {
        m_strips.clear();
        return; // the message label shows why
    }
    const int line = QFontMetrics(sizedFont(font(), 10)).height();
    const QRect inner = rect().adjusted(line, line / 2, -line, -line / 2);
    p.setFont(sizedFont(font(), 12, true));
    const QString title = m_spec.cursor < 0
        ? tr("One training step's computation graph: Space steps")
        : tr("The computation graph at op %1 (Space or → steps, ← back)").arg(m_spec.cursor);
    const int titleHeight = QFontMetrics(p.font()).height() + line / 2;
    const QString shownTitle = QFontMetrics(p.font()).elidedText(title, Qt::ElideRight, inner.width());
    if (shownTitle != title)
        noteClipped(title);
    p.drawText(QRect(inner.left(), inner.top(), inner.width(), titleHeight), Qt::AlignLeft | Qt::AlignTop, shownTitle);
    const int legendHeight = 2 * line;
    const int rows = strategyRows();
    const int rowHeight = (inner.height() - titleHeight - legendHeight) / std::max(1, rows);
    m_strips.assign(size_t(rows), QRect());
    for (int r = 0; r < rows; ++r)
        paintStrategy(p, QRect(inner.left(), inner.top() + titleHeight + r * rowHeight, inner.width(), rowHeight), r);
    paintLegend(p, QRect(inner.left(), inner.bottom() - legendHeight, inner.width(), legendHeight));
}

void MemoryGraphView::paintStrategy(QPainter &p, const QRect &area, int row)
{
    const bool dark = m_spec.theme == "dark";
    const ThemeColors colors = themeColors(m_spec.theme);
    const TimelineStrategy &s = m_drawn->timeline.strategies[size_t(row)];
    const QFont textFont = sizedFont(font(), 10);
    const int line = QFontMetrics(textFont).height();
    p.setFont(sizedFont(font(), 10, true));
    p.setPen(colors.text);
    QString heading = QString::fromStdString(s.label);
    const int op = m_spec.cursor;
    if (s.problem.empty() && op >= 0 && op < int(s.ops.size())) {
        const MemoryOp &o = s.ops[size_t(op)];
        const QString phase = QString::fromLatin1(phaseName(o.phase));
        const QString name = QString::fromStdString(o.name);
        heading += tr(": op %1 is %2, live activations %3")
                       .arg(op)
                       .arg(name == phase ? name : tr("%1 (%2)").arg(name, phase),
                           byteAmount(double(s.activationBytesAt(s.pointAtOp(op)))));
    } else if (s.problem.empty() && op >= int(s.ops.size())) {
        heading += tr(": the step is over (%1 ops)").arg(s.ops.size());
    }
    const QFontMetrics headingMetrics(p.font());
    const QString shown = headingMetrics.elidedText(heading, Qt::ElideRight, area.width());
    if (shown != heading)
        noteClipped(heading);
    p.drawText(QRect(area.left(), area.top(), area.width(), line), Qt::AlignLeft | Qt::AlignVCenter, shown);
    if (!s.problem.empty()) {
        p.setFont(textFont);
        p.drawText(area.adjusted(0, line, 0, 0), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
            QString::fromStdString(s.problem));
        return;
    }
    // The chain of nodes.
    const std::vector<GraphNode> graph
        = computationGraphAt(s, m_drawn->timeline.layers, op, m_drawn->timeline.encoderLayers);
    const int n = int(graph.size());
    const int gap = std::max(4, line / 3);
    const int nodeWidth = std::clamp((area.width() - (n - 1) * gap) / std::max(1, n), 12, 8 * line);
    const int nodeHeight = int(2.4 * line);
    const int top = area.top() + int(1.4 * line);
    int left = area.left() + (area.width() - n * nodeWidth - (n - 1) * gap) / 2; // the chain centred
    p.setFont(sizedFont(font(), nodeWidth < 3 * line ? 8 : 10, true));
    for (int i = 0; i < n; ++i) {
        const GraphNode &node = graph[size_t(i)];
        const QRect box(left, top, nodeWidth, nodeHeight);
        const QColor fill = stateColor(node.state, dark);
        QPen pen(isActive(node.state) ? colors.text : colors.axis, isActive(node.state) ? 2.5 : 1);
        if (node.state == NodeState::Waiting || node.state == NodeState::Dropped)
            pen.setStyle(Qt::DashLine);
        p.setPen(pen);
        p.setBrush(fill);
        p.drawRoundedRect(box, 4, 4);
        const QString label = i == 0 ? tr("emb") : i == n - 1 ? tr("head") : QString::fromStdString(node.tag);
        p.setPen(node.state == NodeState::Waiting ? colors.text : palette::inkOn(fill));
        p.drawText(box, Qt::AlignCenter, label);
        if (i + 1 < n) {
            p.setPen(QPen(colors.axis, 1));
            p.drawLine(box.right() + 1, box.center().y(), box.right() + gap, box.center().y());
        }
        left += nodeWidth + gap;
    }
    // The live activation bytes of the whole step, the cursor on them.
    const QRect strip(area.left(), top + nodeHeight + line / 2, area.width(),
        std::clamp(area.bottom() - (top + nodeHeight + line / 2) - line / 2, line, 8 * line));
    m_strips[size_t(row)] = strip;
    p.setPen(QPen(colors.frame, 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(strip);
    const double peak = std::max(1.0, double(m_drawn->timeline.maxActivationBytes));
    QPainterPath path;
    path.moveTo(strip.left(), strip.bottom());
    for (size_t i = 0; i < s.x.size(); ++i) {
        const double x = strip.left() + (s.x[i] + 0.5) / maxOps() * strip.width();
        path.lineTo(x, strip.bottom() - double(s.activationBytesAt(int(i))) / peak * (strip.height() - 2));
    }
    path.lineTo(strip.left() + double(s.ops.size()) / maxOps() * strip.width(), strip.bottom());
    QColor fill = palette::nodeKept;
    fill.setAlpha(dark ? 120 : 90);
    p.setPen(QPen(fill.darker(130), 1));
    p.setBrush(fill);
    p.drawPath(path);
    if (op >= 0) {
        const double x = strip.left() + (op + 0.5) / maxOps() * strip.width();
        p.setPen(QPen(colors.text, 1.5, Qt::DashLine));
        p.drawLine(QPointF(x, strip.top()), QPointF(x, strip.bottom()));
    }
}

void MemoryGraphView::paintLegend(QPainter &p, const QRect &area)
{
    const bool dark = m_spec.theme == "dark";
    const ThemeColors colors = themeColors(m_spec.theme);
    p.setFont(sizedFont(font(), 9));
    const QFontMetrics metrics(p.font());
    const int box = metrics.height();
    int x = area.left(), y = area.top();
    for (int i = 0; i < kNodeStates; ++i) {
        const auto state = NodeState(i);
        const QString name = QString::fromLatin1(nodeStateName(state));
        const int width = box + 4 + metrics.horizontalAdvance(name) + box;
        if (x + width > area.right() && x > area.left()) { // a second row
            x = area.left();
            y += box + 2;
        }
        p.setPen(QPen(
            colors.axis, 1, state == NodeState::Waiting || state == NodeState::Dropped ? Qt::DashLine : Qt::SolidLine));
        p.setBrush(stateColor(state, dark));
        p.drawRoundedRect(QRect(x, y, box, box), 3, 3);
        p.setPen(colors.text);
        p.drawText(QRect(x + box + 4, y, width - box - 4, box), Qt::AlignVCenter, name);
        x += width;
    }
}

void MemoryGraphView::setCursor(int op)
{
    if (!m_drawn)
        return;
    op = std::clamp(op, 0, maxOps() - 1);
    if (op == m_spec.cursor)
        return;
    m_spec.cursor = op;
    update();
    emit specEdited(m_spec);
}

void MemoryGraphView::keyPressEvent(QKeyEvent *event)
{
    if (!m_drawn)
        return View::keyPressEvent(event);
    switch (event->key()) {
    case Qt::Key_Space:
    case Qt::Key_Right:
        return setCursor(m_spec.cursor + 1);
    case Qt::Key_Left:
        return setCursor(m_spec.cursor - 1);
    case Qt::Key_Home:
        return setCursor(0);
    case Qt::Key_End:
        return setCursor(maxOps() - 1);
    default:
        View::keyPressEvent(event);
    }
}

void MemoryGraphView::mousePressEvent(QMouseEvent *event)
{
    for (const QRect &strip : m_strips)
        if (strip.contains(event->position().toPoint()) && strip.width() > 0) {
            setFocus();
            return setCursor(int((event->position().x() - strip.left()) / strip.width() * maxOps()));
        }
    View::mousePressEvent(event);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::memorygraph::makeView(QWidget *parent)
{
    return std::make_unique<MemoryGraphView>(parent);
}
