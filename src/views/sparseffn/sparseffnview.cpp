#include "sparseffn/sparseffnview.h"

#include "sparseffn/sparseffn.h"
#include "util/text.h"
#include "views/heatmapplot.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/plottitle.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace atlas {

SparseFfnView::SparseFfnView(QWidget *parent)
    : View(parent)
    , m_dense(new HeatmapPlot(this))
    , m_sparse(new HeatmapPlot(this))
{
    m_formula = newFormulaLabel();
    m_message = newMessageLabel();
    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    m_block = new QComboBox(m_controls);
    for (int n = 2; n <= 64; n *= 2)
        m_block->addItem(tr("one neuron in %1").arg(n), n);
    m_block->setToolTip(tr("Block size N: the sparse layer keeps one neuron of every block of N consecutive ones"));
    row->addWidget(new QLabel(tr("Keep:"), m_controls));
    row->addWidget(m_block);
    row->addStretch(1);
    connect(m_block, &QComboBox::activated, this, &SparseFfnView::chooseBlock);

    m_plots = new QWidget(this);
    m_error = new QCustomPlot(m_plots);
    for (HeatmapPlot *plot : {m_dense, m_sparse}) {
        plot->setParent(m_plots);
        plot->setMinimumSize(240, 230);
        plot->setIndexInLabels(false);
    }
    m_error->setMinimumSize(300, 220);
    auto *heatmaps = new QHBoxLayout;
    heatmaps->addWidget(m_dense, 1);
    heatmaps->addWidget(m_sparse, 1);
    auto *column = new QVBoxLayout(m_plots);
    column->setContentsMargins(0, 0, 0, 0);
    column->addLayout(heatmaps, 3);
    column->addWidget(m_error, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_formula);
    layout->addWidget(m_controls);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_plots, 1);
    m_error->plotLayout()->insertRow(0);
    m_errorTitle = new PlotTitle(m_error, QString(), sizedFont(m_error->font(), 11, true));
    m_error->plotLayout()->addElement(0, 0, m_errorTitle);
    m_error->legend->setVisible(true);
    m_error->legend->setObjectName(QStringLiteral("emptyCornerLegend")); // inside the axes, where no data is
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString SparseFfnView::message() const
{
    return m_plots->isHidden() ? m_message->text() : QString();
}

QString SparseFfnView::formula() const
{
    return m_formula->text();
}

void SparseFfnView::showMessage(const QString &text)
{
    m_message->setFont(sizedFont(font(), 12));
    m_message->setText(text);
    m_message->show();
    m_plots->hide();
}

void SparseFfnView::chooseBlock(int index)
{
    const int n = m_block->itemData(index).toInt();
    if (n == m_spec.get(views::sparseffn::kBlockSize) || n < 1)
        return;
    m_spec.set(views::sparseffn::kBlockSize, n);
    emit specEdited(m_spec);
}

void SparseFfnView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    if (const int index = m_block->findData(m_spec.get(views::sparseffn::kBlockSize)); index >= 0) {
        const QSignalBlocker block(m_block);
        m_block->setCurrentIndex(index);
    }
    const auto *analysis = currentAnalysis<SparseFfnAnalysis>();
    if (analysis == nullptr && m_input.analysis.pending && m_drawn && m_plots->isVisibleTo(this))
        return; // the last picture stays as it was drawn until the new settings' result comes: no flash of a message
    if (analysis == nullptr) {
        m_drawn.reset();
        m_formula->clear();
        return showMessage(!m_input.analysis.problem.isEmpty() ? m_input.analysis.problem
                : m_input.analysis.pending                     ? tr("Computing…")
                                                               : QString::fromUtf8(kNothingComputed));
    }
    m_drawn = std::make_shared<SparseFfnAnalysis>(*analysis);
    const FfnSparsity &s = m_drawn->sparsity;
    m_formula->setText(tr("Layer %1's feed-forward layer keeps one neuron in %2 for each token, the one of largest "
                          "|act(U)|: %3 of %4 neurons, and its output M = act(U) W_proj + b_proj is off by "
                          "‖M_sparse − M‖ / ‖M‖ = %5 (an oracle's choice; Sparse is Enough trains a controller to make "
                          "it). In the dense layer %6 of the activations are positive.")
                           .arg(s.layer)
                           .arg(s.blockSize)
                           .arg((s.neurons + s.blockSize - 1) / s.blockSize)
                           .arg(s.neurons)
                           .arg(formatNumber(s.error, 3), formatPercent(s.positiveShare, 2)));
    m_message->hide();
    m_plots->show();
    const QStringList tokens = tokenLabels(m_input, s.tokens);
    const QStringList neurons = numberedLabels(s.neurons);
    const auto draw = [&](HeatmapPlot *plot, const Tensor &t, const QString &title) {
        plot->setTheme(m_spec.theme);
        plot->setColormap(m_spec.colormap);
        plot->setMatrix(t.data(), int(t.dim(0)), int(t.dim(1)), m_drawn);
        plot->setLabels(tokens, neurons);
        plot->setTitle(title);
        plot->setAxisTitles(tr("neuron"), tr("token"));
        plot->setValueLabel(tr("act(U)"));
    };
    draw(m_dense, m_drawn->sparsity.dense, tr("Dense: every neuron (%1)").arg(s.neurons));
    draw(m_sparse, m_drawn->sparsity.sparse,
        tr("Sparse: one in %1 kept (%2)").arg(s.blockSize).arg((s.neurons + s.blockSize - 1) / s.blockSize));
    drawError();
}

