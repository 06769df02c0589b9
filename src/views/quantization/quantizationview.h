#pragma once

#include "views/analysisplotview.h"

#include "quantization/quantization.h"

class QComboBox;
class QMouseEvent;
class QSpinBox;

namespace atlas {

// Quantization (view kind "quantization"): one layer's matrices as llama.cpp stores them in fewer bits. Left, each
// matrix's relative error against float weights (its weights, bars; its output on this input, diamonds), or its bits
// per weight without float weights; a click chooses one. Middle, one block of the chosen matrix: each float weight and
// the weight read back, on the levels the block's scales allow. Right, the histogram of the matrix's weights. The
// numbers are QuantizationAnalysis's (quantization/quantization.h).
class QuantizationView : public ResultPlotView<QuantizationAnalysis>
{
    Q_OBJECT

public:
    explicit QuantizationView(QWidget *parent = nullptr);

protected:
    QString draw(const QuantizationAnalysis &result) override;
    QString pendingText() const override;
    bool keepsResultWhilePending() const override { return true; }

private:
    void drawMatrices(const QuantizationEffect &e);
    void drawBlock(const QuantizationEffect &e);
    void drawHistogram(const QuantizationEffect &e);
    void syncControls(const QuantizationEffect &e);
    void chooseMatrixAt(QMouseEvent *event);

    QComboBox *m_type;
    QComboBox *m_matrix;
    QSpinBox *m_block;
    QCPAxisRect *m_matrices = nullptr;
    std::vector<std::string> m_roles; // the roles of the matrices drawn, left to right
};

} // namespace atlas

namespace atlas::views::quantization {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::quantization
