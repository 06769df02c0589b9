#include "features/featuresview.h"

#include "viewmodel/viewinput.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

// The Features view's dashboard: one feature's page over the corpus (FeatureDashboard).
namespace atlas {

namespace {

// A corpus token as the examples show it: a space as itself, so that a line reads as text.
QString exampleText(const ViewInput &input, int id)
{
    QString text = vocabularyLabel(input, id);
    text.replace(QChar(0x2423), QLatin1Char(' '));
    return text;
}

// `color` at `weight` (0 … 1) over the theme's background, opaque: text on it is judged by what is painted.
QColor shade(const QColor &color, double weight, const QColor &background)
{
    const double w = std::clamp(weight, 0.0, 1.0);
    return QColor::fromRgbF(float(w * color.redF() + (1 - w) * background.redF()),
        float(w * color.greenF() + (1 - w) * background.greenF()),
        float(w * color.blueF() + (1 - w) * background.blueF()));
}

void hideAxes(QCPAxisRect *rect)
{
    for (QCPAxis *axis : rect->axes()) {
        axis->setTicks(false);
        axis->setTickLabels(false);
        axis->grid()->setVisible(false);
        axis->setBasePen(Qt::NoPen);
    }
}

} // namespace

QString FeaturesView::drawDashboard(const FeaturesAnalysis &a)
{
    const FeatureDashboard &d = a.dashboard;
    m_drawnPage = d;
    m_drawnFeature = a.feature;
    setTitle(tr("Feature #%1 \u00B7 %2 \u00B7 %3")
                 .arg(a.feature)
                 .arg(m_input.model ? QString::fromStdString(m_input.model->name) : QString(),
                     QString::fromStdString(a.dictionary)));
    drawExamples(d);
    drawHistogram(d);
    drawLogitEffects(d);
    drawNearest(d);
    if (auto *grid = qobject_cast<QCPLayoutGrid *>(m_examples->layout())) {
        grid->setColumnStretchFactor(0, 1.8);
        grid->setColumnStretchFactor(1, 1.0);
        grid->setRowStretchFactor(bodyRow(0), 1.5);
    }
    QString text
        = tr("Feature #%1 (%2) over the first %3 tokens of %4, read in runs of %5 tokens: "
             "active on %6 of them (%7 %). The pass, every feature at once, took %8 s (%9).")
              .arg(a.feature)
              .arg(a.featureChosen ? tr("chosen") : tr("the strongest at token %1 of the input").arg(a.position))
              .arg(QLocale().toString(qlonglong(d.corpusTokens)))
              .arg(QString::fromStdString(d.corpusName))
              .arg(d.window)
              .arg(QLocale().toString(qlonglong(d.active)))
              .arg(formatNumber(100 * d.density(), 3))
              .arg(formatNumber(d.passSeconds, 3))
              .arg(QString::fromStdString(d.origin));
    if (!d.cacheProblem.empty())
        text += tr(" It could not be kept on disk: %1.").arg(QString::fromStdString(d.cacheProblem));
    text += tr(" Each example's shade is the feature's activation on that token (blank: outside the example's run). "
               "The logit effects are its decoder row through the final norm's \u03B3 and the unembedding, the direct "
               "path only, up to the norm's positive 1/\u03C3. Click a nearest feature to open its page.");
    return text;
}

void FeaturesView::drawExamples(const FeatureDashboard &d)
{
    m_examples = addAxisRect(0, 0);
    hideAxes(m_examples);
    QCPAxis *x = m_examples->axis(QCPAxis::atBottom), *y = m_examples->axis(QCPAxis::atLeft);
    // As many examples as the panel's share of the height holds at one line each (all of them before a size is known).
    const QFont font = sizedFont(this->font(), 10);
    const int line = QFontMetrics(font).height() + 2;
    const int height = std::max(plot()->height(), this->height());
    const int fit = height > 0 ? std::max(5, (height - 6 * line) * 3 / 5 / line - 2) : int(d.examples.size());
    const int rows = std::max(1, std::min(int(d.examples.size()), fit));
    y->setRangeReversed(true);
    y->setRange(-0.6, rows - 0.4);
    x->setRange(0, 1);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    y->setTicker(ticks);
    y->setTicks(true);
    y->setTickLength(0, 0);
    y->setSubTickLength(0, 0);
    y->setTickLabels(true);
    const ThemeColors theme = themeColors(m_spec.theme);
    const double top = d.examples.empty() ? 1.0 : std::max(1e-9, double(d.examples.front().activation));
    for (int r = 0; r < std::min(rows, int(d.examples.size())); ++r) {
        const FeatureDashboard::Example &e = d.examples[size_t(r)];
        ticks->addTick(r, formatNumber(e.activation, 3));
        std::vector<QCPItemText *> items(e.tokens.size());
        for (size_t i = 0; i < e.tokens.size(); ++i) {
            auto *item = new QCPItemText(plot());
            item->setClipAxisRect(m_examples);
            item->setClipToAxisRect(true);
            item->setFont(font);
            item->setText(exampleText(m_input, e.tokens[i]));
            item->setPadding(QMargins(0, 1, 0, 1));
            const float v = e.values[i];
            const QColor fill
                = std::isnan(v) ? theme.background : shade(palette::tableauOrange, v / top, theme.background);
            item->setBrush(fill);
            item->setPen(int(i) == e.centre ? QPen(theme.text, 1) : QPen(Qt::NoPen));
            item->setColor(std::isnan(v) ? theme.muted : palette::inkOn(fill));
            items[i] = item;
            m_exampleTokens.push_back({item, {r, int(i)}});
        }
        // The example's token at a fixed place, the others laid out from it by their widths (as QCPItemText measures
        // its rectangle): the line reads as text in any font. (Chaining each to the next one's anchor costs time
        // exponential in the line's length: an anchor asks its parent twice.)
        const QFontMetrics metrics(font);
        const auto widthOf = [&](size_t i) {
            return double(
                metrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip | Qt::AlignTop | Qt::AlignHCenter, items[i]->text())
                    .width());
        };
        QCPItemText *centre = items[size_t(e.centre)];
        centre->setPositionAlignment(Qt::AlignHCenter | Qt::AlignVCenter);
        centre->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
        centre->position->setTypeY(QCPItemPosition::ptPlotCoords);
        centre->position->setAxisRect(m_examples);
        centre->position->setAxes(x, y);
        centre->position->setCoords(0.62, r);
        const double half = widthOf(size_t(e.centre)) / 2;
        double right = half, left = -half;
        for (size_t i = size_t(e.centre) + 1; i < items.size(); ++i) {
            items[i]->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
            items[i]->position->setParentAnchor(centre->position);
            items[i]->position->setCoords(right, 0);
            right += widthOf(i);
        }
        for (int i = e.centre - 1; i >= 0; --i) {
            items[size_t(i)]->setPositionAlignment(Qt::AlignRight | Qt::AlignVCenter);
            items[size_t(i)]->position->setParentAnchor(centre->position);
            items[size_t(i)]->position->setCoords(left, 0);
            left -= widthOf(size_t(i));
        }
    }
    setPanelTitle(m_examples,
        d.examples.empty() ? tr("Never active on the corpus")
                           : tr("The %1 strongest examples (activation at left)").arg(rows));
}

