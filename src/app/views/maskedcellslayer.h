#pragma once

#include "views/palette.h"

#include <qcustomplot.h>

namespace atlas {

class HeatmapPlot;

// Hatches the −∞ cells of the plot's pooled matrix over the colour map (whose NaN colour already fills them), and
// where the plot asks for it the cells exactly 0 the other way, as runs of rectangles per pooled row, so vector
// exports keep the hatching.
class MaskedCellsLayer : public QCPLayerable
{
public:
    explicit MaskedCellsLayer(HeatmapPlot *plot);

    QColor hatch = palette::maskedHatch;
    QColor zeroHatch = palette::zeroHatch; // over cells exactly 0 (HeatmapPlot::setExactZeroNote)

protected:
    QRect clipRect() const override;
    void applyDefaultAntialiasingHint(QCPPainter *painter) const override;
    void draw(QCPPainter *painter) override;

private:
    HeatmapPlot *m_plot;
};

} // namespace atlas
