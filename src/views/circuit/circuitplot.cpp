#include "circuit/circuitplot.h"

#include "circuit/circuit.h"
#include "viewmodel/viewinput.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

constexpr int kSamples = 24; // points along a drawn edge, for its hit test
constexpr double kHitDistance = 5.0;

double distanceToSegment(QPointF p, QPointF a, QPointF b)
{
    const QPointF ab = b - a;
    const double length = QPointF::dotProduct(ab, ab);
    const double t = length > 0 ? std::clamp(QPointF::dotProduct(p - a, ab) / length, 0.0, 1.0) : 0.0;
    const QPointF d = p - (a + t * ab);
    return std::hypot(d.x(), d.y());
}

int layersOf(const CircuitScores &s)
{
    return s.graph.receivers.back().layer; // the logits read after the last block
}

int headsOf(const CircuitScores &s)
{
    int heads = 0;
    for (const CircuitNode &n : s.graph.senders)
        heads = std::max(heads, n.head + 1);
    return std::max(1, heads);
}

// The node each receiver belongs to: its head (a K/V head shared by several query heads: the first of them), its
// feed-forward, or the logits (−2).
std::vector<int> receiverNodes(const CircuitGraph &g, int heads)
{
    std::vector<int> nodes;
    for (const CircuitReceiver &v : g.receivers) {
        if (v.port == ReadPort::Logits) {
            nodes.push_back(-2);
            continue;
        }
        if (v.port == ReadPort::Mlp) {
            nodes.push_back(g.findSender(CircuitNode::Kind::Mlp, v.layer, -1));
            continue;
        }
        int head = v.head;
        if (v.port != ReadPort::Query) {
            int kvHeads = 0;
            for (const CircuitReceiver &r : g.receivers)
                kvHeads += r.layer == v.layer && r.port == ReadPort::Key;
            head = v.head * (heads / std::max(1, kvHeads));
        }
        nodes.push_back(g.findSender(CircuitNode::Kind::Head, v.layer, head));
    }
    return nodes;
}

} // namespace