void FeaturesView::drawHistogram(const FeatureDashboard &d)
{
    m_histogram = addAxisRect(0, 1);
    QCPAxis *x = m_histogram->axis(QCPAxis::atBottom), *y = m_histogram->axis(QCPAxis::atLeft);
    int first = -1, last = -1;
    for (int b = 0; b < int(d.histogram.size()); ++b)
        if (d.histogram[size_t(b)] > 0) {
            first = first < 0 ? b : first;
            last = b;
        }
    x->setScaleType(QCPAxis::stLogarithmic);
    x->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    x->setLabel(tr("activation (log scale)"));
    y->setLabel(tr("tokens"));
    setPanelTitle(m_histogram, tr("Active on %1 % of the tokens").arg(formatNumber(100 * d.density(), 3)));
    if (first < 0) {
        x->setRange(0.01, 10);
        y->setRange(0, 1);
        return;
    }
    auto *graph = new QCPGraph(x, y);
    graph->setLineStyle(QCPGraph::lsStepLeft);
    double most = 1;
    for (int b = std::max(0, first - 1); b <= std::min(last + 1, int(d.histogram.size()) - 1); ++b) {
        graph->addData(FeatureCorpusStats::binLow(b), d.histogram[size_t(b)]);
        most = std::max(most, double(d.histogram[size_t(b)]));
    }
    graph->addData(FeatureCorpusStats::binLow(std::min(last + 2, int(d.histogram.size()))), 0);
    graph->setPen(QPen(palette::tableauOrange.darker(120), 1.5));
    graph->setBrush(
        QColor(palette::tableauOrange.red(), palette::tableauOrange.green(), palette::tableauOrange.blue(), 150));
    x->setRange(FeatureCorpusStats::binLow(std::max(0, first - 1)),
        FeatureCorpusStats::binLow(std::min(last + 2, int(d.histogram.size()))));
    y->setRange(0, most * 1.1);
}

