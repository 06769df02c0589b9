#pragma once

#include "attention/attentionpattern.h"
#include "views/view.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QScrollArea;
class QSlider;
class QSpinBox;

namespace atlas {

class HeatmapPlot;
class TokenChipStrip;

// The pattern editor (view kind "pattern"): a fixed sparse kernel (bigbird, longformer, strided, fixed) over the
// real input, with a slider per parameter, the input's tokens as chips (a click makes a token global for
// Longformer), the T×T pattern as a heat map (exact up to PatternAnalysis::kExactCells tokens, above that the share of
// allowed pairs in each of kGridCells² blocks), and a readout of the density, the work against full attention and the
// pattern's formula. The pattern comes from attention::attentionPattern (the kernel's own blocks, never T×T).
//
// Every edit writes the spec's "attention" and "attention_params" and emits specEdited: the session reruns the
// model with the pattern and computes the pattern (PatternAnalysis, pattern/pattern.h) off the GUI thread; the
// view keeps the previous pattern on screen, saying "computing…", until the new one arrives.
class PatternEditorView : public View
{
    Q_OBJECT

public:
    explicit PatternEditorView(QWidget *parent = nullptr);
    std::vector<QWidget *> interfaceWidgets() const override; // the parameters and the clickable token strip

    static const std::vector<std::string> &kinds(); // bigbird, longformer, strided, fixed

    attention::AttentionKernelSpec editedSpec() const; // the kernel on screen
    std::vector<std::string> editedParams() const; // its parameters as "key=value", as the spec gets them
    std::shared_ptr<const attention::PatternSummary> summary() const { return m_summary; }
    // The pattern on screen is not yet the one edited: the session is computing it.
    bool computing() const;
    int headWidth() const { return m_dHead; }
    QString readoutText() const;
    QString message() const { return m_message; }
    QSlider *slider(const std::string &key) const;
    QSpinBox *spinBox(const std::string &key) const;
    QComboBox *kindBox() const { return m_kind; }
    QLineEdit *globalEdit() const { return m_globalEdit; }
    TokenChipStrip *tokenStrip() const { return m_strip; }
    HeatmapPlot *plot() const { return m_plot; }

    // As a click on token `position`'s chip: toggles it global (Longformer only).
    void toggleGlobal(int position);

protected:
    void refresh() override;

private:
    struct Param
    {
        QLabel *label;
        QSlider *slider;
        QSpinBox *spin;
    };
    QWidget *buildControls();
    void addParam(const std::string &key, const QString &label, const QString &tip);
    int length() const { return int(m_input.tokens.size()); }
    void adoptSpec();
    void setEdited(const attention::AttentionKernelSpec &spec);
    int ownWindow() const; // the model's sliding window in the spec's layer (W), 0 when that layer sees every key
    void syncControls();
    void paramEdited(const std::string &key, int value);
    void kindChosen(int index);
    void globalsTyped();
    void userEdited();
    void adoptAnalysis();
    void showSummary();
    void showProblem(const QString &problem);
    void updateReadout();
    QString hoverText(int row, int col) const;

    QComboBox *m_kind = nullptr;
    std::map<std::string, Param> m_params;
    QWidget *m_globalRow = nullptr;
    QLineEdit *m_globalEdit = nullptr;
    QLabel *m_readout = nullptr;
    QScrollArea *m_stripArea = nullptr;
    QScrollArea *m_controls = nullptr; // the parameters, scrolling when the view is short
    TokenChipStrip *m_strip = nullptr;
    HeatmapPlot *m_plot = nullptr;

    std::string m_editedKind = "longformer";
    std::map<std::string, int> m_values; // the kind's integer parameters
    std::vector<int> m_globals; // Longformer's global positions, sorted
    bool m_fromSpec = false; // the parameters came from the spec (else suggested for the length)
    int m_suggestedFor = -1; // the length the suggestion was made for
    int m_suggestedWindow = 0; // the layer's own window it showed, 0 for none
    int m_dHead = 64;
    QString m_message; // a problem shown instead of the pattern

    std::shared_ptr<const attention::PatternSummary> m_summary; // drawn: the session's, or the previous one
};

} // namespace atlas

namespace atlas::views::pattern {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::pattern
