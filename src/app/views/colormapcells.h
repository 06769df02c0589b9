#pragma once

#include <qcustomplot.h>

namespace atlas {

// A colour map's cells written row by row. QCPColorMapData::setCell is an out-of-line call that checks both indices
// and the data bounds for every cell: for a heatmap of a million pooled cells that alone took ~20 ms of the GUI
// thread. Install it with QCPColorMap::setData(new ColorMapCells(…), false).
class ColorMapCells : public QCPColorMapData
{
public:
    using QCPColorMapData::QCPColorMapData;

    // keySize() × valueSize() values, the key index fastest; null while the map is empty.
    double *row(int valueIndex) { return mData == nullptr ? nullptr : mData + size_t(valueIndex) * size_t(mKeySize); }
    // After writing: the map redraws its image, and dataBounds() reports `bounds`.
    void markWritten(const QCPRange &bounds)
    {
        mDataBounds = bounds;
        mDataModified = true;
    }
};

} // namespace atlas
