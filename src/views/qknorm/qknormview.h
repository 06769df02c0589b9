#pragma once

#include "views/analysisplotview.h"

#include "qknorm/qknorm.h"

class QMouseEvent;

namespace atlas {

struct QkNormEffect;

// QK-norm (view kind "qk-norm"; Qwen3, OLMo 2): for the spec's layer, left, the chosen head's ‖q_i‖ and ‖k_j‖ at
// every position before the norm (dashed) and as they meet in the scores (solid), with the longest the norm's γ lets
// them be; right, every head's scores from lowest to highest against the bound this input allows (‖q‖‖k‖·scale, by
// Cauchy–Schwarz) and, with QK-norm, the bound its weights allow whatever the input. A model without QK-norm draws
// the same panels with no weights' bound: side by side ("compare") they show what the norm holds in. Click a head
// on the right to choose it. The numbers are QkNormAnalysis's (qknorm/qknorm.h).
class QkNormView : public ResultPlotView<QkNormAnalysis>
{
    Q_OBJECT

public:
    explicit QkNormView(QWidget *parent = nullptr);

protected:
    QString draw(const QkNormAnalysis &result) override;
    QString pendingText() const override;
    bool keepsResultWhilePending() const override { return true; }

private:
    void drawLengths(const QkNormEffect &e, int head);
    void drawScores(const QkNormEffect &e, int head);
    void chooseHeadAt(QMouseEvent *event);

    QCPAxisRect *m_scores = nullptr;
    int m_heads = 0;
};

} // namespace atlas

namespace atlas::views::qknorm {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::qknorm
