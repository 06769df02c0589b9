#include "rollout/rolloutview.h"

#include "rollout/rollout.h"
#include "util/text.h"
#include "views/heatmapplot.h"
#include "views/heatmapticks.h"
#include "views/plottheme.h"
#include "views/plottitle.h"
#include "views/viewfonts.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <cmath>

namespace atlas {

RolloutView::RolloutView(QWidget *parent)
    : View(parent)
{
    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    m_position = new QSpinBox(m_controls);
    m_position->setRange(-1, 0);
    m_position->setSpecialValueText(tr("last"));
    m_position->setToolTip(tr("The position whose sources the bars show, outlined in the map (spec key position)"));
    m_fusion = new QComboBox(m_controls);
    m_fusion->addItem(tr("mean of the heads (the paper)"), QStringLiteral("mean"));
    m_fusion->addItem(tr("max over the heads"), QStringLiteral("max"));
    m_fusion->addItem(tr("min over the heads"), QStringLiteral("min"));
    m_fusion->setToolTip(tr("How each layer's heads become one attention before the residual is added (spec key "
                            "rollout_heads): Abnar & Zuidema average them; max and min keep the strongest or weakest "
                            "head on each pair, rows renormalised"));
    row->addWidget(new QLabel(tr("Position:"), m_controls));
    row->addWidget(m_position);
    row->addWidget(new QLabel(tr("Heads:"), m_controls));
    row->addWidget(m_fusion);
    row->addStretch(1);
    connect(m_position, &QSpinBox::valueChanged, this,
        [this](int p) { editSpec(p, QString::fromStdString(m_spec.get(views::rollout::kRolloutHeads))); });
    connect(m_fusion, &QComboBox::activated, this,
        [this](int i) { editSpec(m_spec.position, m_fusion->itemData(i).toString()); });

    m_formula = newFormulaLabel();
    m_message = newMessageLabel();
    m_caption = new QLabel(this);
    m_caption->setWordWrap(true);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_body = new QWidget(this);
    auto *body = new QHBoxLayout(m_body);
    body->setContentsMargins(0, 0, 0, 0);
    m_map = new HeatmapPlot(m_body);
    m_map->setAxisTitles(tr("input token j"), tr("position i"));
    m_map->setValueLabel(tr("rollout R[i, j]"));
    m_plot = new QCustomPlot(m_body);
    m_plot->setMinimumSize(320, 260);
    m_plot->plotLayout()->insertRow(0);
    m_title = new PlotTitle(m_plot, QString(), sizedFont(font(), 12, true));
    m_plot->plotLayout()->addElement(0, 0, m_title);
    auto *group = new QCPBarsGroup(m_plot);
    const QStringList names = {tr("the last layer's attention"), tr("rollout"), tr("flow (normalised)")};
    for (int s = 0; s < 3; ++s) {
        auto *bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(names[s]);
        bars->setWidth(0.27);
        bars->setBarsGroup(group);
        bars->setPen(Qt::NoPen);
        m_bars.push_back(bars);
    }
    legendUnderAxes(m_plot, 3);
    m_plot->yAxis->setLabel(tr("weight of input token j"));
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    body->addWidget(m_map, 1);
    body->addWidget(m_plot, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_formula);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_body, 1);
    layout->addWidget(m_caption);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString RolloutView::message() const
{
    return m_body->isHidden() ? m_message->text() : QString();
}

QString RolloutView::caption() const
{
    return m_caption->text();
}

void RolloutView::editSpec(int position, const QString &fusion)
{
    if (position == m_spec.position && fusion.toStdString() == m_spec.get(views::rollout::kRolloutHeads))
        return;
    ViewSpec spec = m_spec;
    spec.position = position;
    spec.set(views::rollout::kRolloutHeads, fusion.toStdString());
    emit specEdited(spec);
}

void RolloutView::showMessage(const QString &text)
{
    m_formula->clear();
    m_caption->clear();
    m_message->setFont(sizedFont(font(), 12));
    setMessageText(m_message, text);
    m_message->show();
    m_body->hide();
    m_caption->hide();
}

void RolloutView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    m_caption->setFont(sizedFont(font(), 10));
    m_title->setFont(sizedFont(font(), 12, true));
    {
        const QSignalBlocker block(m_fusion);
        m_fusion->setCurrentIndex(
            std::max(0, m_fusion->findData(QString::fromStdString(m_spec.get(views::rollout::kRolloutHeads)))));
    }
    const auto *a = currentAnalysis<RolloutAnalysis>();
    if (!a)
        return showMessage(!m_input.analysis.problem.isEmpty()        ? m_input.analysis.problem
                : m_input.analysis.pending || m_input.analysis.result ? tr("Computing…")
                                                                      : QString::fromUtf8(kNothingComputed));
    const int T = int(a->rollout.rows());
    {
        const QSignalBlocker block(m_position);
        m_position->setRange(-1, T - 1);
        m_position->setValue(m_spec.position < 0 || m_spec.position >= T ? -1 : m_spec.position);
    }
    const QStringList tokens = keyLabels(m_input, T);
    m_map->setTheme(m_spec.theme);
    m_map->setColormap(m_spec.colormap);
    m_map->setLogScale(m_spec.scale == "log");
    m_map->setLabels(tokens, tokens);
    m_map->setTitle(tr("Rollout through %1").arg(QString::fromStdString(countOf(size_t(a->layers), "layer"))));
    m_map->setMatrix(a->cells->data(), T, T, a->cells);
    m_map->setMarkedRow(a->position);
    // The analysis, not a copy of its T × T doubles (134 MB at 4096 tokens), stays with the hover text.
    m_map->setHoverText([tokens, analysis = m_input.analysis.result](int i, int j) {
        const Eigen::MatrixXd &rollout = static_cast<const RolloutAnalysis &>(*analysis).rollout;
        return tr("position %1 '%2' ← input %3 '%4': rollout %5")
            .arg(i)
            .arg(tokens.value(i))
            .arg(j)
            .arg(tokens.value(j), formatNumber(rollout(i, j), 3));
    });
    drawBars(*a, tokens);
    const QString site = siteTitle(m_input);
    m_formula->setText(tr("%1Each layer's heads combined (%2) with the residual as an identity: Â_l = (Ā_l + I) / 2. "
                          "Rollout R = Â_%3 ⋯ Â_1: how much each input token reaches each position if the layers "
                          "mix linearly. Flow: the maximum flow from position %4 down the layers, each edge carrying "
                          "Â, to each input token (Abnar & Zuidema 2020).")
                           .arg(site.isEmpty() ? QString() : site + ". ")
                           .arg(QString::fromStdString(a->fusion))
                           .arg(a->layers)
                           .arg(a->position));
    double rawFlow = 0;
    for (double v : a->flow.raw)
        rawFlow += v;
    m_caption->setText(!a->flowProblem.empty()
            ? tr("Flow not computed: %1.").arg(QString::fromStdString(a->flowProblem))
            : tr("The flow bars are the maximum flows normalised to sum to 1 (their raw sum is %1; each raw value is "
                 "at most 1, the capacity into position %2). %3 traced, computed in %4 ms.")
                  .arg(formatNumber(rawFlow, 3))
                  .arg(a->position)
                  .arg(QString::fromStdString(countOf(size_t(a->layers), "layer")))
                  .arg(formatNumber(a->milliseconds, 2)));
    m_message->hide();
    m_body->show();
    m_caption->show();
}

