#pragma once

#include "analysis/architecturediagram.h"
#include "views/view.h"

#include <QRect>

#include <vector>

namespace atlas {

// The architecture diagram (view kind "architecture", in the style of Transformer Explainer): a column per part of
// the model (the embedding, each layer, the output head), each a box per operation with its output's shape, the
// residual adds marked ⊕. Operations already run are filled, the stepper's last one is outlined in the accent
// colour, those still to come are dashed. Clicking a box steps the model to it (spec "op"); hovering shows its
// formula. The boxes are architectureDiagram's.
class ArchitectureView : public View
{
    Q_OBJECT

public:
    explicit ArchitectureView(QWidget *parent = nullptr);

    const ArchitectureDiagram &diagram() const { return m_diagram; }
    QRect boxRect(int op) const; // where op `op`'s box is drawn (empty when it is not)
    QString message() const { return m_message; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void refresh() override;
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;

private:
    struct Layout
    {
        int left = 0, top = 0, columnWidth = 0, boxHeight = 0, rowPitch = 0, gap = 0;
    };
    Layout layout() const;
    int boxAt(const QPoint &point) const;

    ArchitectureDiagram m_diagram;
    QString m_message;
};

} // namespace atlas
