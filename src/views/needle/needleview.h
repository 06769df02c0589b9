#pragma once

#include "views/analysisplotview.h"

#include "needle/needle.h"

class QComboBox;
class QSpinBox;

namespace atlas {

// Needle in a haystack (view kind "needle"; needle/haystack.h): a sentence put at every depth of a long document and
// a question after it. Left: the answer's probability (and its first token's) against the needle's depth, a filled
// marker where greedy decoding gives the answer. Right: each layer's share of the question's attention on the
// needle, a column per depth. With several context lengths (Kamradt's grid) the left panel is a map of P(answer) by
// length and depth instead, and the right one is the longest context's. The numbers are NeedleAnalysis's.
class NeedleView : public ResultPlotView<NeedleAnalysis>
{
    Q_OBJECT

public:
    explicit NeedleView(QWidget *parent = nullptr);

protected:
    QString draw(const NeedleAnalysis &analysis) override;
    QString pendingText() const override;
    QString progressFormat() const override;

private:
    void syncControls(int tokens);
    void drawProbabilities(const NeedleResult &r);
    void drawGrid(const std::vector<NeedleResult> &runs);
    void drawAttention(const NeedleResult &r, int column);
    QString gridText(const std::vector<NeedleResult> &runs) const;

    QSpinBox *m_tokens;
    QSpinBox *m_depths;
    QSpinBox *m_lengths;
    QComboBox *m_haystack;
};

} // namespace atlas

namespace atlas::views::needle {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::needle
