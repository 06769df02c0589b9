#pragma once

#include "views/analysisplotview.h"

#include "adaptivespan/adaptivespan.h"

class QCPAxisRect;
class QMouseEvent;

namespace atlas {

struct AdaptiveSpans;

// Adaptive attention span (view kind "adaptive-span"; Sukhbaatar et al. 2019). On the left, every head's learned span
// on a log scale, layer by layer, with how far back its weight lies on this input; on the right, the chosen head's
// attention with the edges of its soft mask: full weight within z of the query, a ramp R wide, exactly 0 beyond. A
// click on a head's bar chooses it. The spans are AdaptiveSpanAnalysis's (adaptivespan/adaptivespan.h), the weights the
// trace's.
class AdaptiveSpanView : public ResultPlotView<AdaptiveSpanAnalysis>
{
    Q_OBJECT

public:
    explicit AdaptiveSpanView(QWidget *parent = nullptr);

protected:
    QString draw(const AdaptiveSpanAnalysis &result) override;
    QString pendingText() const override;
    bool keepsResultWhilePending() const override { return true; }

private:
    void drawSpans(const AdaptiveSpans &s, int layer, int head);
    void drawHead(const AdaptiveSpans &s, int layer, int head);
    void chooseHeadAt(QMouseEvent *event);

    QCPAxisRect *m_spans = nullptr;
    int m_headsPerLayer = 0;
};

} // namespace atlas

namespace atlas::views::adaptivespan {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::adaptivespan
