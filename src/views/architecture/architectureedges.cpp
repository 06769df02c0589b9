#include "architecture/architectureview.h"

#include "views/palette.h"
#include "views/plottheme.h"

#include <QPainter>

#include <algorithm>

// The Architecture view's arrows: where each edge of the diagram runs, how it is drawn, and the key to them.
namespace atlas {

namespace {

// Told apart with colour-blind eyes too: the stream bluish green, the encoder's K/V orange.
const QColor &kStreamColor = palette::okabeGreen;
const QColor &kEncoderColor = palette::okabeOrange;

} // namespace

std::vector<ArchitectureView::LegendItem> ArchitectureView::legend() const
{
    std::vector<LegendItem> items {{kStreamColor, 3.5, Qt::SolidLine, tr("the residual stream")},
        {themeColors(m_spec.theme).axis, 1.2, Qt::SolidLine, tr("a tensor read")}};
    if (std::any_of(m_diagram.edges.begin(), m_diagram.edges.end(),
            [](const DiagramEdge &e) { return e.kind == DiagramEdge::Kind::EncoderKeyValue; }))
        items.push_back({kEncoderColor, 2.0, Qt::DashLine, tr("the encoder's output Z, read as K and V")});
    return items;
}

QRect ArchitectureView::endRect(const Layout &l, int op, int *run) const
{
    *run = l.runOfColumn[size_t(m_diagram.boxes[size_t(op)].column)];
    return l.runs[size_t(*run)].run.folded ? unscaledFoldRect(l, *run) : unscaledBoxRect(l, op);
}

QPainterPath ArchitectureView::unscaledEdgePath(const Layout &l, int edge) const
{
    const DiagramEdge &e = m_diagram.edges[size_t(edge)];
    int runA = 0, runB = 0;
    const QRectF a = endRect(l, e.from, &runA), b = endRect(l, e.to, &runB);
    const bool folded = l.runs[size_t(runA)].run.folded || l.runs[size_t(runB)].run.folded;
    if (a.isEmpty() || b.isEmpty() || (folded && (e.kind == DiagramEdge::Kind::Flow || runA == runB)))
        return {};
    QPainterPath path;
    const double laneX = l.runs[size_t(runB)].x + l.spineLane / 2.0;
    const double gapX = l.runs[size_t(runB)].x - l.gap / 2.0;
    const int lane = l.laneOfEdge[size_t(edge)];
    switch (e.kind) {
    case DiagramEdge::Kind::Stream: // down the target column's left lane, coming from the previous column's top
        if (runA == runB) {
            path.moveTo(a.left(), a.center().y());
            path.lineTo(laneX, a.center().y());
        } else {
            const double top = l.top - l.gap / 2.0;
            path.moveTo(a.right(), a.center().y());
            path.lineTo(gapX, a.center().y());
            path.lineTo(gapX, top);
            path.lineTo(laneX, top);
        }
        path.lineTo(laneX, b.center().y());
        path.lineTo(b.left(), b.center().y());
        break;
    case DiagramEdge::Kind::EncoderKeyValue: { // down from Z, along the bottom, up the target's right lane
        const double x = b.right() + 3 + std::max(0, lane) * l.laneStep, bottom = l.bottom + 8;
        path.moveTo(a.center().x(), a.bottom());
        path.lineTo(a.center().x(), bottom);
        path.lineTo(x, bottom);
        path.lineTo(x, b.center().y());
        path.lineTo(b.right(), b.center().y());
        break;
    }
    case DiagramEdge::Kind::Flow:
        if (runA != runB) {
            path.moveTo(a.right(), a.center().y());
            path.lineTo(gapX, a.center().y());
            path.lineTo(gapX, b.center().y());
            path.lineTo(b.left(), b.center().y());
        } else if (lane < 0) { // the next row: straight down
            path.moveTo(a.center().x(), a.bottom());
            path.lineTo(b.center().x(), b.top());
        } else { // rows skipped: down a right lane
            const double x = a.right() + 3 + lane * l.laneStep;
            path.moveTo(a.right(), a.center().y());
            path.lineTo(x, a.center().y());
            path.lineTo(x, b.center().y());
            path.lineTo(b.right(), b.center().y());
        }
        break;
    }
    return path;
}

QPainterPath ArchitectureView::edgePath(int edge) const
{
    if (edge < 0 || edge >= int(m_diagram.edges.size()) || !m_message.isEmpty())
        return {};
    const Layout &l = layout();
    return QTransform::fromScale(l.scale, l.scale).map(unscaledEdgePath(l, edge));
}

void ArchitectureView::paintEdges(QPainter &p, const Layout &l, const QColor &accent) const
{
    const QColor flow = themeColors(m_spec.theme).axis;
    std::vector<std::pair<QPainterPath, QPen>> drawn;
    for (int e = 0; e < int(m_diagram.edges.size()); ++e) {
        const DiagramEdge &edge = m_diagram.edges[size_t(e)];
        const QPainterPath path = unscaledEdgePath(l, e);
        if (path.isEmpty())
            continue;
        const bool into = edge.to == m_diagram.current, done = m_diagram.boxes[size_t(edge.to)].done;
        QColor color = into                                   ? accent
            : edge.kind == DiagramEdge::Kind::Stream          ? kStreamColor
            : edge.kind == DiagramEdge::Kind::EncoderKeyValue ? kEncoderColor
                                                              : flow;
        color.setAlphaF(into ? 1.0f : done ? 0.85f : 0.4f);
        const double width = (edge.kind == DiagramEdge::Kind::Stream        ? 3.5
                                     : edge.kind == DiagramEdge::Kind::Flow ? 1.2
                                                                            : 2.0)
            + (into ? 0.8 : 0.0);
        QPen pen(color, width, edge.kind == DiagramEdge::Kind::EncoderKeyValue ? Qt::DashLine : Qt::SolidLine,
            Qt::FlatCap, Qt::MiterJoin);
        drawn.emplace_back(path, pen);
    }
    // The accent arrows last, so that the ones into the stepper's operation are never under another.
    std::stable_partition(
        drawn.begin(), drawn.end(), [&accent](const auto &d) { return d.second.color().rgb() != accent.rgb(); });
    for (const auto &[path, pen] : drawn) {
        p.setPen(pen);
        p.setBrush(Qt::NoBrush);
        p.drawPath(path);
        // The arrowhead, along the last segment.
        const QPointF tip = path.currentPosition(), before = path.elementAt(path.elementCount() - 2);
        const QLineF back(tip, before);
        const double size = 4 + pen.widthF();
        QLineF side1 = back, side2 = back;
        side1.setLength(size);
        side2.setLength(size);
        side1.setAngle(back.angle() + 28);
        side2.setAngle(back.angle() - 28);
        QColor solid = pen.color();
        p.setPen(Qt::NoPen);
        p.setBrush(solid);
        p.drawPolygon(QPolygonF({tip, side1.p2(), side2.p2()}));
    }
    if (m_pulseOp < 0)
        return;
    p.setPen(Qt::NoPen);
    p.setBrush(accent);
    for (int e = 0; e < int(m_diagram.edges.size()); ++e)
        if (m_diagram.edges[size_t(e)].to == m_pulseOp)
            if (const QPainterPath path = unscaledEdgePath(l, e); !path.isEmpty())
                p.drawEllipse(path.pointAtPercent(std::clamp(m_pulseAt, 0.0, 1.0)), 5.0, 5.0);
}

} // namespace atlas
