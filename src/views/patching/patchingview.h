#pragma once

#include "views/corruptioncontrols.h"
#include "views/runningrow.h"
#include "views/view.h"

#include <memory>
#include <vector>

class QComboBox;
class QLabel;
class QPushButton;

namespace atlas {

class HeatmapPlot;
struct PatchingAnalysis;

// Activation patching (view kind "patching"; analysis/activationpatching.h). The input is the clean run; the spec's
// `corrupted_text` (or noise at `noise_positions`) the corrupted one. One heat map cell per patched activation
// (`patch`: the residual stream entering each block at each position, each head's output, each feed-forward
// output), coloured by the fraction of the clean metric it restores: logit(target) − logit(contrast), or
// p(target), at `position`. The sweep runs off the GUI thread with its progress and a Cancel button.
class PatchingView : public View
{
    Q_OBJECT

public:
    explicit PatchingView(QWidget *parent = nullptr);

    HeatmapPlot *plot() const { return m_plot; }
    QString message() const; // drawn instead of the map; empty when the map is drawn
    QString caption() const;
    QPushButton *cancelButton() const { return m_running->cancelButton(); }
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls, m_running}; }
    QSize sizeHint() const override { return {1100, 650}; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text, bool running = false);

    CorruptionControls *m_controls = nullptr;
    RunningRow *m_running = nullptr; // the progress and its Cancel button, while the sweep runs
    QComboBox *m_site = nullptr;
    QLabel *m_formula = nullptr, *m_message = nullptr, *m_caption = nullptr;
    HeatmapPlot *m_plot = nullptr;
    std::shared_ptr<std::vector<float>> m_cells;
};

} // namespace atlas

namespace atlas::views::patching {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::patching
