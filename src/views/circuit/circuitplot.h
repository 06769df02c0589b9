#pragma once

#include <QPointF>
#include <QRectF>
#include <QWidget>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace atlas {

struct CircuitScores;

// The residual graph drawn left to right: the embedding, each layer's heads in a column and its feed-forward beside
// them, the logits. The circuit's edges run from a sender's right side to a receiver's left; an edge into a head ends
// at its queries (upper third), keys (middle) or values (lower third). An edge's width and opacity grow with its
// |estimate|, its colour says whether it restores the clean metric or works against it. Hover for an edge's or a
// node's numbers; a click reports the edge or the node.
class CircuitPlot : public QWidget
{
    Q_OBJECT

public:
    explicit CircuitPlot(QWidget *parent = nullptr);

    // `kept` of scores' largest edges drawn; `chosen` (an edge, −1 none) drawn over them.
    void setCircuit(std::shared_ptr<const CircuitScores> scores, int kept, int chosen, const std::string &theme);
    int edgeAt(QPointF point) const; // a drawn edge within a few pixels, −1 none
    int nodeAt(QPointF point) const; // a sender's node, or −2 for the logits; −1 none
    QRectF nodeRect(int sender) const; // −2: the logits'
    QPointF edgeMidpoint(int edge) const;
    QString edgeText(int edge) const;
    QString nodeText(int node) const;

    std::function<void(int)> edgeClicked, nodeClicked;
    QSize minimumSizeHint() const override { return {360, 240}; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;

private:
    QRectF plotArea() const;
    QPointF senderPort(int sender) const;
    QPointF receiverPort(int receiver) const;
    std::vector<QPointF> edgePath(int edge) const; // the curve, as a polyline
    double scoreScale() const; // the largest |estimate| drawn

    std::shared_ptr<const CircuitScores> m_scores;
    int m_kept = 0, m_chosen = -1, m_hovered = -1;
    int m_layers = 0, m_heads = 1; // of the graph drawn
    std::vector<int> m_receiverNodes; // per receiver, its node: a sender, or −2 for the logits
    std::string m_theme;
    QPointF m_pressedAt;
};

} // namespace atlas
