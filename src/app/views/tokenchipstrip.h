#pragma once

#include <QColor>
#include <QStringList>
#include <QWidget>

#include <vector>

namespace atlas {

// The input's tokens as chips: the readable piece on top and, below it, the token id (when ids are given) or the
// position. Padding chips are hatched, highlighted chips (a pattern's global tokens) filled; a click emits
// chipClicked(position) when the strip is clickable, and the tooltip says what a click does.
//  - Wrap: chips flow onto as many lines as the width needs (the Input panel); at most kMaxWrapped are shown.
//  - Row: one line for a horizontal scroll area (the Pattern view), labels shortened to kRowLabelChars; chips are
//    laid out once per setTokens and only the exposed ones painted, so 16384 tokens cost no more than 40.
class TokenChipStrip : public QWidget
{
    Q_OBJECT

public:
    enum class Layout { Wrap, Row };
    static constexpr int kMaxWrapped = 512;
    static constexpr int kRowLabelChars = 8;

    // What one chip says beyond its token (the Objectives view: what the token became): a fill (invalid: the
    // default), the second line (empty: the id or position) and a line of its tooltip.
    struct ChipMark
    {
        QColor fill;
        QString secondLine;
        QString note;
    };

    explicit TokenChipStrip(Layout layout, QWidget *parent = nullptr);

    // `ids` may be empty: the chips then show positions.
    void setTokens(const QStringList &labels, const std::vector<int> &ids, const std::vector<int> &padding);
    void setHighlighted(const std::vector<int> &positions); // sorted or not
    void setMarks(std::vector<ChipMark> marks); // one per token, or none; call after setTokens
    const std::vector<ChipMark> &marks() const { return m_marks; }
    // Whether a click does anything, and the tooltip line that says what it does (or why it does not).
    void setClickHint(bool clickable, const QString &hint);
    bool isClickable() const { return m_clickable; } // a strip that is not is part of the figure, not a control
    QRect chipRect(int position) const; // empty for a chip not laid out
    int chipAt(const QPoint &pos) const; // −1 between or outside chips
    bool isHighlighted(int position) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return m_layout == Layout::Wrap; }
    int heightForWidth(int width) const override;

signals:
    void chipClicked(int position);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    bool event(QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    int chipHeight() const;
    QString chipText(int position) const;
    QString secondLine(int position) const;
    std::vector<QRect> layoutChips(int width) const;
    void measureChips();
    void relayout();

    Layout m_layout;
    QStringList m_labels;
    std::vector<int> m_ids;
    std::vector<unsigned char> m_padding, m_highlighted; // (T)
    std::vector<ChipMark> m_marks; // (T) or empty
    std::vector<QRect> m_rects; // the chips laid out at the current width
    // Each shown chip's width, measured once per labels, marks and font: layouts ask heightForWidth many times, and
    // measuring 512 chips' two lines each time made a tab of three strips stall the window for over 100 ms.
    std::vector<int> m_widths;
    mutable std::pair<int, int> m_lastHeight {-1, 0}; // heightForWidth's last width and answer
    bool m_clickable = true;
    QString m_hint;
};

} // namespace atlas
