#pragma once

#include "views/view.h"

#include <string>
#include <vector>

class QCPBars;
class QCPColorMap;
class QCPColorScale;
class QCustomPlot;
class QLabel;
class QMouseEvent;
class QSpinBox;
class QStackedWidget;
class QWidget;

namespace atlas {

class Tensor;

// One trace tensor, spec.tensor: a header (name, shape, formula, min/max/mean), then the data: a heat map
// with a colour bar for rank 2 (rank 3: one slice, chosen with a "head" spin box bound to spec.head), bars
// for rank 1, the number for a scalar. Signed data uses a blue-white-red map symmetric around 0, other data
// spec.colormap; −inf cells (masked scores) get a colour of their own.
class TensorView : public View
{
    Q_OBJECT

public:
    static constexpr int kMaxCells = 1000; // cells per side of the heat map; bigger matrices are mean-pooled

    explicit TensorView(QWidget *parent = nullptr);
    std::vector<QWidget *> interfaceWidgets() const override { return {m_sliceRow}; }

    QString shapeText() const { return m_shapeText; } // "[2, 5, 4]", empty when nothing is shown
    QString formulaText() const { return m_formulaText; }
    QString headerText() const; // the whole header, as plain text
    QString message() const; // the centred message (or scalar), else empty
    int slice() const; // the first index shown of a rank-3 tensor
    void setSlice(int index);
    QSpinBox *sliceBox() const { return m_sliceBox; }
    QCustomPlot *heatPlot() const { return m_heatPlot; }
    QCPColorMap *colorMap() const { return m_colorMap; }
    QCPColorScale *colorScale() const { return m_colorScale; }
    QCustomPlot *barPlot() const { return m_barPlot; }

    // Mean of the finite values of each block of a rows×cols row-major matrix, pooled to outRows×outCols;
    // a block with no finite value is −inf if it holds one, else NaN.
    static std::vector<float> meanPool(const float *data, int rows, int cols, int outRows, int outCols);

protected:
    void refresh() override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    const Tensor *tensor() const;
    void showMessage(const QString &text, bool large = false);
    void updateHeader(const Tensor &t, const std::string &formula);
    void updateSliceBox(const Tensor &t);
    void drawMatrix(const float *data, int rows, int cols);
    void fillColorMap(const std::vector<float> &cells, int outRows, int outCols, int rows, int cols);
    void setColorRange(float lo, float hi, bool signedData);
    void labelAxes(int rows, int cols);
    void drawVector(const Tensor &t);
    void applyTheme();
    void showCellToolTip(QMouseEvent *event);
    void onSliceChanged(int index);

    QLabel *m_header = nullptr;
    QWidget *m_sliceRow = nullptr;
    QSpinBox *m_sliceBox = nullptr;
    QLabel *m_sliceCount = nullptr;
    QStackedWidget *m_stack = nullptr;
    QLabel *m_message = nullptr;
    QCustomPlot *m_heatPlot = nullptr;
    QCPColorMap *m_colorMap = nullptr;
    QCPColorScale *m_colorScale = nullptr;
    QCustomPlot *m_barPlot = nullptr;
    QCPBars *m_bars = nullptr;
    QString m_shapeText;
    QString m_formulaText;
    int m_rows = 0; // of the matrix shown (before pooling), for the tooltip
    int m_cols = 0;
    double m_min = 0; // of the finite values of the whole tensor
    double m_max = 0;
    double m_minPositive = 0;
};

} // namespace atlas

namespace atlas::views::tracedtensor {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::tracedtensor
