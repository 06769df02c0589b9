#include "neuron/neuronview.h"
#include "neuron/neuron.h"

#include "views/palette.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QStackedLayout>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace atlas {

NeuronView::NeuronView(QWidget *parent)
    : View(parent)
    , m_stack(new QStackedLayout(this))
    , m_message(newMessageLabel())
    , m_page(new QWidget(this))
    , m_controls(new QWidget(m_page))
    , m_query(new QSpinBox(m_controls))
    , m_key(new QSpinBox(m_controls))
    , m_formula(newFormulaLabel())
    , m_plot(new QCustomPlot(m_page))
    , m_caption(newFormulaLabel())
{
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Query"), m_controls));
    row->addWidget(m_query);
    row->addWidget(new QLabel(tr("Key"), m_controls));
    row->addWidget(m_key);
    row->addStretch(1);
    m_query->setToolTip(tr("The attending token i"));
    m_key->setToolTip(tr("The attended token j; \"most\" is the key this query weights most"));
    m_key->setSpecialValueText(tr("most"));
    auto *column = new QVBoxLayout(m_page);
    column->addWidget(m_controls);
    column->addWidget(m_formula);
    column->addWidget(m_plot, 1);
    column->addWidget(m_caption);
    m_formula->setParent(m_page);
    m_caption->setParent(m_page);
    m_plot->setMinimumHeight(160);
    m_stack->addWidget(m_message);
    m_stack->addWidget(m_page);
    connect(m_query, &QSpinBox::valueChanged, this, [this](int query) {
        if (query == m_spec.query)
            return;
        m_spec.query = query;
        refresh();
        emit specEdited(m_spec);
    });
    connect(m_key, &QSpinBox::valueChanged, this, [this](int key) {
        if (key == m_spec.get(views::neuron::kKey))
            return;
        m_spec.set(views::neuron::kKey, key);
        refresh();
        emit specEdited(m_spec);
    });
    showMessage(tr("Nothing to show yet: run the model"));
}