CircuitPlot::CircuitPlot(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void CircuitPlot::setCircuit(
    std::shared_ptr<const CircuitScores> scores, int kept, int chosen, const std::string &theme)
{
    m_scores = std::move(scores);
    m_kept = m_scores ? std::clamp(kept, 0, int(m_scores->order.size())) : 0;
    m_layers = m_scores ? layersOf(*m_scores) : 0;
    m_heads = m_scores ? headsOf(*m_scores) : 1;
    m_receiverNodes = m_scores ? receiverNodes(m_scores->graph, m_heads) : std::vector<int> {};
    m_chosen = chosen;
    m_theme = theme;
    m_hovered = -1;
    update();
}

QRectF CircuitPlot::plotArea() const
{
    const QFontMetricsF metrics(sizedFont(font(), 10));
    return QRectF(rect()).adjusted(8, 8 + 1.6 * metrics.height(), -8, -8);
}

// Columns: the embedding, then per layer its heads and its feed-forward, then the logits.
QRectF CircuitPlot::nodeRect(int sender) const
{
    if (!m_scores)
        return {};
    const QRectF area = plotArea();
    const int L = m_layers, H = m_heads, columns = 2 * L + 2;
    const double columnWidth = area.width() / columns, rowHeight = area.height() / H;
    const double w = std::min(columnWidth * 0.72, 64.0), h = std::clamp(rowHeight * 0.7, 12.0, 30.0);
    int column = 0;
    double y = area.center().y();
    if (sender == -2) {
        column = columns - 1;
    } else {
        const CircuitNode &n = m_scores->graph.senders.at(size_t(sender));
        if (n.kind == CircuitNode::Kind::Head) {
            column = 2 * n.layer + 1;
            y = area.top() + (n.head + 0.5) * rowHeight;
        } else if (n.kind == CircuitNode::Kind::Mlp) {
            column = 2 * n.layer + 2;
        }
    }
    const double x = area.left() + (column + 0.5) * columnWidth;
    return {x - w / 2, y - h / 2, w, h};
}

QPointF CircuitPlot::senderPort(int sender) const
{
    const QRectF r = nodeRect(sender);
    return {r.right(), r.center().y()};
}

// A head receives at its queries (upper third), keys (middle) or values (lower third).
QPointF CircuitPlot::receiverPort(int receiver) const
{
    const ReadPort port = m_scores->graph.receivers.at(size_t(receiver)).port;
    const QRectF r = nodeRect(m_receiverNodes.at(size_t(receiver)));
    if (port == ReadPort::Logits || port == ReadPort::Mlp)
        return {r.left(), r.center().y()};
    const double third = r.height() / 3;
    const double y = port == ReadPort::Query ? r.top() + third / 2
        : port == ReadPort::Key              ? r.center().y()
                                             : r.bottom() - third / 2;
    return {r.left(), y};
}

std::vector<QPointF> CircuitPlot::edgePath(int edge) const
{
    const CircuitEdge &e = m_scores->graph.edges.at(size_t(edge));
    const QPointF a = senderPort(e.sender), b = receiverPort(e.receiver);
    const double pull = std::max(20.0, (b.x() - a.x()) * 0.45);
    // An edge along a row past other columns (the feed-forwards', the embedding's and the logits' row) bows over
    // the nodes between, higher the more it passes.
    const QRectF area = plotArea();
    const int columns = 2 * m_layers + 2, H = m_heads;
    const double passed = std::round((b.x() - a.x()) / (area.width() / columns)) - 1;
    const double bow = passed >= 1 && std::abs(a.y() - b.y()) < 0.5 * area.height() / H
        ? -std::min(area.height() * 0.45, passed * std::min(28.0, area.height() * 0.08))
        : 0.0;
    const QPointF c1(a.x() + pull, a.y() + bow), c2(b.x() - pull, b.y() + bow);
    std::vector<QPointF> points;
    for (int i = 0; i <= kSamples; ++i) {
        const double t = double(i) / kSamples, u = 1 - t;
        points.push_back(u * u * u * a + 3 * u * u * t * c1 + 3 * u * t * t * c2 + t * t * t * b);
    }
    return points;
}

QPointF CircuitPlot::edgeMidpoint(int edge) const
{
    return edgePath(edge)[kSamples / 2];
}

double CircuitPlot::scoreScale() const
{
    double top = 0;
    for (int k = 0; k < m_kept; ++k)
        top = std::max(top, std::abs(m_scores->attribution.score[size_t(m_scores->order[size_t(k)])]));
    return top > 0 ? top : 1;
}

int CircuitPlot::edgeAt(QPointF point) const
{
    if (!m_scores)
        return -1;
    int best = -1;
    double nearest = kHitDistance;
    const auto consider = [&](int edge) {
        const std::vector<QPointF> path = edgePath(edge);
        for (size_t i = 0; i + 1 < path.size(); ++i)
            if (const double d = distanceToSegment(point, path[i], path[i + 1]); d < nearest) {
                nearest = d;
                best = edge;
            }
    };
    for (int k = 0; k < m_kept; ++k)
        consider(m_scores->order[size_t(k)]);
    if (m_chosen >= 0)
        consider(m_chosen);
    return best;
}

int CircuitPlot::nodeAt(QPointF point) const
{
    if (!m_scores)
        return -1;
    if (nodeRect(-2).contains(point))
        return -2;
    for (size_t s = 0; s < m_scores->graph.senders.size(); ++s)
        if (nodeRect(int(s)).contains(point))
            return int(s);
    return -1;
}

QString CircuitPlot::edgeText(int edge) const
{
    const double score = m_scores->attribution.score.at(size_t(edge));
    const auto rank = std::find(m_scores->order.begin(), m_scores->order.end(), edge) - m_scores->order.begin();
    return tr("%1 (rank %2 of %3): estimated change of the metric %4, %5 of clean − corrupted. Click to patch it "
              "exactly.")
        .arg(QString::fromStdString(m_scores->graph.edgeName(edge)))
        .arg(rank + 1)
        .arg(m_scores->order.size())
        .arg(formatNumber(score, 3), formatPercent(score / (m_scores->clean - m_scores->corrupted)));
}

QString CircuitPlot::nodeText(int node) const
{
    if (node == -2)
        return tr(
            "logits: the final norm and the unembedding read the stream here. Click to open the Next token view.");
    const CircuitNode &n = m_scores->graph.senders.at(size_t(node));
    double out = 0, in = 0;
    for (int k = 0; k < m_kept; ++k) {
        const CircuitEdge &e = m_scores->graph.edges[size_t(m_scores->order[size_t(k)])];
        const double s = m_scores->attribution.score[size_t(m_scores->order[size_t(k)])];
        if (e.sender == node)
            out += s;
        const CircuitReceiver &r = m_scores->graph.receivers[size_t(e.receiver)];
        if (r.layer == n.layer
            && ((n.kind == CircuitNode::Kind::Mlp && r.port == ReadPort::Mlp)
                || (n.kind == CircuitNode::Kind::Head && r.head == n.head && r.port == ReadPort::Query)))
            in += s;
    }
    const QString what = n.kind == CircuitNode::Kind::Embedding ? tr("the embedding")
        : n.kind == CircuitNode::Kind::Mlp                      ? tr("the feed-forward of layer %1").arg(n.layer)
                                                                : tr("head %1 of layer %2").arg(n.head).arg(n.layer);
    return tr("%1 (%2): its kept edges out sum to %3%4.%5")
        .arg(what, QString::fromStdString(n.name()), formatNumber(out, 3),
            n.kind == CircuitNode::Kind::Embedding ? QString() : tr(", in %1").arg(formatNumber(in, 3)),
            n.kind == CircuitNode::Kind::Head      ? tr(" Click to open it in the Attention view.")
                : n.kind == CircuitNode::Kind::Mlp ? tr(" Click to open its activations in the Sparse FFN view.")
                                                   : QString());
}

void CircuitPlot::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const ThemeColors colors = themeColors(m_theme);
    p.fillRect(rect(), colors.background);
    if (!m_scores)
        return;
    const bool dark = m_theme == "dark";
    const QColor restores = palette::coolCurve(dark), opposes = palette::warmCurve(dark);
    const CircuitPlot &self = *this;
    // The legend over the graph.
    const QFont legendFont = sizedFont(font(), 10);
    p.setFont(legendFont);
    const QFontMetricsF legendMetrics(legendFont);
    double x = 8;
    const double y = 8 + legendMetrics.ascent();
    for (const auto &[colour, text] :
        {std::pair {restores, tr("restores the clean metric")}, std::pair {opposes, tr("works against it")}}) {
        p.setPen(QPen(colour, 3));
        p.drawLine(QPointF(x, y - legendMetrics.ascent() / 3), QPointF(x + 22, y - legendMetrics.ascent() / 3));
        p.setPen(colors.text);
        p.drawText(QPointF(x + 28, y), text);
        x += 28 + legendMetrics.horizontalAdvance(text) + 18;
    }
    p.setPen(colors.muted);
    p.drawText(QPointF(x, y), tr("into a head: q above, k middle, v below"));

    // Edges, weakest first.
    const double scale = scoreScale();
    for (int k = m_kept - 1; k >= 0; --k) {
        const int edge = m_scores->order[size_t(k)];
        const double s = m_scores->attribution.score[size_t(edge)], strength = std::abs(s) / scale;
        QColor c = s >= 0 ? restores : opposes;
        c.setAlphaF(0.25 + 0.75 * strength);
        const std::vector<QPointF> path = self.edgePath(edge);
        QPainterPath curve(path.front());
        for (size_t i = 1; i < path.size(); ++i)
            curve.lineTo(path[i]);
        if (edge == m_hovered || edge == m_chosen) {
            p.setPen(
                QPen(edge == m_chosen ? colors.text : colors.muted, 7 + 5 * strength, Qt::SolidLine, Qt::RoundCap));
            p.drawPath(curve);
        }
        p.setPen(QPen(c, 0.8 + 5 * strength, Qt::SolidLine, Qt::RoundCap));
        p.drawPath(curve);
    }
    if (m_chosen >= 0
        && std::find(m_scores->order.begin(), m_scores->order.begin() + m_kept, m_chosen)
            == m_scores->order.begin() + m_kept) { // chosen, but not among the kept: drawn thin over them
        const std::vector<QPointF> path = self.edgePath(m_chosen);
        QPainterPath curve(path.front());
        for (size_t i = 1; i < path.size(); ++i)
            curve.lineTo(path[i]);
        p.setPen(QPen(colors.text, 2, Qt::DashLine));
        p.drawPath(curve);
    }

    // Nodes: those the circuit touches in the text colour, the others muted.
    std::vector<bool> touched(m_scores->graph.senders.size() + 1, false);
    for (int k = 0; k < m_kept; ++k) {
        const CircuitEdge &e = m_scores->graph.edges[size_t(m_scores->order[size_t(k)])];
        touched[size_t(e.sender)] = true;
        const int node = m_receiverNodes[size_t(e.receiver)];
        touched[node == -2 ? touched.size() - 1 : size_t(node)] = true;
    }
    const auto drawNode = [&](int node, const QString &label, bool on) {
        const QRectF r = nodeRect(node);
        p.setPen(QPen(on ? colors.text : colors.muted, on ? 1.5 : 1));
        p.setBrush(colors.control);
        p.drawRoundedRect(r, 4, 4);
        QFont f = sizedFont(font(), 9);
        const QFontMetricsF fm(f);
        const QString shown = fm.horizontalAdvance(label) <= r.width() - 4 ? label : label.section('.', -1);
        if (fm.horizontalAdvance(shown) > r.width() - 2 || fm.height() > r.height() + 2)
            return;
        p.setFont(f);
        p.setPen(on ? colors.text : colors.muted);
        p.drawText(r, Qt::AlignCenter, shown);
    };
    for (size_t s = 0; s < m_scores->graph.senders.size(); ++s)
        drawNode(int(s), QString::fromStdString(m_scores->graph.senders[s].name()), touched[s]);
    drawNode(-2, tr("logits"), touched.back());
}

void CircuitPlot::mouseMoveEvent(QMouseEvent *event)
{
    const int node = nodeAt(event->position());
    const int edge = node == -1 ? edgeAt(event->position()) : -1;
    if (edge != m_hovered) {
        m_hovered = edge;
        update();
    }
    const QString text = edge >= 0 ? edgeText(edge) : node != -1 ? nodeText(node) : QString();
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
    setCursor(edge >= 0 || (node != -1 && node != 0) ? Qt::PointingHandCursor : Qt::ArrowCursor);
}

void CircuitPlot::mousePressEvent(QMouseEvent *event)
{
    m_pressedAt = event->position();
}

void CircuitPlot::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || (event->position() - m_pressedAt).manhattanLength() > 4)
        return;
    if (const int node = nodeAt(event->position()); node != -1) { // a node over the edges that end at it
        if (nodeClicked)
            nodeClicked(node);
    } else if (const int edge = edgeAt(event->position()); edge >= 0 && edgeClicked) {
        edgeClicked(edge);
    }
}

} // namespace atlas
