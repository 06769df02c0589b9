#pragma once

#include "views/analysisplotview.h"

#include "lostinthemiddle/lostinthemiddle.h"

namespace atlas {

struct RetrievalByPosition;

// Lost in the middle (view kind "lost-in-the-middle"; Liu et al. 2023): a key–value retrieval model asked, on held-out
// contexts, for each pair in turn. Left: the value named exactly against where the asked pair stands (0 = first),
// for the spec's model and `baseline_model`. Right: where the answer position looks in the spec's layer (heads
// averaged), a row per asked pair and a column per pair attended. The numbers are LostInTheMiddleAnalysis's.
class LostInTheMiddleView : public ResultPlotView<LostInTheMiddleAnalysis>
{
    Q_OBJECT

public:
    explicit LostInTheMiddleView(QWidget *parent = nullptr);

protected:
    QString draw(const LostInTheMiddleAnalysis &result) override;
    QString pendingText() const override;

private:
    void drawAccuracy(const std::vector<RetrievalByPosition> &sweeps);
    void drawAttention(const RetrievalByPosition &sweep, int layer);
};

} // namespace atlas

namespace atlas::views::lostinthemiddle {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::lostinthemiddle
