#pragma once

#include "attention/approximationsweep.h"
#include "views/view.h"

#include <qcustomplot.h> // QCPRange

#include <memory>
#include <vector>

class QButtonGroup;
class QLabel;
class QRadioButton;
class QSlider;

namespace atlas {

class ApproximationErrorPlot;
class HeatmapPlot;

// Linformer and Performer against exact softmax attention for one head (view kind "approximation"): the exact
// weights and the approximation's effective weights side by side on one colour scale, a kernel switch, a slider
// for k / features choosing the approximation drawn, and the error against k / features (log-log: the mean over
// kSeeds seeds with a min–max band; weights on the left axis, context on the right).
//
// The sweep (ApproximationAnalysis, approximation/approximation.h) reruns the head's Q, K, V through exact attention
// and the approximation for every size and seed; the session runs it off the GUI thread (a newer request, for another
// head, kernel or input, cancels an older one) and the view shows "computing…" until it has the result.
//
// Effective weights: Linformer's are P·E (T,T), P = softmax(Q (E K)ᵀ/√d) (T,k), E the (k,T) random projection:
// the weight of value j in query i's context, which can be negative. Linformer cannot be causal: on a causal
// model both sides are bidirectional attention on the same Q, K, V (the caption says so). Performer's are
// φ(q_i)·φ(k_j) / Σ_j' φ(q_i)·φ(k_j'), with the model's causal mask.
class ApproximationView : public View
{
    Q_OBJECT

public:
    explicit ApproximationView(QWidget *parent = nullptr);
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controlRow}; }

    // Drawn instead of the maps and the plot (no Q, K, V yet, a bad head, a sweep error); empty when they are drawn.
    QString message() const { return m_message; }
    // The sweep drawn (nullptr while none is).
    const attention::ApproximationSweep *sweep() const { return m_sweep.get(); }
    int selectedIndex() const { return m_index; }
    int selectedValue() const; // k or features drawn, 0 while nothing is
    double computeMilliseconds() const { return m_computeMs; }

    QSlider *slider() const { return m_slider; }
    QRadioButton *kernelButton(const std::string &kind) const; // the choice of kernel `kind`, nullptr for none
    HeatmapPlot *exactPlot() const { return m_exact; }
    HeatmapPlot *approximationPlot() const { return m_approx; }
    ApproximationErrorPlot *errorPlot() const { return m_plot; } // weightGraph(), contextGraph(): one point per value
    QString caption() const;
    static QString errorsDefinition(); // the error plot's tooltip
    // How the effective weights of `kernel` are defined (the caption's first part and the maps' tooltip).
    static QString definition(const std::string &kernel, bool causalModel);

    QSize sizeHint() const override { return {1400, 900}; }
    QSize minimumSizeHint() const override;

protected:
    void refresh() override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void buildControls(QLayout *layout);
    void layOutMaps();
    void applyTheme();
    void adoptAnalysis();
    void showMessage(const QString &text);
    void showSweep();
    void showSelected();
    void chooseKernel(const std::string &kernel);
    void chooseIndex(int index);
    QString hoverText(int row, int col) const;
    QString valueName() const; // "k" (Linformer) or "m" (Performer's features)
    QString kernelName() const; // "Linformer" or "Performer"

    QWidget *m_maps = nullptr; // holds the two heat maps, laid out by layOutMaps()
    HeatmapPlot *m_exact = nullptr;
    HeatmapPlot *m_approx = nullptr;
    ApproximationErrorPlot *m_plot = nullptr;
    std::vector<std::pair<std::string, QRadioButton *>> m_kernelButtons; // each kernel with a size to sweep
    QButtonGroup *m_kernels = nullptr;
    QSlider *m_slider = nullptr;
    QWidget *m_controlRow = nullptr; // the kernel switch, the slider and its readout
    QLabel *m_valueLabel = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_summary = nullptr;
    QLabel *m_caption = nullptr;

    QString m_message;
    std::shared_ptr<const attention::ApproximationSweep> m_sweep;
    std::shared_ptr<std::vector<float>> m_exactCells; // (T,T) drawn: masked cells −∞
    std::shared_ptr<std::vector<float>> m_approxCells;
    QCPRange m_range; // the colour scale of both maps: the exact weights' range
    bool m_hasRange = false;
    int m_index = -1;
    double m_computeMs = 0;
    std::shared_ptr<const ViewAnalysis> m_drawnAnalysis; // what m_sweep came from
};

} // namespace atlas

namespace atlas::views::approximation {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::approximation
