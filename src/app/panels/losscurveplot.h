#pragma once

#include <qcustomplot.h>

#include <string>

namespace atlas {

// The Train panel's loss curve: every training step (thin) and the held-out evaluations (thick, with dots) on
// a log loss axis whose ticks are chosen for the plot's height. The step axis grows with the run in jumps of
// a quarter, so the curve does not creep.
class LossCurvePlot : public QCustomPlot
{
    Q_OBJECT

public:
    explicit LossCurvePlot(QWidget *parent = nullptr);

    // Empties both curves for a run of `totalSteps` that starts after `firstStep` (a resumed checkpoint).
    void reset(int firstStep, int totalSteps);
    void addSteps(const QVector<double> &steps, const QVector<double> &losses);
    void addHeldOut(int step, double loss);
    // Widens the axes to what has been added and replots (queued).
    void rescale(int lastStep);
    void applyTheme(const std::string &theme);

protected:
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override; // the app's zoom: fonts follow

private:
    void include(double loss);
    void rescaleLossAxis();

    int m_totalSteps = 100;
    double m_lossMin = 0; // over both curves, for the log axis
    double m_lossMax = 0;
    int m_tickedPixels = 0; // the loss axis height its ticks were chosen for
    std::string m_theme = "light";
};

} // namespace atlas