void SparseFfnView::drawError()
{
    const FfnSparsity &s = m_drawn->sparsity;
    applyPlotTheme(m_error, m_spec.theme);
    m_error->clearGraphs();
    m_error->clearItems();
    m_errorTitle->setText(tr("The error against the neurons kept per token"));
    m_errorTitle->setFont(sizedFont(font(), 11, true));
    m_errorTitle->setTextColor(themeColors(m_spec.theme).text);
    const auto series = [&](const std::vector<int> &kept, const std::vector<double> &error, const QString &name,
                            const QColor &colour, QCPScatterStyle::ScatterShape shape) {
        QVector<double> x, y;
        for (size_t i = 0; i < kept.size(); ++i)
            if (error[i] > 0) { // every neuron kept: no error, and no place on a log axis
                x << kept[i];
                y << error[i];
            }
        QCPGraph *g = m_error->addGraph();
        g->setName(name);
        g->setData(x, y, true);
        g->setPen(QPen(colour, 2));
        g->setScatterStyle(QCPScatterStyle(shape, 7));
        return g;
    };
    series(s.topKept, s.topError, tr("the top k by |act(U)| of each token"), seriesColours().at(0),
        QCPScatterStyle::ssCircle);
    series(s.blockKept, s.blockError, tr("one per block of N = 2, 4 … 64 (right to left)"), seriesColours().at(1),
        QCPScatterStyle::ssDiamond);
    QCPGraph *now = m_error->addGraph();
    now->setName(tr("this view: N = %1").arg(s.blockSize));
    now->setData({double((s.neurons + s.blockSize - 1) / s.blockSize)}, {std::max(s.error, 1e-9)});
    now->setLineStyle(QCPGraph::lsNone);
    now->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(palette::alert, 2), Qt::NoBrush, 14));
    for (QCPAxis *axis : {m_error->xAxis, m_error->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        axis->setNumberFormat("gb");
        axis->setTickLabelFont(sizedFont(font(), 9));
        axis->setLabelFont(sizedFont(font(), 10));
    }
    m_error->xAxis->setLabel(tr("neurons kept per token (of %1)").arg(s.neurons));
    m_error->yAxis->setLabel(tr("‖M_sparse − M‖ / ‖M‖"));
    m_error->xAxis->setRange(0.8, s.neurons * 1.25);
    m_error->yAxis->rescale();
    m_error->yAxis->setRange(m_error->yAxis->range().lower * 0.5, std::max(1.5, m_error->yAxis->range().upper * 1.4));
    m_error->legend->setFont(sizedFont(font(), 9));
    // The error falls as neurons are kept: the lower left corner is free of data, and a row under the axes would
    // squeeze them on a projector.
    m_error->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignLeft | Qt::AlignBottom);
    m_error->replot();
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::sparseffn::makeView(QWidget *parent)
{
    return std::make_unique<SparseFfnView>(parent);
}
