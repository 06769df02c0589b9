#pragma once

#include "views/corruptioncontrols.h"
#include "views/runningrow.h"
#include "views/view.h"

#include <memory>
#include <vector>

class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;

namespace atlas {

class CircuitPlot;
struct CircuitScores;

// The circuit view (view kind "circuit"; analysis/circuits.h): the residual graph of the model with the edges of the
// circuit that keeps the `keep_edges` largest estimated effects on the metric (EAP or EAP-IG), the faithfulness curve
// of those circuits beside it and the slider that moves along it. The input is the clean run and the corrupted input
// (or noise) the corrupted one, as in the Patching view. A click on an edge patches it exactly (and by path patching
// through the feed-forwards); a click on a head opens it in the Attention view. The work runs off the GUI thread with
// its progress and a Cancel button.
class CircuitView : public View
{
    Q_OBJECT

public:
    explicit CircuitView(QWidget *parent = nullptr);

    CircuitPlot *graph() const { return m_graph; }
    QCustomPlot *curve() const { return m_curve; }
    QSlider *keepSlider() const { return m_keep; }
    QString message() const; // drawn instead of the graph; empty when the graph is drawn
    QString caption() const;
    QString keptText() const; // beside the slider: the edges kept and what they recover
    // The drawn graph as JSON (circuitJson): what Export JSON writes. Empty when nothing is drawn.
    std::string graphJson() const;
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls, m_options, m_running}; }
    QSize sizeHint() const override { return {1100, 700}; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text, bool running = false);
    void drawCurve(const CircuitScores &s, int stop);
    void exportJson();

    CorruptionControls *m_controls = nullptr;
    QWidget *m_options = nullptr;
    RunningRow *m_running = nullptr;
    QComboBox *m_method = nullptr;
    QSpinBox *m_steps = nullptr;
    QSlider *m_keep = nullptr;
    QLabel *m_kept = nullptr;
    QPushButton *m_export = nullptr;
    QLabel *m_formula = nullptr, *m_message = nullptr, *m_caption = nullptr;
    QWidget *m_body = nullptr;
    CircuitPlot *m_graph = nullptr;
    QCustomPlot *m_curve = nullptr;
    std::shared_ptr<const CircuitScores> m_drawn;
    int m_drawnKept = 0;
};

} // namespace atlas

namespace atlas::views::circuit {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::circuit
