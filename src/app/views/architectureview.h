#pragma once

#include "analysis/architecturediagram.h"
#include "views/view.h"

#include <QRect>
#include <QStringList>

#include <optional>
#include <vector>

namespace atlas {

// The architecture diagram (view kind "architecture", in the style of Transformer Explainer): a column per part of
// the model (the embedding, each layer, the output head), each a box per operation with its output's shape, the
// residual adds marked ⊕. Operations already run are filled, the stepper's last one is outlined in the accent
// colour, those still to come are dashed. Clicking a box steps the model to it (spec "op"); hovering shows its
// formula. The boxes are architectureDiagram's. A diagram wider than the view is first scaled down, then, when
// that would shrink its text too far, drawn with the layers folded (columnRuns): clicking a folded column steps
// into its first layer, which unfolds it.
class ArchitectureView : public View
{
    Q_OBJECT

public:
    explicit ArchitectureView(QWidget *parent = nullptr);

    const ArchitectureDiagram &diagram() const { return m_diagram; }
    QRect boxRect(int op) const; // where op `op`'s box is drawn (empty when it is not, or is folded)
    QRect foldRect(int column) const; // where the folded run holding `column` is drawn (empty when not folded)
    QString message() const { return m_message; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void refresh() override;
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;

private:
    struct PlacedRun
    {
        DiagramColumnRun run;
        int x = 0, width = 0;
        int rows = 0; // its boxes (a folded run: one layer's)
    };
    // In the diagram's own coordinates, drawn at `scale` from the view's top left.
    struct Layout
    {
        std::vector<PlacedRun> runs;
        std::vector<int> runOfColumn;
        int top = 0, boxHeight = 0, rowPitch = 0, gap = 0;
        QSize size;
        double scale = 1;
        bool shapes = true; // each box's tensor shape beside its name (hidden where it would shrink the text)
    };
    const Layout &layout() const; // for the view's size, kept until the next refresh or another size
    // Columns at their natural widths, widened to fill `width`.
    Layout layout(bool fold, bool shapes, int width) const;
    QRect placed(const Layout &l, const QRect &rect) const; // from the diagram's coordinates to the view's
    QRect unscaledBoxRect(const Layout &l, int op) const;
    QRect unscaledFoldRect(const Layout &l, int run) const;
    QString runTitle(const DiagramColumnRun &run) const;
    QStringList foldLines(const PlacedRun &placed) const; // the text of a folded run
    QString subtitle(bool shapes) const;
    int boxAt(const QPoint &point) const;
    int foldAt(const QPoint &point) const; // the first column of the folded run at `point`, or −1

    ArchitectureDiagram m_diagram;
    mutable std::optional<Layout> m_layout;
    mutable QSize m_layoutSize; // the size m_layout is for
    QString m_message;
};

} // namespace atlas
