#pragma once

#include "views/analysisplotview.h"

#include "halting/halting.h"

class QSpinBox;

namespace atlas {

// Adaptive computation time (view kind "halting"; Graves 2016): on the left, the weight p_n with which ln_f reads each
// block's output for every token, the block where each token halted ringed; on the right, each position's ponder time
// N + R against how surprised the model was by the next token. Above them, a shared block's applications at most
// (max_steps). The numbers are HaltingAnalysis's (halting/halting.h).
class HaltingView : public ResultPlotView<HaltingAnalysis>
{
    Q_OBJECT

public:
    explicit HaltingView(QWidget *parent = nullptr);
    QSpinBox *maxStepsBox() const { return m_maxSteps; }

protected:
    QString draw(const HaltingAnalysis &result) override;
    QString pendingText() const override;

private:
    void drawWeights(const HaltingAnalysis &a);
    void drawPonder(const HaltingAnalysis &a);
    void syncMaxSteps(const HaltingAnalysis &a);

    QSpinBox *m_maxSteps; // max_steps: a shared block's applications at most, 0 = as trained
};

} // namespace atlas

namespace atlas::views::halting {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::halting
