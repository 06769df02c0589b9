#include "views/plottitle.h"

#include <algorithm>

namespace atlas {

namespace {

constexpr int kWrapFlags = Qt::AlignCenter | Qt::TextWordWrap;

} // namespace

int PlotTitle::availableWidth() const
{
    const int width = mParentPlot ? mParentPlot->viewport().width() : 0;
    return std::max(40, width - mMargins.left() - mMargins.right());
}

QSize PlotTitle::wrappedSize() const
{
    return QFontMetrics(mFont).boundingRect(QRect(0, 0, availableWidth(), 1 << 20), kWrapFlags, mText).size();
}

QSize PlotTitle::minimumOuterSizeHint() const
{
    const QSize text = wrappedSize();
    return {text.width() + mMargins.left() + mMargins.right(), text.height() + mMargins.top() + mMargins.bottom()};
}

QSize PlotTitle::maximumOuterSizeHint() const
{
    return {QWIDGETSIZE_MAX, minimumOuterSizeHint().height()};
}

void PlotTitle::draw(QCPPainter *painter)
{
    painter->setFont(mainFont());
    painter->setPen(QPen(mainTextColor()));
    painter->drawText(mRect, mTextFlags | Qt::TextWordWrap, mText, &mTextBoundingRect);
}

} // namespace atlas
