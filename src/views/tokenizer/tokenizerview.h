#pragma once

#include "tokenizer/tokenizer.h"
#include "views/view.h"

class QComboBox;
class QLabel;
class QScrollArea;

namespace atlas {

class TokenChipStrip;
struct TextSplit;

// How the model's tokenizer splits the input, beside another tokenizer (view kind "tokenizer",
// spec.get(views::tokenizer::kCompareTokenizer)): each split as chips (the readable piece over its id), special tokens,
// the unknown token and single bytes marked, and the counts that make tokenisation a choice: tokens, bytes per token.
// The split is TokenizerAnalysis (tokenizer/tokenizer.h).
class TokenizerView : public View
{
    Q_OBJECT

public:
    explicit TokenizerView(QWidget *parent = nullptr);

    QString message() const; // drawn instead of the splits; empty when they are drawn
    QString summary() const; // the sentence above the splits
    QString header(int row) const; // row 0: the model's tokenizer, 1: the other
    TokenChipStrip *chips(int row) const { return row == 0 ? m_ownChips : m_otherChips; }
    QComboBox *compareBox() const { return m_compare; }
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }
    QSize sizeHint() const override { return {1000, 600}; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text);
    void showSplit(const TextSplit &split, size_t bytes, QLabel *header, TokenChipStrip *chips);

    QWidget *m_controls = nullptr;
    QComboBox *m_compare = nullptr;
    QLabel *m_summary = nullptr, *m_message = nullptr, *m_legend = nullptr;
    QLabel *m_ownHeader = nullptr, *m_otherHeader = nullptr;
    TokenChipStrip *m_ownChips = nullptr, *m_otherChips = nullptr;
    QScrollArea *m_scroll = nullptr;
};

} // namespace atlas

namespace atlas::views::tokenizer {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::tokenizer