void FeaturesView::drawLogitEffects(const FeatureDashboard &d)
{
    m_logits = addAxisRect(1, 0);
    QCPAxis *x = m_logits->axis(QCPAxis::atBottom), *y = m_logits->axis(QCPAxis::atLeft);
    auto *raised = new QCPBars(y, x), *lowered = new QCPBars(y, x);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    const size_t n = d.logits.raised.size();
    double extent = 1e-9;
    for (size_t i = 0; i < n; ++i) {
        const auto [up, upValue] = d.logits.raised[i];
        const auto [down, downValue] = d.logits.lowered[i];
        raised->addData(double(i), upValue);
        lowered->addData(double(n + 1 + i), downValue);
        ticks->addTick(double(i), QStringLiteral("'%1'").arg(vocabularyLabel(m_input, up)));
        ticks->addTick(double(n + 1 + i), QStringLiteral("'%1'").arg(vocabularyLabel(m_input, down)));
        extent = std::max({extent, std::abs(double(upValue)), std::abs(double(downValue))});
    }
    for (auto [b, color] : {std::pair {raised, palette::tableauGreen}, std::pair {lowered, palette::tableauRed}}) {
        b->setWidth(0.75);
        b->setPen(Qt::NoPen);
        b->setBrush(color);
    }
    y->setTicker(ticks);
    y->setRangeReversed(true);
    y->setRange(-0.6, double(2 * n) + 0.4);
    y->grid()->setVisible(false);
    y->setTickLabelFont(sizedFont(font(), 9));
    x->setRange(-extent * 1.1, extent * 1.1);
    x->setLabel(tr("direct logit effect"));
    addReferenceLine(m_logits, Qt::Vertical, 0, QPen(themeColors(m_spec.theme).axis, 1));
    setPanelTitle(m_logits, tr("The tokens it raises (above) and lowers"));
}

