#pragma once

#include "views/analysisplotview.h"

#include "ablation/ablation.h"

class QCPAxisRect;
class QComboBox;
class QMouseEvent;

namespace atlas {

// Head ablation (spec `ablation`): on the left the layer × head table of each head's importance (the task's held-out
// loss increase when that head alone is switched off), the heads switched off outlined; a click switches a head off
// or on. On the right the next-token distribution with and without them; the caption gives the task's loss and
// accuracy both ways. Zero or mean ablation is chosen above the plot.
class AblationView : public ResultPlotView<HeadAblationAnalysis>
{
    Q_OBJECT

public:
    explicit AblationView(QWidget *parent = nullptr);

protected:
    QString draw(const HeadAblationAnalysis &result) override;
    QString pendingText() const override;
    QString progressFormat() const override;
    bool keepsResultWhilePending() const override { return true; }
    // A head clicked in the table keeps the table on screen while the model runs without it.
    std::vector<std::string> editedInPlace() const override { return {views::ablation::kAblateHeads.name}; }

private:
    void drawImportance(const struct HeadAblationAnalysis &a);
    void drawNextToken(const struct HeadAblationAnalysis &a);
    void toggleHeadAt(QMouseEvent *event);

    QComboBox *m_mode;
    QCPAxisRect *m_grid = nullptr; // the importance table of the last draw
};

} // namespace atlas

namespace atlas::views::ablation {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::ablation
