#pragma once

#include "views/downsample.h"

#include <qcustomplot.h>

#include <string>

namespace atlas {

class ColorMapCells;

// How a heat map turns pooled values into colours: the colour bar's range, the cells' values and the gradient.
struct CellColouring
{
    bool mask = false; // the mask itself: every finite cell in one "allowed" colour
    bool diverging = false; // signed values over a range symmetric about 0
    bool log = false;
};

// The colour bar's range for `pooled`: [−1, 1] in mask mode, symmetric about 0 when diverging, [a floor below the
// smallest positive cell, the largest] in log scale, else the finite cells' range (widened by ½ each way when flat).
QCPRange colourRange(const Pooled &pooled, const CellColouring &how);
// Writes `pooled` into `cells`, the cell centres in the original matrix's indices (a single pooled cell spans the
// whole `window`): −∞ as NaN (the masked layer draws it), clamped to the range's floor in log scale, 0.5 for every
// allowed cell in mask mode.
void writeCells(ColorMapCells &cells, const Pooled &pooled, const CellWindow &window, const QCPRange &range,
    const CellColouring &how);

// The gradient of the cells and their colour bar: the diverging map for signed values, else the colour map; in mask
// mode the bar's lower half is −∞'s colour (the NaN colour too) and its upper half "allowed".
QCPColorGradient cellGradient(const std::string &colormapName, const CellColouring &how, const std::string &theme);
// The colour bar's axis: powers of ten ("10⁻³") in log scale, two labelled ticks in mask mode, plain numbers else.
void setColourBarAxis(
    QCPColorScale &scale, const CellColouring &how, const QString &maskedLabel, const QString &allowedLabel);

} // namespace atlas