QString NeuronView::message() const
{
    return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

QString NeuronView::formula() const
{
    return m_formula->text();
}

QString NeuronView::caption() const
{
    return m_caption->text();
}

void NeuronView::showMessage(const QString &text)
{
    m_message->setFont(sizedFont(font(), 12));
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

void NeuronView::refresh()
{
    layOutHidden(this);
    applyPlotTheme(m_plot, m_spec.theme); // the pages take the view's palette (View::setSpec)
    if (!m_input.trace)
        return showMessage(tr("Nothing to show yet: run the model"));
    if (m_input.model)
        if (const std::string problem = encoderDecoderProblem(m_spec.view, m_input.model->config, m_input.model->name);
            !problem.empty())
            return showMessage(QString::fromStdString(problem));
    const int tokens = int(m_input.tokenIds.size()), keys = int(m_input.keyTokens.size());
    const int query = m_spec.query >= 0 ? m_spec.query : tokens - 1;
    std::string problem;
    m_terms = queryKeyTerms(*m_input.trace, m_spec.layer, std::max(0, m_spec.head), query,
        m_spec.get(views::neuron::kKey), &problem, m_input.site, !m_input.model || m_input.model->config.scaleScores,
        m_input.model ? double(m_input.model->config.queryScaleBase) : 0.0);
    if (!problem.empty())
        return showMessage(QString::fromStdString(problem));
    {
        const QSignalBlocker b1(m_query), b2(m_key);
        m_query->setRange(0, std::max(0, tokens - 1));
        m_query->setValue(query);
        m_key->setRange(-1, std::max(0, keys - 1));
        m_key->setValue(m_spec.get(views::neuron::kKey));
    }
    draw();
    m_stack->setCurrentWidget(m_page);
    m_plot->replot(drawnHeadless(this) ? QCustomPlot::rpImmediateRefresh : QCustomPlot::rpQueuedReplot);
}

void NeuronView::draw()
{
    const QueryKeyTerms &t = m_terms;
    const QString q = m_terms.rotated ? tr("R(q)") : tr("q"), k = m_terms.rotated ? tr("R(k)") : tr("k");
    m_formula->setFont(sizedFont(font(), 11));
    const QString site = siteTitle(m_input), plusBias = std::abs(t.bias) > 1e-4 ? tr(" + b") : QString();
    const QString formula = t.unscaled
        ? tr("score = %1·%2%3 = Σ_c %1_c %2_c%3  (not divided by √d)").arg(q, k, plusBias)
        : tr("score = %1·%2 / √%5%3 = Σ_c %1_c %2_c / √%4%3")
              .arg(q, k, plusBias)
              .arg(formatNumber(t.divisor, 4), t.divisor == t.dim ? tr("d") : tr("s"));
    m_formula->setText((site.isEmpty() ? QString() : site + QStringLiteral(" · "))
        + tr("Layer %1 · head %2: query %3 '%4' → key %5 '%6'.  %7")
              .arg(t.layer)
              .arg(t.head)
              .arg(t.query)
              .arg(tokenLabel(m_input, t.query))
              .arg(t.key)
              .arg(keyLabel(m_input, t.key))
              .arg(formula));
    m_plot->clearPlottables();
    m_plot->plotLayout()->clear();
    const bool cross = m_input.site.cross; // the query is the decoder's, the key the source's
    const QString names[3] = {(cross ? tr("%1 (decoder query %2)") : tr("%1 (query %2)")).arg(q).arg(t.query),
        (cross ? tr("%1 (source key %2)") : tr("%1 (key %2)")).arg(k).arg(t.key), tr("%1 ∘ %2: the terms").arg(q, k)};
    const std::vector<float> *rows[3] = {&t.q, &t.k, &t.product};
    const QColor barColors[3] = {palette::tableauBlue, palette::tableauOrange, palette::tableauGreen};
    QVector<double> x;
    for (int c = 0; c < t.dim; ++c)
        x << c;
    for (int r = 0; r < 3; ++r) {
        auto *rect = new QCPAxisRect(m_plot);
        m_plot->plotLayout()->addElement(0, r, rect); // side by side, components downwards (BertViz's layout)
        QCPAxis *xa = rect->axis(QCPAxis::atBottom), *ya = rect->axis(QCPAxis::atLeft);
        applyAxisRectTheme(rect, m_spec.theme, font());
        QVector<double> values;
        double top = 1e-6;
        for (float v : *rows[r]) {
            values << v;
            top = std::max(top, double(std::abs(v)));
        }
        auto *bars = new QCPBars(ya, xa); // horizontal: the components on the vertical axis
        bars->setData(x, values, true);
        bars->setWidth(0.8);
        bars->setPen(Qt::NoPen);
        bars->setBrush(barColors[r]);
        ya->setRange(-0.7, t.dim - 0.3);
        ya->setRangeReversed(true); // component 0 on top
        setIntegerTicks(ya, t.dim / 16);
        xa->setRange(-top * 1.15, top * 1.15);
        xa->setLabel(names[r]);
        ya->setLabel(r == 0 ? tr("c (d = %1)").arg(t.dim) : QString());
    }
    if (t.capped && m_input.model)
        drawSoftcap(m_input.model->config.attentionSoftcap);
    QStringList largest;
    for (size_t i = 0; i < std::min<size_t>(3, t.largestTerms.size()); ++i) {
        const int c = t.largestTerms[i];
        largest << tr("c = %1: %2").arg(c).arg(formatNumber(t.product[size_t(c)], 3));
    }
    QString text = t.unscaled
        ? tr("Σ terms = %1 (this model does not divide by √%2)").arg(formatNumber(t.dot, 4)).arg(t.dim)
        : tr("Σ terms = %1;  / √%2 = %3")
              .arg(formatNumber(t.dot, 4), formatNumber(t.divisor, 4), formatNumber(t.scaled, 4));
    if (std::abs(t.bias) > 1e-4)
        text += tr(";  + position bias b = %1").arg(formatNumber(t.bias, 4));
    text += tr(";  the traced score %1").arg(formatNumber(t.score, 4));
    if (t.capped)
        text += tr(", soft-capped to c·tanh(s/c) = %1").arg(formatNumber(t.cappedScore, 4));
    text += t.masked ? tr(", masked (−∞ before softmax): weight 0.")
                     : tr(", weight after softmax %1.").arg(formatNumber(t.weight, 3));
    text += tr(" Largest terms: %1.").arg(largest.join(QStringLiteral(", ")));
    if (t.unscaled)
        text += tr(" With 1/√d, as most models divide, the score would be %1: √%2 = %3 times smaller, and softmax that "
                   "much flatter.")
                    .arg(formatNumber(t.dot / std::sqrt(double(t.dim)) + t.bias, 4))
                    .arg(t.dim)
                    .arg(formatNumber(std::sqrt(double(t.dim)), 3));
    else
        text += tr(" Without the division the score would be %1: √%2 = %3 times larger, and softmax that much "
                   "sharper.")
                    .arg(formatNumber(t.dot + t.bias, 4), formatNumber(t.divisor, 4))
                    .arg(formatNumber(std::sqrt(t.divisor), 3));
    m_caption->setFont(sizedFont(font(), 10));
    m_caption->setText(text);
}

// Gemma 2's soft-cap beside the terms: the curve c·tanh(s/c) against the identity, and where this pair's score lands.
void NeuronView::drawSoftcap(double cap)
{
    const QueryKeyTerms &t = m_terms;
    auto *rect = new QCPAxisRect(m_plot);
    m_plot->plotLayout()->addElement(0, 3, rect);
    applyAxisRectTheme(rect, m_spec.theme, font());
    QCPAxis *xa = rect->axis(QCPAxis::atBottom), *ya = rect->axis(QCPAxis::atLeft);
    const ThemeColors colors = themeColors(m_spec.theme);
    const double reach = std::max(3.0 * cap, 1.2 * std::abs(t.score));
    auto *identity = new QCPGraph(xa, ya);
    identity->setData({-reach, reach}, {-reach, reach});
    identity->setPen(QPen(colors.muted, 1.2, Qt::DashLine));
    auto *curve = new QCPGraph(xa, ya);
    for (int i = 0; i <= 200; ++i) {
        const double s = -reach + 2.0 * reach * i / 200.0;
        curve->addData(s, cap * std::tanh(s / cap));
    }
    curve->setPen(QPen(palette::tableauPurple, 2.5));
    auto *point = new QCPGraph(xa, ya);
    point->addData(t.score, t.cappedScore);
    point->setLineStyle(QCPGraph::lsNone);
    point->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, palette::alert, palette::alert, 10));
    xa->setRange(-reach, reach);
    ya->setRange(-reach, reach);
    xa->ticker()->setTickCount(3); // the panel is narrow: −100, 0, 100 rather than labels run together
    xa->setLabel(tr("score s; dashed: no cap"));
    ya->setLabel(tr("soft-capped: c\u00B7tanh(s/c), c = %1").arg(formatNumber(cap, 3)));
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::neuron::makeView(QWidget *parent)
{
    return std::make_unique<NeuronView>(parent);
}
