#pragma once

#include "views/fillcards.h"
#include "views/view.h"

#include <memory>

class QLabel;
class QPushButton;
class QScrollArea;

namespace atlas {

struct FillsAnalysis;

// What a masked language model names at each hidden position (view kind "fills"): the [MASK]s typed into the input,
// or, with spec "objective": "mlm", the positions BERT's corruption chose from spec "seed" ([MASK], a random token, or
// left). One card per position: the text around it, the model's first choices (spec top_k, at most 5) and where the
// original stands. FillsAnalysis (fills/fills.h) reruns the model; the view draws it.
class FillsView : public View
{
    Q_OBJECT

public:
    explicit FillsView(QWidget *parent = nullptr);

    QString message() const; // drawn instead of the cards; empty when they are drawn
    QString formula() const;
    FillCards *cards() const { return m_cards; }
    QPushButton *modeButton() const { return m_mode; }
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }
    QSize sizeHint() const override { return {1000, 650}; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text);
    void setContext(FillCards::Card &card, const std::vector<int> &read, int position) const;

    QWidget *m_controls = nullptr;
    QPushButton *m_mode = nullptr;
    QLabel *m_formula = nullptr, *m_message = nullptr;
    QScrollArea *m_scroll = nullptr;
    FillCards *m_cards = nullptr;
    std::shared_ptr<const FillsAnalysis> m_drawn;
};

} // namespace atlas

namespace atlas::views::fills {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::fills
