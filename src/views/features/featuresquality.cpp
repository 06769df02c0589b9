#include "features/featuresview.h"

#include "viewmodel/viewinput.h"
#include "views/palette.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

// The Features view's quality page: how often the dictionary's features fire, and what it loses (DictionaryQuality).
namespace atlas {

namespace {

constexpr double kBinsPerDecade = 4;

QString powerOfTen(int exponent)
{
    static const QString digits = QStringLiteral("\u2070\u00B9\u00B2\u00B3\u2074\u2075\u2076\u2077\u2078\u2079");
    QString text = QStringLiteral("10");
    if (exponent < 0)
        text += QChar(0x207B);
    for (const QChar c : QString::number(std::abs(exponent)))
        text += digits[c.digitValue()];
    return exponent == 0 ? QStringLiteral("1") : text;
}

} // namespace

QString FeaturesView::drawQuality(const FeaturesAnalysis &a)
{
    const DictionaryQuality &q = a.dictionaryQuality;
    const int F = int(q.activeCount.size());
    setTitle(tr("Dictionary quality \u00B7 %1 \u00B7 %2")
                 .arg(m_input.model ? QString::fromStdString(m_input.model->name) : QString(),
                     QString::fromStdString(a.dictionary)));

    // How often each feature fires: log10 of its density in quarter decades, the dead ones in a bar of their own.
    QCPAxisRect *densities = addAxisRect(0, 0);
    QCPAxis *x = densities->axis(QCPAxis::atBottom), *y = densities->axis(QCPAxis::atLeft);
    const double floor = std::floor(std::log10(1.0 / double(std::max<int64_t>(1, q.corpusTokens))));
    std::vector<double> counts(size_t(-floor * kBinsPerDecade) + 1, 0.0);
    for (const int64_t n : q.activeCount)
        if (n > 0) {
            const double at = std::log10(double(n) / double(q.corpusTokens));
            counts[std::min(counts.size() - 1, size_t(std::max(0.0, (at - floor) * kBinsPerDecade)))] += 1;
        }
    auto *alive = new QCPBars(x, y), *dead = new QCPBars(x, y);
    double most = std::max(1.0, double(q.dead));
    for (size_t b = 0; b < counts.size(); ++b) {
        alive->addData(floor + (double(b) + 0.5) / kBinsPerDecade, counts[b]);
        most = std::max(most, counts[b]);
    }
    const double deadAt = floor - 0.75;
    dead->addData(deadAt, q.dead);
    alive->setWidth(0.9 / kBinsPerDecade);
    dead->setWidth(0.9 / kBinsPerDecade);
    alive->setBrush(palette::tableauBlue);
    dead->setBrush(palette::alert);
    alive->setPen(Qt::NoPen);
    dead->setPen(Qt::NoPen);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    ticks->addTick(deadAt, tr("dead"));
    for (int e = int(floor); e <= 0; ++e)
        ticks->addTick(e, powerOfTen(e));
    x->setTicker(ticks);
    x->setRange(deadAt - 0.5, 0.25);
    x->setLabel(tr("density: the share of corpus tokens a feature is active on"));
    y->setRange(0, most * 1.12);
    y->setLabel(tr("features"));
    addReferenceLine(densities, Qt::Vertical, -1, QPen(palette::alert, 1, Qt::DashLine));
    setPanelTitle(
        densities, tr("%1 of %2 features dead, %3 dense (right of the dashed line)").arg(q.dead).arg(F).arg(q.dense));

    // The loss with the model's own activations, with the dictionary's reconstruction, and with their mean.
    QCPAxisRect *losses = addAxisRect(0, 1);
    QCPAxis *lx = losses->axis(QCPAxis::atBottom), *ly = losses->axis(QCPAxis::atLeft);
    if (q.hasLosses) {
        auto *bars = new QCPBars(ly, lx);
        auto names = QSharedPointer<QCPAxisTickerText>::create();
        const std::pair<QString, double> rows[]
            = {{tr("own activations"), q.clean}, {tr("reconstruction"), q.spliced}, {tr("their mean"), q.meanAblated}};
        double top = 0;
        for (int i = 0; i < 3; ++i) {
            bars->addData(i, rows[i].second);
            names->addTick(i, rows[i].first);
            top = std::max(top, rows[i].second);
        }
        bars->setWidth(0.5);
        bars->setPen(Qt::NoPen);
        bars->setBrush(palette::tableauGreen);
        ly->setTicker(names);
        ly->setRangeReversed(true);
        ly->setRange(-0.6, 2.6);
        ly->grid()->setVisible(false);
        lx->setRange(0, top * 1.1);
        lx->setLabel(q.writes.empty() ? tr("the model's loss with the site's (nats a token)")
                                      : tr("the model's loss with the output's (nats a token)"));
        setPanelTitle(losses, tr("Loss recovered: %1 %").arg(formatNumber(100 * q.recovered(), 3)));
    } else {
        setPanelTitle(losses, tr("No next-token loss to recover"));
    }
    if (auto *grid = qobject_cast<QCPLayoutGrid *>(densities->layout()))
        grid->setColumnStretchFactor(0, 1.25);

    const QString target = q.writes.empty() ? tr("the site") : QString::fromStdString(q.writes);
    QString text = tr("Over the first %1 tokens of %2, %3 of the %4 features never fire (dead) and %5 "
                      "fire on more than a tenth of the tokens (dense); a token has %6 active features on average. On "
                      "the built-in corpus's held-out part (%7 rows) the dictionary leaves %8 % of %10's variance "
                      "unexplained (L0 %9).")
                       .arg(QLocale().toString(qlonglong(q.corpusTokens)))
                       .arg(QString::fromStdString(q.corpusName))
                       .arg(q.dead)
                       .arg(F)
                       .arg(q.dense)
                       .arg(formatNumber(q.meanActive, 3))
                       .arg(QLocale().toString(qlonglong(q.heldOutRows)))
                       .arg(formatNumber(100 * q.unexplained, 3))
                       .arg(formatNumber(q.heldOutL0, 3))
                       .arg(target);
    if (q.hasLosses)
        text += tr(" Spliced in place of %6 over %1 held-out tokens, it leaves the model %2 nats a token, against "
                   "%3 with its own activations and %4 with their mean: %5 % of the loss recovered, (L_mean \u2212 "
                   "L_spliced) / (L_mean \u2212 L_clean).")
                    .arg(q.heldOutTokens)
                    .arg(formatNumber(q.spliced, 4), formatNumber(q.clean, 4), formatNumber(q.meanAblated, 4),
                        formatNumber(100 * q.recovered(), 3), target);
    return text + tr(" Measured in %1 s.").arg(formatNumber(q.seconds, 2));
}

} // namespace atlas
