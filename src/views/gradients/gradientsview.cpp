#include "gradients/gradientsview.h"

#include "gradients/gradients.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

QString placementName(LayerNormPlacement p)
{
    switch (p) {
    case LayerNormPlacement::Pre:
        return QStringLiteral("pre-LN");
    case LayerNormPlacement::Post:
        return QStringLiteral("post-LN");
    case LayerNormPlacement::AfterSublayer:
        return QStringLiteral("norm after each sub-layer");
    case LayerNormPlacement::Sandwich:
        return QStringLiteral("sandwich norms");
    }
    return {};
}

QString runName(const GradientDepth &g)
{
    return QStringLiteral("%1 (%2)").arg(QString::fromStdString(g.model), placementName(g.placement));
}

// Ticks at 1, 2 and 5 times the powers of ten in [low, high]: a log axis spanning under two decades otherwise has one
// or two labels.
QSharedPointer<QCPAxisTickerText> oneTwoFiveTicks(double low, double high)
{
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    for (int power = int(std::floor(std::log10(low))); power <= int(std::ceil(std::log10(high))); ++power)
        for (const double step : {1.0, 2.0, 5.0})
            if (const double at = step * std::pow(10.0, power); at >= low && at <= high)
                ticks->addTick(at, QString::number(at, 'g', 3));
    return ticks;
}

// The last block's gradient over the first's: how much the gradients grow with depth.
double growth(const std::vector<double> &perBlock)
{
    return perBlock.empty() || perBlock.front() <= 0 ? 0.0 : perBlock.back() / perBlock.front();
}

} // namespace

GradientsView::GradientsView(QWidget *parent)
    : ResultPlotView(parent)
    , m_init(new QComboBox(controlRow()))
    , m_blocks(new QSpinBox(controlRow()))
{
    plot()->setToolTip(tr("Each point: one block's gradient norm \u2016\u2202L/\u2202W\u2016 over its attention "
                          "(left) or feed-forward (right) matrices, from one backward pass on the input"));
    auto *row = static_cast<QHBoxLayout *>(controlRow()->layout());
    row->addWidget(new QLabel(tr("Fresh weights:"), controlRow()));
    m_init->addItem(tr("as the family draws them (\u03C3 = 0.02)"), QStringLiteral("family"));
    m_init->addItem(tr("Xavier-uniform (Xiong et al.)"), QStringLiteral("xavier"));
    m_init->setToolTip(tr("How the dashed curves' weights are drawn: normal with \u03C3 = 0.02, as every family here "
                          "draws them, or every weight matrix Xavier-uniform, U(\u2212a, a) with a = "
                          "\u221A(6 / (fan_in + fan_out)), the setting of Xiong et al. 2020 (spec key init)"));
    row->addWidget(m_init);
    row->addWidget(new QLabel(tr("Blocks:"), controlRow()));
    m_blocks->setRange(0, kMaxFreshBlocks);
    m_blocks->setSpecialValueText(tr("the model's"));
    m_blocks->setToolTip(tr("How many blocks the fresh twins have, each as wide as the model's: the paper's effect "
                            "grows with depth (spec key fresh_blocks)"));
    row->addWidget(m_blocks);
    row->addStretch(1);
    connect(m_init, &QComboBox::activated, this, [this] {
        m_spec.set(views::gradients::kInit, m_init->currentData().toString().toStdString());
        emit specEdited(m_spec);
    });
    connect(m_blocks, &QSpinBox::valueChanged, this, [this](int blocks) {
        m_spec.set(views::gradients::kFreshBlocks, blocks);
        emit specEdited(m_spec);
    });
}

void GradientsView::syncControls()
{
    const QSignalBlocker blockInit(m_init), blockBlocks(m_blocks);
    m_init->setCurrentIndex(std::max(0, m_init->findData(QString::fromStdString(m_spec.get(views::gradients::kInit)))));
    m_blocks->setValue(m_spec.get(views::gradients::kFreshBlocks));
}

QString GradientsView::pendingText() const
{
    return tr("Running the backward pass, as trained and at initialisation\u2026");
}

