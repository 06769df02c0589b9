#pragma once

#include "views/view.h"

#include <QColor>
#include <QLineF>
#include <QRectF>

#include <memory>
#include <utility>
#include <vector>

namespace atlas {

class Tensor;

// BertViz-style head view: the tokens twice, queries ("attending") on the left and keys ("attended") on the
// right, joined by one line per attention weight of `layer.{l}.attn.probs` (of the spec's site: for
// cross-attention the decoder's tokens on the left, the source's on the right), its opacity and width
// proportional to the weight. One head (spec.head >= 0) in one colour, or every head of the layer
// (spec.head == -1) in one colour each, each head switched off and on by clicking its swatch (spec hidden_heads).
// Hovering a token keeps only its lines; clicking one selects it (spec.position), which centres the 64-token
// window of long inputs.
class TokenLinesView : public View
{
    Q_OBJECT

public:
    enum class Side { None, Query, Key };

    struct Segment
    {
        int query = 0;
        int key = 0;
        int head = 0;
        float weight = 0.0f;
        int alpha = 0; // 0..255, proportional to the weight
        qreal width = 1.0; // pen width in pixels
        QColor color; // the head's colour, alpha applied
        QLineF line; // from the query's anchor to the key's anchor
    };

    static constexpr float kMinWeight = 0.01f; // lighter lines are not drawn
    static constexpr int kMaxWindow = 64; // tokens drawn at once

    explicit TokenLinesView(QWidget *parent = nullptr);

    // The lines drawn at the current size and hover, lightest first (the paint order).
    std::vector<Segment> segments() const;
    // The centred message shown instead of the lines ("Not computed yet: …"), or empty when drawing lines.
    // Why the lines are faint, when the shown heads' rows spread their weight nearly evenly; else empty.
    QString uniformNote() const;
    QString message() const;
    // First position and number of positions drawn (all of them unless the input is long): the queries', and the
    // keys' (the same for self-attention).
    std::pair<int, int> tokenWindow() const;
    std::pair<int, int> keyWindow() const;

    void setHover(Side side, int position); // what hovering a token does; Side::None clears
    Side hoverSide() const { return m_hoverSide; }
    int hoverPosition() const { return m_hoverPos; }

    static QColor headColor(int head, int heads); // on the light theme
    // Where head `head`'s swatch is drawn (every head's lines shown, spec.head −1): a click there hides or shows it.
    QRectF swatchRect(int head) const { return legendChip(geometry(), head); }

    QSize sizeHint() const override { return {720, 560}; }
    QSize minimumSizeHint() const override;

protected:
    void refresh() override;
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    struct Geometry
    {
        int first = 0; // first query position drawn
        int count = 0; // query positions drawn
        int keyFirst = 0, keyCount = 0; // the same for the keys
        qreal top = 0; // y of the first row
        qreal rowHeight = 0;
        QRectF leftLabels; // the query labels' column (text right-aligned)
        QRectF rightLabels; // the key labels' column (text left-aligned)
        qreal legendTop = 0;
    };

    struct Palette
    {
        QColor background, text, muted, highlight;
    };

    const Tensor *probs() const;
    int tokenCount() const; // queries
    int keyCount() const;
    int selectedPosition() const;
    int layerHeads() const; // heads of the layer drawn
    bool isHidden(int head) const; // switched off by its swatch (spec hidden_heads)
    std::vector<int> headsShown() const;
    Geometry geometry() const;
    Palette colors() const;
    QColor lineColor(int head, int heads) const; // headColor, lightened on the dark theme
    QString tokenLabel(Side side, int position) const;
    bool isPadding(Side side, int position) const;
    QRectF rowRect(const Geometry &g, Side side, int position) const;
    std::pair<Side, int> hitTest(const QPointF &point) const;
    QString hoverText() const;
    QRectF legendChip(const Geometry &g, int head) const; // head's swatch and name (every head's lines drawn)
    int legendHeadAt(const QPointF &point) const; // the head whose swatch is at `point`, or −1
    void toggleHead(int head); // hides or shows its lines, and says so through specEdited
    float partnerWeight(int position) const; // `position` on the side opposite the hovered token

    void paintHeader(QPainter &p, const Geometry &g, const Palette &pal) const;
    void paintLegend(QPainter &p, const Geometry &g, const Palette &pal) const;
    void paintLabels(QPainter &p, const Geometry &g, const Palette &pal) const;

    Side m_hoverSide = Side::None;
    int m_hoverPos = -1;
    mutable std::shared_ptr<const Tensor> m_onDemand; // what probs() recomputed from an on-demand trace, kept alive
};

} // namespace atlas

namespace atlas::views::tokenlines {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::tokenlines
