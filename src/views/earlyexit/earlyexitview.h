#pragma once

#include "views/analysisplotview.h"

#include "earlyexit/earlyexit.h"

class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace atlas {

struct EarlyExit;

// Early exit (view kind "early-exit"): each token stops after the first block sure enough of its prediction, read
// through the logit lens. On the left, every block's confidence per position and where the chosen rule stops each
// token; on the right, the layers run per token against the accuracy kept, for every confidence threshold θ and
// every patience t, with the chosen setting ringed. The numbers are EarlyExitAnalysis's (earlyexit/earlyexit.h).
class EarlyExitView : public ResultPlotView<EarlyExitAnalysis>
{
    Q_OBJECT

public:
    explicit EarlyExitView(QWidget *parent = nullptr);

protected:
    QString draw(const EarlyExitAnalysis &result) override;
    QString pendingText() const override;
    bool keepsResultWhilePending() const override { return true; }

private:
    void drawExits(const EarlyExit &e, const std::vector<int> &exits);
    void drawTradeOff(const EarlyExit &e);
    void syncControls(int layers);

    QComboBox *m_rule;
    QDoubleSpinBox *m_threshold;
    QSpinBox *m_patience;
};

} // namespace atlas

namespace atlas::views::earlyexit {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::earlyexit
