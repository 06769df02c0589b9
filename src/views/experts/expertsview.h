#pragma once

#include "views/view.h"

#include <memory>

class QCustomPlot;
class QCPTextElement;
class QLabel;
class QSlider;
class QSpinBox;

namespace atlas {

struct ExpertRouting;
struct ExpertsAnalysis;

// A Switch Transformer layer's routing (view kind "experts"; Fedus et al. 2021): the router's probability of every
// expert for every token, each token marked with the expert that took it (or dropped); the experts' buffers filling
// in sequence order up to their capacity, the overflow beside them; the load per expert with the auxiliary loss;
// and expert parallelism: the tokens each device sends to the others. The capacity-factor slider (spec
// "capacity_factor") re-routes the input live, the spin box (spec "devices") spreads the experts over more devices.
//
// The numbers are ExpertsAnalysis's (view/viewanalysis.h: the core runs the model at the factor and reads the
// router back); the view draws them.
class ExpertsView : public View
{
    Q_OBJECT

public:
    explicit ExpertsView(QWidget *parent = nullptr);

    QString message() const; // drawn instead of the plots; empty when they are drawn
    QString formula() const;
    const ExpertsAnalysis *drawnAnalysis() const { return m_drawn.get(); }
    QCustomPlot *routerPlot() const { return m_router; }
    QCustomPlot *bufferPlot() const { return m_buffers; }
    QCustomPlot *loadPlot() const { return m_load; }
    QCustomPlot *devicePlot() const { return m_devices; }
    QSlider *capacitySlider() const { return m_capacity; }
    QSpinBox *devicesBox() const { return m_deviceCount; }
    QSpinBox *topKBox() const { return m_topK; }
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }
    QSize sizeHint() const override { return {1200, 800}; }

    // The slider's steps, in order of the factor: step n is n · kFactorStep (n ≥ 1). The model's own factor is where
    // the slider starts, and choosing it again goes back to "the model's own" (spec capacity_factor 0).
    static constexpr double kFactorStep = 0.25;
    static constexpr int kFactorSteps = 16;

protected:
    void refresh() override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void showMessage(const QString &text);
    void drawPlots();
    void drawRouter(const ExpertRouting &r);
    void drawBuffers(const ExpertRouting &r);
    void drawLoad(const ExpertRouting &r);
    void drawDevices(const ExpertRouting &r);
    void preparePlot(QCustomPlot *plot, QCPTextElement *title, const QString &text);
    void chooseFactor(int step);
    double shownFactor() const; // the spec's factor, or the model's own when the spec leaves it at 0
    void chooseDevices(int devices);
    void chooseTopK(int topK);
    void showControls();

    QLabel *m_formula, *m_message, *m_factorLabel;
    QWidget *m_controls, *m_plots;
    QSlider *m_capacity;
    QSpinBox *m_deviceCount, *m_topK;
    QCustomPlot *m_router, *m_buffers, *m_load, *m_devices;
    QCPTextElement *m_routerTitle, *m_buffersTitle, *m_loadTitle, *m_devicesTitle;
    std::shared_ptr<const ExpertsAnalysis> m_drawn;
};

} // namespace atlas

namespace atlas::views::experts {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::experts
