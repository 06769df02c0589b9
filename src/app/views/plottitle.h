#pragma once

#include <qcustomplot.h>

namespace atlas {

// A title across its plot (a row of the plot's one-column layout) that wraps at word boundaries to the plot's width,
// so a long title grows a line instead of running past the plot's edges: QCustomPlot's text element keeps its text
// on one line. The heat map wraps its title and note to its axes' column itself (HeatmapPlot::wrapTitle).
class PlotTitle : public QCPTextElement
{
public:
    using QCPTextElement::QCPTextElement;

protected:
    QSize minimumOuterSizeHint() const override;
    QSize maximumOuterSizeHint() const override;
    void draw(QCPPainter *painter) override;

private:
    int availableWidth() const;
    QSize wrappedSize() const;
};

} // namespace atlas
