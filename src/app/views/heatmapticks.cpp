#include "views/heatmapticks.h"

#include <qcustomplot.h>

#include <algorithm>

namespace atlas {

namespace {

constexpr int kMaxMeasuredLabels = 4096; // longer inputs are always labelled in steps
constexpr int kLabelChars = 12; // longer token labels are cut with an ellipsis

QString shortLabel(const QString &label)
{
    return label.size() <= kLabelChars ? label : label.left(kLabelChars - 1) + QChar(0x2026);
}

// The smallest of 1, 2, 5, 10, 20, 50, … that leaves at most maxLabels labels on `count` positions.
int labelStep(int count, int maxLabels)
{
    maxLabels = std::max(2, maxLabels);
    for (int scale = 1;; scale *= 10)
        for (int m : {1, 2, 5})
            if ((count + m * scale - 1) / (m * scale) <= maxLabels)
                return m * scale;
}

} // namespace

void setTokenTicks(
    QCPAxis *axis, const QStringList &labels, int count, int pixels, bool horizontal, bool indexInLabels, int first)
{
    const QFontMetrics fm(axis->tickLabelFont());
    int widest = 0; // widest token label: short ones fit side by side even where turned ones would not
    // Measuring stops once they cannot: widest only grows. At thousands of tokens that is after the first label.
    const auto tooWide = [&] { return count * std::min(fm.height(), widest + 4) > pixels; };
    for (int i = first;
         horizontal && i < std::min<int>(first + count, labels.size()) && count <= kMaxMeasuredLabels && !tooWide();
         ++i)
        widest = std::max(widest, fm.horizontalAdvance(shortLabel(labels.at(i))));
    const int perLabel = horizontal ? std::min(fm.height(), widest + 4) : fm.height();
    int step = count * perLabel <= pixels && count <= kMaxMeasuredLabels
        ? 1
        : labelStep(count, pixels * 2 / (3 * fm.height()));
    QVector<double> ticks;
    QVector<QString> texts;
    for (int i = (first + step - 1) / step * step; i < first + count; i += step) { // multiples of the step
        const QString number = QStringLiteral("#%1").arg(i);
        const QString token = i < labels.size() ? shortLabel(labels.at(i)) : QString();
        ticks.append(i);
        // Rows have room for their index beside the token, so a lesson's "row 9" can be found at once; columns
        // name it only where they skip some.
        const bool numbered = indexInLabels && (step > 1 || !horizontal);
        if (token.isEmpty() || token == number)
            texts.append(number);
        else
            texts.append(numbered ? number + QLatin1Char(' ') + token : token);
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    ticker->setTicks(ticks, texts);
    axis->setTicker(ticker);
    if (horizontal) {
        for (const QString &t : texts)
            widest = std::max(widest, fm.horizontalAdvance(t));
        axis->setTickLabelRotation(widest + 4 > pixels / std::max<qsizetype>(1, texts.size()) ? 90 : 0);
    }
}

bool HeatmapTicks::setLabels(const QStringList &rowLabels, const QStringList &colLabels)
{
    if (rowLabels == m_rowLabels && colLabels == m_colLabels)
        return false;
    m_rowLabels = rowLabels;
    m_colLabels = colLabels;
    invalidate();
    return true;
}

bool HeatmapTicks::setIndexInLabels(bool on)
{
    if (on == m_indexInLabels)
        return false;
    m_indexInLabels = on;
    invalidate();
    return true;
}

bool HeatmapTicks::update(QCPAxis *x, QCPAxis *y, QSize room, int rows, int cols, const CellWindow &w)
{
    const QString key = QStringLiteral("%1x%2 %3x%4 %5 %6+%7 %8+%9")
                            .arg(rows)
                            .arg(cols)
                            .arg(room.width() / 8)
                            .arg(room.height() / 8)
                            .arg(x->tickLabelFont().pointSizeF())
                            .arg(w.row0)
                            .arg(w.rows)
                            .arg(w.col0)
                            .arg(w.cols);
    if (key == m_key)
        return false;
    m_key = key;
    setTokenTicks(x, m_colLabels, w.cols, room.width(), true, m_indexInLabels, w.col0);
    setTokenTicks(y, m_rowLabels, w.rows, room.height(), false, m_indexInLabels, w.row0);
    return true;
}

} // namespace atlas
