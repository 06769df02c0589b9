#pragma once

#include "analysis/architecturediagram.h"
#include "views/view.h"

#include <QPainterPath>
#include <QRect>
#include <QStringList>

#include <optional>
#include <vector>

class QComboBox;
class QVariantAnimation;

namespace atlas {

// The architecture diagram (view kind "architecture", in the style of Transformer Explainer): a column per part of
// the model (the embedding, each layer, the output head), each a box per operation with its output's shape, the
// residual adds marked ⊕. Operations already run are filled, the stepper's last one is outlined in the accent
// colour, those still to come are dashed. Clicking a box steps the model to it (spec "op"); hovering shows its
// formula. The boxes are architectureDiagram's. A diagram wider than the view is first scaled down, then, when
// that would shrink its text too far, drawn with the layers folded (columnRuns): clicking a folded column steps
// into its first layer, which unfolds it.
// The arrows are the data flow (architectureDiagram's edges): an operation's output into those that read it, the
// residual stream as a thick spine down each column's left (into each sub-layer's norm and each ⊕, then on to the
// next column), and an encoder's output Z into each cross-attention's K/V projection. The arrows into the stepper's
// operation are drawn in the accent colour. When the stepper moves forward, a pulse runs along them into the new
// operation (speed: the view's Animate box, kept between runs; Off draws at once).
class ArchitectureView : public View
{
    Q_OBJECT

public:
    explicit ArchitectureView(QWidget *parent = nullptr);

    const ArchitectureDiagram &diagram() const { return m_diagram; }
    QRect boxRect(int op) const; // where op `op`'s box is drawn (empty when it is not, or is folded)
    QRect foldRect(int column) const; // where the folded run holding `column` is drawn (empty when not folded)
    QString message() const { return m_message; }
    // Where edge `edge` (an index into diagram().edges) is drawn, in the view's coordinates; empty when it is not
    // (an end folded away, or a flow inside a folded run).
    QPainterPath edgePath(int edge) const;

    enum class Animation { Off, Slow, Normal, Fast };
    Animation animation() const;
    void setAnimation(Animation speed); // kept in the settings ("views/architectureAnimation")
    int animationMilliseconds() const; // the pulse's duration at this speed; 0 when Off
    bool animating() const { return m_pulseOp >= 0; }
    double pulseProgress() const { return m_pulseAt; } // 0 … 1 while animating

    std::vector<QWidget *> interfaceWidgets() const override;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void refresh() override;
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    struct PlacedRun
    {
        DiagramColumnRun run;
        int x = 0, width = 0;
        int rows = 0; // its boxes (a folded run: one layer's)
        int lanes = 0; // arrows routed down its right side (flows that skip rows, the encoder's K/V)
    };
    // In the diagram's own coordinates, drawn at `scale` from the view's top left.
    struct Layout
    {
        std::vector<PlacedRun> runs;
        std::vector<int> runOfColumn;
        int top = 0, boxHeight = 0, rowPitch = 0, gap = 0;
        int spineLane = 0, laneStep = 0; // the stream's lane left of each column's boxes; right lanes' spacing
        int bottom = 0; // below the tallest column: the channel the encoder's K/V arrows run along
        std::vector<int> laneOfEdge; // per edge: its right-side lane in its target's run, −1 none
        QSize size;
        double scale = 1;
        bool shapes = true; // each box's tensor shape beside its name (hidden where it would shrink the text)
        bool legendOwnLine = false; // the key to the arrows below the subtitle, not after it
    };
    struct LegendItem
    {
        QColor color;
        double width = 1;
        Qt::PenStyle style = Qt::SolidLine;
        QString text;
    };
    std::vector<LegendItem> legend() const; // the kinds of arrow drawn, for the key after the subtitle
    const Layout &layout() const; // for the view's size, kept until the next refresh or another size
    // Columns at their natural widths, widened to fill `width`; `compact` rows leave little room for arrows.
    Layout layout(bool fold, bool shapes, int width, bool compact = false) const;
    QRect placed(const Layout &l, const QRect &rect) const; // from the diagram's coordinates to the view's
    QRect unscaledBoxRect(const Layout &l, int op) const;
    QRect unscaledFoldRect(const Layout &l, int run) const;
    QString runTitle(const DiagramColumnRun &run) const;
    QStringList foldLines(const PlacedRun &placed) const; // the text of a folded run
    QStringList foldKinds(const DiagramColumnRun &run) const;
    QString subtitle(bool shapes) const;
    int boxAt(const QPoint &point) const;
    int foldAt(const QPoint &point) const; // the first column of the folded run at `point`, or −1
    QRect endRect(const Layout &l, int op, int *run) const; // a box, or the folded run holding it
    QPainterPath unscaledEdgePath(const Layout &l, int edge) const;
    void paintEdges(QPainter &p, const Layout &l, const QColor &accent) const;
    void startPulse(int op);

    ArchitectureDiagram m_diagram;
    mutable std::optional<Layout> m_layout;
    mutable QSize m_layoutSize; // the size m_layout is for
    QString m_message;
    QComboBox *m_animationBox = nullptr;
    QVariantAnimation *m_pulse = nullptr;
    int m_pulseOp = -1; // the op a pulse runs into, −1 none
    double m_pulseAt = 0;
    // The stepper's op when last drawn, and the run it stepped (a step forward on the same run pulses).
    int m_shownCurrent = -1;
    const Model *m_shownModel = nullptr;
    std::vector<int> m_shownTokens, m_shownSource, m_shownPadding;
};

} // namespace atlas

namespace atlas::views::architecture {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::architecture