void FeaturesView::drawNearest(const FeatureDashboard &d)
{
    m_nearest = addAxisRect(1, 1);
    QCPAxis *x = m_nearest->axis(QCPAxis::atBottom), *y = m_nearest->axis(QCPAxis::atLeft);
    auto *bars = new QCPBars(y, x);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    double low = 0;
    for (size_t i = 0; i < d.nearest.size(); ++i) {
        bars->addData(double(i), d.nearest[i].second);
        ticks->addTick(double(i), QStringLiteral("#%1").arg(d.nearest[i].first));
        low = std::min(low, double(d.nearest[i].second));
    }
    bars->setWidth(0.7);
    bars->setPen(Qt::NoPen);
    bars->setBrush(palette::tableauBlue);
    y->setTicker(ticks);
    y->setRangeReversed(true);
    y->setRange(-0.6, std::max<double>(1, double(d.nearest.size())) - 0.4);
    y->grid()->setVisible(false);
    x->setRange(low, 1);
    x->setLabel(tr("decoder cosine (click a feature: its page)"));
    setPanelTitle(m_nearest, tr("The nearest features"));
}

int FeaturesView::nearestAt(const QPoint &pos) const
{
    if (!m_drawnDashboard || !m_nearest || !m_nearest->rect().contains(pos))
        return -1;
    const int i = int(std::lround(m_nearest->axis(QCPAxis::atLeft)->pixelToCoord(pos.y())));
    return i >= 0 && i < int(m_drawnPage.nearest.size()) ? m_drawnPage.nearest[size_t(i)].first : -1;
}

QString FeaturesView::dashboardTipAt(const QPoint &pos) const
{
    if (const int f = nearestAt(pos); f >= 0) {
        const auto it = std::find_if(
            m_drawnPage.nearest.begin(), m_drawnPage.nearest.end(), [f](const auto &n) { return n.first == f; });
        return tr("Feature #%1: its decoder row's cosine with #%2's is %3 (click to open its page)")
            .arg(f)
            .arg(m_drawnFeature)
            .arg(formatNumber(it->second, 3));
    }
    if (m_logits && m_logits->rect().contains(pos)) {
        const int i = int(std::lround(m_logits->axis(QCPAxis::atLeft)->pixelToCoord(pos.y())));
        const int n = int(m_drawnPage.logits.raised.size());
        const auto *entry = i >= 0 && i < n ? &m_drawnPage.logits.raised[size_t(i)]
            : i > n && i <= 2 * n           ? &m_drawnPage.logits.lowered[size_t(i - n - 1)]
                                            : nullptr;
        if (entry)
            return tr("Token '%1' (#%2): feature #%3's decoder row adds %4 to its logit through the direct path")
                .arg(vocabularyLabel(m_input, entry->first))
                .arg(entry->first)
                .arg(m_drawnFeature)
                .arg(formatNumber(entry->second, 3));
    }
    if (m_histogram && m_histogram->rect().contains(pos)) {
        const double v = m_histogram->axis(QCPAxis::atBottom)->pixelToCoord(pos.x());
        if (v > 0) {
            const int b = FeatureCorpusStats::binOf(float(v));
            if (b < int(m_drawnPage.histogram.size()))
                return tr("%1 tokens with an activation from %2 to %3")
                    .arg(QLocale().toString(qlonglong(m_drawnPage.histogram[size_t(b)])))
                    .arg(formatNumber(FeatureCorpusStats::binLow(b), 3),
                        formatNumber(FeatureCorpusStats::binLow(b + 1), 3));
        }
    }
    for (const auto &[drawn, where] : m_exampleTokens) {
        const QCPItemText *text = drawn;
        if (!m_examples->rect().contains(pos)
            || !QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition()).contains(pos))
            continue;
        const FeatureDashboard::Example &e = m_drawnPage.examples[size_t(where.first)];
        const int i = where.second;
        const float v = e.values[size_t(i)];
        return tr("Corpus token %1 '%2': feature #%3 = %4%5")
            .arg(QLocale().toString(qlonglong(e.at - e.centre + i)))
            .arg(vocabularyLabel(m_input, e.tokens[size_t(i)]))
            .arg(m_drawnFeature)
            .arg(std::isnan(v) ? tr("not in this example's run") : formatNumber(v, 4))
            .arg(i == e.centre ? tr(" (example %1)").arg(where.first + 1) : QString());
    }
    return {};
}

} // namespace atlas
