#pragma once

#include "views/analysisplotview.h"

#include "norms/norms.h"

#include <QPointer>

class QMouseEvent;

namespace atlas {

// LayerNorm against BatchNorm (view kind "norms"; Ba et al. 2016, Ioffe & Szegedy 2015): for the spec's layer, the
// block's first norm input normalised two ways, tokens down and features across, on one diverging scale: left, each
// token over its features, as the model's own norm does before its γ and β; middle, each feature over the input's
// tokens, as a BatchNorm taking them as its batch would. Right: how much each token's BatchNorm output moves when the
// tokens after it are left out of the statistics, against LayerNorm's 0. Hovering a cell gives both values. The
// numbers are NormsAnalysis's (norms/normcomparison.h).
class NormsView : public ResultPlotView<NormsAnalysis>
{
    Q_OBJECT

public:
    explicit NormsView(QWidget *parent = nullptr);

protected:
    void resizeEvent(QResizeEvent *event) override;
    QString draw(const NormsAnalysis &result) override;
    QString pendingText() const override;

private:
    QCPAxisRect *addMap(int column, const NormMatrix &values, const QString &title);
    void drawChange(const NormComparison &n);
    void labelAxes();
    void showValueAt(QMouseEvent *event);

    std::vector<QPointer<QCPAxisRect>> m_maps; // while drawn: LayerNorm's, BatchNorm's
    QPointer<QCPAxisRect> m_change;
    NormComparison m_shown; // what the tooltips read
};

} // namespace atlas

namespace atlas::views::norms {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::norms
