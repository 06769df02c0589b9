#pragma once

#include "viewmodel/latestjob.h"
#include "views/tokenchipstrip.h"
#include "views/view.h"

#include <memory>

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace atlas {

class HeatmapPlot;
struct ObjectiveExample;

// An example and its mask's cells (null when the mask has no −∞), or why there is none.
struct ObjectiveDrawing
{
    std::shared_ptr<const ObjectiveExample> example;
    std::shared_ptr<const std::vector<float>> maskCells;
    QString problem;
};

// A pretraining objective applied to the input (view kind "objective"; spec "objective" and "seed"): GPT's next
// token, BERT's masked LM (the chosen 15 % and what each became, counted against the 80/10/10 rule), T5's span
// corruption (the spans, the sentinel-filled input, the targets), the prefix LM (the prefix/target split) and BERT's
// next-sentence prediction ([CLS] A [SEP] B [SEP] and its segments). Rows of
// chips show the text, what the model reads and what it must predict; on the right, the attention mask the objective
// implies, drawn as the Mask view draws one. The example is objectiveExample's (analysis/objectiveexample.h).
class ObjectiveView : public View
{
    Q_OBJECT

public:
    explicit ObjectiveView(QWidget *parent = nullptr);
    ~ObjectiveView() override;

    QString message() const; // drawn instead of the example; empty when it is drawn
    QString formula() const;
    QString counts() const; // the masked LM's counts table (plain text), else empty
    const ObjectiveExample *example() const { return m_example.get(); }
    TokenChipStrip *textStrip() const { return m_text; }
    TokenChipStrip *readStrip() const { return m_read; }
    TokenChipStrip *targetStrip() const { return m_targets; }
    HeatmapPlot *maskPlot() const { return m_mask; }
    QComboBox *objectiveBox() const { return m_objective; }
    QSpinBox *seedBox() const { return m_seed; }
    QPushButton *fillButton() const { return m_fill; }
    QPushButton *redrawButton() const { return m_redraw; }
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }
    QSize sizeHint() const override { return {1100, 700}; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text);
    void adopt(const ObjectiveDrawing &drawing);
    QString label(int id) const;
    QStringList labels(const std::vector<int> &ids) const;
    void drawMaskedLm();
    void drawSpans();
    void drawPrefixOrNext();
    void drawNextSentence();
    void drawMask();
    void setRow(QLabel *title, TokenChipStrip *strip, const QString &text, const std::vector<int> &ids,
        std::vector<TokenChipStrip::ChipMark> marks);
    void setChipRow(QLabel *title, TokenChipStrip *strip, const QString &text, const QStringList &chips,
        std::vector<TokenChipStrip::ChipMark> marks);
    void editSpec(const QString &objective, int seed, const QString &view = QString());

    QWidget *m_controls = nullptr;
    QComboBox *m_objective = nullptr;
    QSpinBox *m_seed = nullptr;
    QPushButton *m_redraw = nullptr, *m_fill = nullptr;
    QLabel *m_formula = nullptr, *m_message = nullptr, *m_counts = nullptr;
    QWidget *m_body = nullptr;
    QLabel *m_textTitle = nullptr, *m_readTitle = nullptr, *m_targetTitle = nullptr;
    TokenChipStrip *m_text = nullptr, *m_read = nullptr, *m_targets = nullptr;
    HeatmapPlot *m_mask = nullptr;
    std::shared_ptr<const ObjectiveExample> m_example;
    std::shared_ptr<const std::vector<float>> m_maskCells;
    // At thousands of tokens the example's T² mask takes longer than a frame: a worker makes it for a shown view.
    LatestJob<ObjectiveDrawing> m_job {[this](const ObjectiveDrawing &d) { adopt(d); }}; // last: waits in ~
};

} // namespace atlas

namespace atlas::views::objective {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::objective
