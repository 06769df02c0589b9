#pragma once

#include "views/analysisplotview.h"

#include "inversionerror/inversionerror.h"

namespace atlas {

// How exact reversible blocks are (view kind "inversion-error"): each block's inputs rebuilt by inversion from the
// last block's outputs, X₂ = Y₂ − G(Y₁), X₁ = Y₁ − F(X₂), against the inputs the forward pass had, with the streams
// held in float64, float32, float16 and bfloat16 (memory/inversionerror.h). Log scale, blocks in the order they
// are rebuilt; the caption gives the resulting gradient error. The numbers are InversionErrorAnalysis's.
class InversionErrorView : public ResultPlotView<InversionErrorAnalysis>
{
    Q_OBJECT

public:
    explicit InversionErrorView(QWidget *parent = nullptr);

protected:
    QString draw(const InversionErrorAnalysis &result) override;
};

} // namespace atlas

namespace atlas::views::inversionerror {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::inversionerror