void RolloutView::drawBars(const RolloutAnalysis &a, const QStringList &tokens)
{
    applyPlotTheme(m_plot, m_spec.theme);
    const ThemeColors colors = themeColors(m_spec.theme);
    m_plot->legend->setBrush(colors.background);
    m_plot->legend->setTextColor(colors.text);
    m_plot->legend->setFont(sizedFont(font(), 9));
    const int T = int(a.rollout.rows());
    QVector<double> keys(T), last(T), rollout(T), flow;
    for (int j = 0; j < T; ++j) {
        keys[j] = j;
        last[j] = a.lastLayer[size_t(j)];
        rollout[j] = a.rollout(a.position, j);
        if (!a.flow.normalised.empty())
            flow << a.flow.normalised[size_t(j)];
    }
    setTokenTicks(m_plot->xAxis, tokens, T, std::max(100, m_plot->width() - 90), true, true);
    const QColor colours[] = {colors.axis, seriesColours().value(0), seriesColours().value(1)};
    const QVector<double> *values[] = {&last, &rollout, &flow};
    for (int s = 0; s < 3; ++s) {
        m_bars[size_t(s)]->setBrush(colours[s]);
        m_bars[size_t(s)]->setAntialiased(T < kAntialiasedMarksBelow);
        m_bars[size_t(s)]->setData(values[s]->isEmpty() ? QVector<double>() : keys, *values[s], true);
    }
    m_plot->xAxis->setRange(-0.6, T - 0.4);
    m_plot->xAxis->setLabel(tr("input token j"));
    double top = 0;
    for (const QVector<double> *v : values)
        for (double x : *v)
            top = std::max(top, x);
    m_plot->yAxis->setRange(0, std::max(0.05, top * 1.15));
    m_title->setText(tr("Where position %1 '%2' reads from").arg(a.position).arg(tokens.value(a.position)));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::rollout::makeView(QWidget *parent)
{
    return std::make_unique<RolloutView>(parent);
}
