#include "features/featuresview.h"

#include "util/text.h"
#include "viewmodel/viewinput.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <algorithm>

// The Features view's steering page: the model's continuation with and without the feature (FeatureSteering).
namespace atlas {

namespace {

// `text` broken into lines of at most `width` pixels in `font`, at spaces where it can.
QString wrapped(const QString &text, const QFont &font, int width)
{
    const QFontMetrics metrics(font);
    QString out, line;
    for (const QString &word : text.split(QLatin1Char(' '))) {
        const QString next = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
        if (!line.isEmpty() && metrics.horizontalAdvance(next) > width) {
            out += line + QLatin1Char('\n');
            line = word;
        } else {
            line = next;
        }
    }
    return out + line;
}

} // namespace

QString FeaturesView::drawSteering(const FeaturesAnalysis &a)
{
    const FeatureSteering &s = a.steering;
    const QString how = s.byMeans() ? tr("%1 \u00D7 (mean of %2 \u2212 mean of %3)")
                                          .arg(formatNumber(s.strength, 3))
                                          .arg(countOf(s.meansA.size(), "prompt").c_str())
                                          .arg(countOf(s.meansB.size(), "prompt").c_str())
        : s.clamp ? tr("#%1 clamped at %2").arg(a.feature).arg(formatNumber(s.strength, 3))
                  : tr("%1 \u00D7 #%2's decoder row").arg(formatNumber(s.strength, 3)).arg(a.feature);
    setTitle(tr("Steering \u00B7 %1 \u00B7 %2").arg(how, QString::fromStdString(a.dictionary)));

    // The next-token probabilities the steering moves most, without and with it.
    QCPAxisRect *moved = addAxisRect(0, 0);
    QCPAxis *x = moved->axis(QCPAxis::atBottom), *y = moved->axis(QCPAxis::atLeft);
    auto *without = new QCPBars(y, x), *with = new QCPBars(y, x);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    double top = 1e-6;
    for (size_t i = 0; i < s.moved.size(); ++i) {
        without->addData(double(i) - 0.18, s.moved[i].without);
        with->addData(double(i) + 0.18, s.moved[i].with);
        ticks->addTick(double(i), QStringLiteral("'%1'").arg(vocabularyLabel(m_input, s.moved[i].id)));
        top = std::max({top, double(s.moved[i].without), double(s.moved[i].with)});
    }
    for (auto [b, color, name] : {std::tuple {without, palette::tableauGrey, tr("without")},
             std::tuple {with, palette::tableauOrange, tr("with %1").arg(how)}}) {
        b->setWidth(0.34);
        b->setPen(Qt::NoPen);
        b->setBrush(color);
        b->setName(name);
    }
    y->setTicker(ticks);
    y->setRangeReversed(true);
    y->setRange(-0.6, std::max<double>(1, double(s.moved.size())) - 0.4);
    y->grid()->setVisible(false);
    x->setRange(0, std::min(1.0, top * 1.15));
    x->setLabel(tr("probability of the next token after the input"));
    setPanelTitle(moved, tr("The next tokens it moves most"));
    addPanelLegend(moved, {without, with});

    // The two continuations, in the plot so that they export with it.
    QCPAxisRect *texts = addAxisRect(0, 1);
    for (QCPAxis *axis : texts->axes()) {
        axis->setVisible(false);
        axis->grid()->setVisible(false);
    }
    texts->axis(QCPAxis::atBottom)->setRange(0, 1);
    texts->axis(QCPAxis::atLeft)->setRange(0, 1);
    const ThemeColors theme = themeColors(m_spec.theme);
    const QFont font = sizedFont(this->font(), 11);
    const QFont bold = sizedFont(this->font(), 11, true);
    const int room = std::max(200, int(0.42 * std::max(plot()->width(), width())));
    const auto decode = [&](const std::vector<int> &ids) {
        QString text;
        for (const int id : ids)
            text += vocabularyLabel(m_input, id);
        return text.replace(QChar(0x2423), QLatin1Char(' ')).replace(QChar(0x21B5), QLatin1Char(' '));
    };
    QString prompt;
    for (int t = 0; t < m_input.tokens.size(); ++t)
        prompt += tokenLabel(m_input, t);
    prompt.replace(QChar(0x2423), QLatin1Char(' '));
    const std::pair<QString, QString> blocks[]
        = {{tr("Without"), decode(s.plain)}, {tr("With %1").arg(how), decode(s.steered)}};
    for (int i = 0; i < 2; ++i) {
        auto *head = new QCPItemText(plot());
        head->setClipAxisRect(texts);
        head->position->setAxes(texts->axis(QCPAxis::atBottom), texts->axis(QCPAxis::atLeft));
        head->position->setCoords(0.02, i == 0 ? 0.97 : 0.49);
        head->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        head->setFont(bold);
        head->setColor(i == 0 ? theme.text : palette::tableauOrange.darker(115));
        head->setText(blocks[i].first);
        auto *body = new QCPItemText(plot());
        body->setClipAxisRect(texts);
        body->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        body->position->setParentAnchor(head->bottomLeft);
        body->position->setCoords(0, 4);
        body->setFont(font);
        body->setColor(theme.text);
        body->setTextAlignment(Qt::AlignLeft);
        body->setText(wrapped(prompt + QStringLiteral(" \u2502 ") + blocks[i].second, font, room));
    }
    const bool sampled = s.sampling.temperature > 0;
    setPanelTitle(texts,
        sampled ? tr("The continuation of the input (after \u2502), sampled at T = %1 from seed %2")
                      .arg(formatNumber(s.sampling.temperature, 3))
                      .arg(s.sampling.seed)
                : tr("The greedy continuation of the input (after \u2502)"));

    const QString site = QString::fromStdString(a.dictionary.substr(a.dictionary.rfind(' ') + 1));
    const QString model = m_input.model ? QString::fromStdString(m_input.model->name) : QString();
    const QString greedy = tr(" Both continuations run through the KV cache, the steering made at every position as "
                              "it is fed, the prompt's too; ")
        + (sampled ? tr("both sample from the same seed, so they part only where the steering moves the odds.")
                   : tr("each takes the most likely token."));
    if (s.byMeans()) {
        const auto quoted = [](const std::vector<std::string> &prompts) {
            QStringList list;
            for (const std::string &p : prompts)
                list << QStringLiteral("\u201C%1\u201D").arg(QString::fromStdString(p));
            return list.join(QStringLiteral(", "));
        };
        QStringList aligned;
        for (const auto &[f, cosine] : s.alignedFeatures)
            aligned << tr("#%1 (%2)").arg(f).arg(formatNumber(cosine, 2));
        return tr("The difference of %1's mean rows at %2 over %3 and over %4 (every position of every prompt), "
                  "|v| = %5, added %6 times at every position: x + s v (Turner et al.'s activation addition, "
                  "averaged over prompts). The features whose decoder rows point most along v (cosine): %7.")
                   .arg(model, site, quoted(s.meansA), quoted(s.meansB), formatNumber(s.directionNorm, 3),
                       formatNumber(s.strength, 3), aligned.join(QStringLiteral(", ")))
            + greedy;
    }
    QString text = tr("Feature #%1 (%2) steers %3 at %4, at every position: ")
                       .arg(a.feature)
                       .arg(a.featureChosen ? tr("chosen") : tr("the strongest at token %1").arg(a.position))
                       .arg(model, site);
    text += s.clamp ? tr("the site's rows are encoded, the feature set to %1, and the difference its decoder row makes "
                         "added (x + (c \u2212 f(x)) W_dec[f]).")
                          .arg(formatNumber(s.strength, 3))
                    : tr("x + %1 W_dec[f] (Turner et al.'s activation addition; Templeton et al.'s feature steering).")
                          .arg(formatNumber(s.strength, 3));
    return text + greedy;
}

} // namespace atlas
