#pragma once

#include "views/analysisplotview.h"

#include "funnel/funnel.h"

#include <QPointer>

namespace atlas {

struct FunnelPicture;

// Funnel (view kind "funnel"; Funnel-Transformer, Dai et al. 2020): top, the input's tokens across and one row per
// layer, each box a token that layer still has, as wide as the input tokens it pools (the chosen layer outlined);
// bottom, the chosen layer and head's attention over its present queries and keys, labelled with the text each
// covers. The caption gives the lengths, the work left and the held-out scores (FunnelAnalysis's numbers).
class FunnelView : public ResultPlotView<FunnelAnalysis>
{
    Q_OBJECT

public:
    explicit FunnelView(QWidget *parent = nullptr);

protected:
    void resizeEvent(QResizeEvent *event) override;
    QString draw(const FunnelAnalysis &result) override;
    QString pendingText() const override;

private:
    void drawFunnel(const FunnelPicture &f);
    void drawAttention(const FunnelPicture &f);
    void labelAxes();

    QPointer<QCPAxisRect> m_funnel, m_attention; // while drawn
    QStringList m_queryLabels, m_keyLabels;
    int m_tokens = 0;
};

} // namespace atlas

namespace atlas::views::funnel {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::funnel
