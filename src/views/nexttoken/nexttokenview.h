#pragma once

#include "views/view.h"

#include <vector>

class QCPBars;
class QCPTextElement;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QSlider;
class QSpinBox;
class QMouseEvent;
class QStackedLayout;

namespace atlas {

// Horizontal bars of the spec.topK most probable next tokens at spec.position (-1 = the last token), read
// from the trace's `next_probs` [T, V] (or, on a run kept on demand, computed for that position: engine/outputhead.h)
// and taken to its temperature (the spec key temperature, engine/temperature.h);
// the most probable on top. With top_p below 1 the bars are what nucleus sampling draws from: the tokens kept,
// renormalised, and the ones cut greyed at their probability before the cut. A position box, a temperature slider
// and a top-p box edit the spec.
class NextTokenView : public View
{
    Q_OBJECT

public:
    struct Bar
    {
        int id = 0;
        QString label; // input.vocabLabel(id), e.g. "' the' (#262)"
        double probability = 0.0; // what sampling draws it with; for a cut token, its probability before the cut
        bool cut = false; // outside top-p's nucleus: never sampled
    };

    explicit NextTokenView(QWidget *parent = nullptr);
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }

    const std::vector<Bar> &bars() const { return m_bars; } // most probable first; empty with a message
    QString title() const { return m_title; }
    QString message() const; // the centred message shown instead of the chart, or empty
    int position() const { return m_position; } // the row of next_probs shown, -1 with a message
    QCustomPlot *plot() const { return m_plot; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text);
    QWidget *buildControls();
    void syncControls(int tokens);
    void collectBars(const Tensor &probs); // [1, V]: the probabilities at m_position
    void drawChart();
    void applyTheme();
    void showToolTip(QMouseEvent *event);

    QStackedLayout *m_stack = nullptr;
    QWidget *m_controls = nullptr; // position and temperature
    QSpinBox *m_positionBox = nullptr;
    QSlider *m_temperatureSlider = nullptr;
    QLabel *m_temperatureLabel = nullptr;
    QDoubleSpinBox *m_topPBox = nullptr;
    QLabel *m_message = nullptr;
    QCustomPlot *m_plot = nullptr;
    QCPBars *m_barsPlottable = nullptr;
    QCPBars *m_cutBarsPlottable = nullptr; // the tokens top-p cuts
    QCPTextElement *m_titleElement = nullptr;
    std::vector<Bar> m_bars;
    QString m_title;
    int m_position = -1;
};

} // namespace atlas

namespace atlas::views::nexttoken {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::nexttoken
