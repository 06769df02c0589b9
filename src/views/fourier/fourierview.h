#pragma once

#include "views/analysisplotview.h"

#include "fourier/fourier.h"

#include <QPointer>

class QMouseEvent;

namespace atlas {

// Fourier mixing (view kind "fourier"; FNet, Lee-Thorp et al. 2021): for the spec's layer, left, the real part of the
// Fourier matrix over the positions, cos 2πij/T, the fixed weights FNet mixes tokens with whatever the input; middle,
// the share of each output row that each token writes when FNet mixes this block's attention input; right, the spec's
// head's attention on the same input, learned and dependent on it. Hovering a cell gives the three numbers. The numbers
// are FourierMixingAnalysis's (fourier/fouriermixing.h).
class FourierView : public ResultPlotView<FourierMixingAnalysis>
{
    Q_OBJECT

public:
    explicit FourierView(QWidget *parent = nullptr);

protected:
    void resizeEvent(QResizeEvent *event) override;
    QString draw(const FourierMixingAnalysis &result) override;
    QString pendingText() const override;

private:
    QCPAxisRect *addMap(int column, const FourierMatrix &values, double low, double high, const QString &title,
        const QString &scale, bool diverging);
    void labelAxes();
    void showValueAt(QMouseEvent *event);

    std::vector<QPointer<QCPAxisRect>> m_maps; // while drawn: the Fourier matrix, the shares, the head
    FourierMixing m_shown; // what the tooltips read
};

} // namespace atlas

namespace atlas::views::fourier {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::fourier