void GradientsView::drawPanel(int column, const GradientsAnalysis &a, bool feedForward)
{
    QCPAxisRect *rect = addAxisRect(0, column);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    double low = INFINITY, high = 0;
    int blocks = 1;
    for (size_t i = 0; i < a.runs.size(); ++i) {
        const GradientDepth &g = a.runs[i];
        const std::vector<double> &values = feedForward ? g.feedForward : g.attention;
        const QColor colour = seriesColours().at(int(i / 2));
        auto *graph = new QCPGraph(x, y);
        for (size_t l = 0; l < values.size(); ++l)
            if (values[l] > 0) {
                graph->addData(double(l), values[l]);
                low = std::min(low, values[l]);
                high = std::max(high, values[l]);
            }
        blocks = std::max(blocks, int(values.size()));
        const bool initial = g.initialised;
        graph->setPen(QPen(colour, 2.5, initial ? Qt::DashLine : Qt::SolidLine));
        graph->setScatterStyle(QCPScatterStyle(initial ? QCPScatterStyle::ssSquare : QCPScatterStyle::ssDisc, colour,
            initial ? themeColors(m_spec.theme).background : colour, 7));
        if (column == 0) // one legend under both panels (draw) names each curve once
            graph->setName(QString::fromStdString(g.model) + (initial ? tr(", at initialisation") : tr(", trained")));
    }
    if (!(high > 0))
        low = 0.1, high = 1;
    x->setRange(-0.3, blocks - 0.7);
    setIntegerTicks(x);
    x->grid()->setZeroLinePen(Qt::NoPen); // block 0 is a block like the others
    x->setLabel(tr("block"));
    y->setScaleType(QCPAxis::stLogarithmic);
    y->setTicker(oneTwoFiveTicks(low / 1.6, high * 1.6));
    y->setRange(low / 1.6, high * 1.6);
    y->setLabel(tr("\u2016\u2202L/\u2202W\u2016"));
    setPanelTitle(rect, feedForward ? tr("Feed-forward: W\u2081, W\u2082") : tr("Attention: W_Q, W_K, W_V, W_O"));
}

QString GradientsView::draw(const GradientsAnalysis &a)
{
    syncControls();
    if (a.runs.empty())
        return {};
    setTitle(a.runs.size() > 2 ? tr("Gradients by depth: %1 against %2").arg(runName(a.runs[0]), runName(a.runs[2]))
                               : tr("Gradients by depth: %1").arg(runName(a.runs[0])));
    drawPanel(0, a, false);
    drawPanel(1, a, true);
    addLegend(2);

    const int predicted = a.runs[0].targets;
    QString text = tr("One backward pass of the loss on this input (%1 %2 predicted) through each model; each point is "
                      "a block's gradient norm. ")
                       .arg(predicted)
                       .arg(predicted == 1 ? tr("position") : tr("positions"));
    for (size_t i = 0; i + 1 < a.runs.size(); i += 2) {
        const GradientDepth &trained = a.runs[i], &initial = a.runs[i + 1];
        text += tr("%1: the last block's feed-forward gradient is %2\u00D7 the first's at initialisation, %3\u00D7 "
                   "as trained (loss %4 at initialisation, %5 trained). ")
                    .arg(runName(trained), formatNumber(growth(initial.feedForward), 3),
                        formatNumber(growth(trained.feedForward), 3), formatNumber(initial.loss, 3),
                        formatNumber(trained.loss, 3));
    }
    const Model *model = m_input.model.get();
    if (model && !model->config.task.empty() && model->config.task != "chars" && model->config.task != "mlm")
        text += tr("As in training, the loss counts only the positions the %1 task asks %2 to predict. ")
                    .arg(QString::fromStdString(model->config.task), QString::fromStdString(model->name));
    const GradientDepth &fresh = a.runs[1];
    const int freshBlocks = int(fresh.feedForward.size()), ownBlocks = int(a.runs[0].feedForward.size());
    const QString shape = freshBlocks == ownBlocks
        ? tr("the same shapes")
        : (a.runs.size() > 2 ? tr("the same widths with %1 blocks (the trained models have %2)")
                             : tr("the same width with %1 blocks (the trained model has %2)"))
              .arg(freshBlocks)
              .arg(ownBlocks);
    text += tr("Where the norm sits, before each sub-layer (pre-LN) or after each residual add (post-LN), decides how "
               "the gradient is shared among the blocks (Xiong et al. 2020); the dashed curves are %1 with fresh "
               "weights, %2.")
                .arg(shape,
                    fresh.init == WeightInit::Xavier ? tr("every matrix drawn Xavier-uniform as in the paper")
                                                     : tr("the small ones their families draw (\u03C3 = 0.02)"));
    return text;
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::gradients::makeView(QWidget *parent)
{
    return std::make_unique<GradientsView>(parent);
}
