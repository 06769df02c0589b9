#include "circuit/circuitview.h"

#include "circuit/circuit.h"
#include "circuit/circuitplot.h"
#include "io/atomicfile.h"
#include "views/corruptioncontrols.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/runningrow.h"
#include "views/viewfonts.h"

#include <QComboBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace atlas {

using namespace views::circuit;

CircuitView::CircuitView(QWidget *parent)
    : View(parent)
{
    m_controls = new CorruptionControls([this](const auto &change) { editSpec(change); }, this);
    m_method = new QComboBox(m_controls);
    m_method->addItem(tr("EAP"), QStringLiteral("eap"));
    m_method->addItem(tr("EAP-IG"), QStringLiteral("eap-ig"));
    m_method->setToolTip(tr("How each edge's effect is estimated: EAP, the metric's gradient at the corrupted run "
                            "times what the sender writes in the clean run minus the corrupted (Syed et al. 2023); "
                            "EAP-IG, that gradient averaged over inputs between the corrupted and the clean embedding "
                            "(Hanna et al. 2024) (spec key attribution)"));
    m_controls->grid()->addWidget(new QLabel(tr("Estimate:"), m_controls), 0, 4);
    m_controls->grid()->addWidget(m_method, 0, 5);
    connect(m_method, &QComboBox::activated, this, [this](int i) {
        editSpec([this, i](ViewSpec &s) { s.set(kAttribution, m_method->itemData(i).toString().toStdString()); });
    });

    m_options = new QWidget(this);
    auto *row = new QHBoxLayout(m_options);
    row->setContentsMargins(0, 0, 0, 0);
    m_steps = new QSpinBox(m_options);
    m_steps->setRange(1, 100);
    m_steps->setToolTip(tr("EAP-IG: the gradients averaged, at α = (k − ½)/steps of the way from the corrupted to "
                           "the clean embedding (spec key ig_steps)"));
    m_keep = new QSlider(Qt::Horizontal, m_options);
    m_keep->setToolTip(tr("Keep the largest edges: the circuit is those edges carrying what their senders compute, "
                          "every other edge its sender's corrupted output (spec key keep_edges)"));
    m_keep->setPageStep(1);
    m_kept = new QLabel(m_options);
    m_export = new QPushButton(tr("Export JSON…"), m_options);
    m_export->setToolTip(tr("Save the graph: every node and edge with its estimate, the kept circuit and the "
                            "faithfulness curve"));
    row->addWidget(new QLabel(tr("Steps:"), m_options));
    row->addWidget(m_steps);
    row->addSpacing(12);
    row->addWidget(new QLabel(tr("Keep:"), m_options));
    row->addWidget(m_keep, 2);
    row->addWidget(m_kept, 3);
    row->addWidget(m_export);
    connect(m_steps, &QSpinBox::editingFinished, this,
        [this] { editSpec([this](ViewSpec &s) { s.set(kIgSteps, m_steps->value()); }); });
    connect(m_keep, &QSlider::valueChanged, this, [this](int stop) {
        if (m_drawn && stop >= 0 && stop < int(m_drawn->stops.size()))
            editSpec([this, stop](ViewSpec &s) { s.set(kKeepEdges, m_drawn->stops[size_t(stop)]); });
    });
    connect(m_export, &QPushButton::clicked, this, &CircuitView::exportJson);

    m_formula = newFormulaLabel();
    m_message = newMessageLabel();
    m_running
        = new RunningRow(this, tr("%v of %m passes"), tr("Stop the work; change a setting to run it again"), this);

    m_body = new QWidget(this);
    auto *body = new QHBoxLayout(m_body);
    body->setContentsMargins(0, 0, 0, 0);
    m_graph = new CircuitPlot(m_body);
    m_curve = new QCustomPlot(m_body);
    m_curve->setMinimumWidth(220);
    m_curve->setMinimumHeight(200);
    body->addWidget(m_graph, 3);
    body->addWidget(m_curve, 1);
    m_graph->edgeClicked = [this](int edge) {
        if (m_drawn)
            editSpec([this, edge](ViewSpec &s) { s.set(kEdge, edgeKey(m_drawn->graph, edge)); });
    };
    // A head opens in the Attention view, a feed-forward in the Sparse FFN view, the logits in the Next token view.
    m_graph->nodeClicked = [this](int node) {
        if (!m_drawn || node == 0)
            return;
        ViewSpec spec = m_spec;
        if (node == -2) {
            spec.view = "next-token";
            spec.position = m_drawn->position;
        } else {
            const CircuitNode &n = m_drawn->graph.senders[size_t(node)];
            spec.view = n.kind == CircuitNode::Kind::Head ? "attention" : "sparse-ffn";
            spec.site = "self";
            spec.layer = n.layer;
            if (n.kind == CircuitNode::Kind::Head)
                spec.head = n.head;
        }
        emit specEdited(spec);
    };
    m_caption = new QLabel(this);
    m_caption->setWordWrap(true);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_options);
    layout->addWidget(m_formula);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_running);
    layout->addWidget(m_body, 1);
    layout->addWidget(m_caption);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString CircuitView::message() const
{
    return m_body->isHidden() ? m_message->text() : QString();
}

QString CircuitView::caption() const
{
    return m_caption->text();
}

QString CircuitView::keptText() const
{
    return m_kept->text();
}

std::string CircuitView::graphJson() const
{
    return m_drawn ? circuitJson(*m_drawn, m_drawnKept) : std::string();
}

void CircuitView::showMessage(const QString &text, bool running)
{
    m_message->setFont(sizedFont(font(), 12));
    setMessageText(m_message, text);
    m_message->show();
    m_running->setVisible(running);
    m_body->hide();
    m_caption->hide();
    m_drawn.reset();
    m_export->setEnabled(false);
}

void CircuitView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    m_caption->setFont(sizedFont(font(), 10));
    m_controls->showSpec(m_spec, int(m_input.tokens.size()));
    const bool ig = m_spec.get(kAttribution) == "eap-ig";
    {
        const QSignalBlocker block(m_method), blockSteps(m_steps);
        m_method->setCurrentIndex(std::max(0, m_method->findData(QString::fromStdString(m_spec.get(kAttribution)))));
        m_steps->setValue(m_spec.get(kIgSteps));
        m_steps->setEnabled(ig);
    }
    const bool difference = !m_spec.get(corruptionkeys::kContrast).empty();
    m_formula->setText(
        tr("An edge u → v carries what sender u writes into the stream to the receiver v reading it later (a head's "
           "q, k or v, a feed-forward, the logits). Its effect is estimated as (a_u(clean) − a_u(corrupted)) · "
           "∂m/∂x_v%1, m = %2 at the position. The circuit keeps the largest edges; every other edge carries its "
           "sender's corrupted output, and the curve is the metric that circuit gives: (m − m_corrupted) / (m_clean "
           "− m_corrupted).")
            .arg(ig ? tr(", the gradient averaged over %1 inputs between the corrupted and the clean embedding")
                          .arg(m_spec.get(kIgSteps))
                    : tr(" at the corrupted run"),
                difference ? tr("logit(target) − logit(contrast)") : tr("p(target)")));
    const auto *a = currentAnalysis<CircuitViewAnalysis>();
    if (!a) {
        if (!m_input.analysis.problem.isEmpty())
            return showMessage(m_input.analysis.problem);
        if (!m_input.analysis.pending)
            return showMessage(QString::fromUtf8(kNothingComputed));
        m_running->setProgress(m_input.analysis.done, std::max(1, m_input.analysis.total));
        return showMessage(tr("Finding the circuit…"), true);
    }
    const CircuitScores &s = *a->scores;
    m_drawn = a->scores;
    const int stop = s.nearestStop(m_spec.get(kKeepEdges));
    m_drawnKept = s.stops[size_t(stop)];
    {
        const QSignalBlocker block(m_keep);
        m_keep->setRange(0, int(s.stops.size()) - 1);
        m_keep->setValue(stop);
    }
    const int E = int(s.graph.edges.size());
    m_kept->setText(tr("%1 of %2 edges: the circuit recovers %3")
                        .arg(m_drawnKept)
                        .arg(E)
                        .arg(formatPercent(s.recovered(s.kept[size_t(stop)]))));
    m_graph->setCircuit(a->scores, m_drawnKept, a->edge, m_spec.theme);
    drawCurve(s, stop);
    const QString target = vocabularyLabel(m_input, a->target);
    const QString passes = ig
        ? tr("EAP-IG: %1 forward and backward passes between the two runs").arg(s.attribution.backwardPasses)
        : tr("EAP: one backward pass from the corrupted run");
    QString text
        = tr("m = %1 at position %2: clean %3, corrupted %4. %5, then a run for each of the curve's %6 "
             "circuits: %7 s.")
              .arg(difference ? tr("logit('%1') − logit('%2')").arg(target, vocabularyLabel(m_input, a->contrast))
                              : tr("p('%1')").arg(target))
              .arg(s.position)
              .arg(formatNumber(s.clean, 4), formatNumber(s.corrupted, 4), passes)
              .arg(s.stops.size())
              .arg(formatNumber(a->milliseconds / 1000.0, 3));
    if (m_input.model
        && (m_input.model->config.layerNorm == LayerNormPlacement::Sandwich
            || m_input.model->config.layerNorm == LayerNormPlacement::AfterSublayer))
        text += tr(" A norm follows each sub-layer here: a head writes its share of the norm of the heads' summed "
                   "output, the norm's scale taken from the run.");
    if (a->edge >= 0) {
        const double estimate = s.attribution.score[size_t(a->edge)];
        text += tr(" Edge %1: estimated %2 of clean − corrupted; patched alone exactly, %3; by path patching "
                   "(every other head frozen, the feed-forwards recomputed), %4.")
                    .arg(QString::fromStdString(s.graph.edgeName(a->edge)),
                        formatPercent(estimate / (s.clean - s.corrupted)), formatPercent(s.recovered(a->edgeMetric)),
                        formatPercent(s.recovered(a->pathMetric)));
    } else {
        text += tr(" Click an edge to patch it exactly.");
    }
    m_caption->setText(text);
    m_export->setEnabled(true);
    m_message->hide();
    m_running->hide();
    m_body->show();
    m_caption->show();
}

void CircuitView::drawCurve(const CircuitScores &s, int stop)
{
    m_curve->clearGraphs();
    m_curve->clearItems();
    applyPlotTheme(m_curve, m_spec.theme);
    const ThemeColors colors = themeColors(m_spec.theme);
    QVector<double> x, y;
    for (size_t i = 1; i < s.stops.size(); ++i) { // from 1 edge: the axis is logarithmic
        x << s.stops[i];
        y << s.recovered(s.kept[i]);
    }
    QCPGraph *g = m_curve->addGraph();
    g->setData(x, y, true);
    g->setPen(QPen(colors.accent, 2));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    QCPGraph *here = m_curve->addGraph();
    if (stop > 0)
        here->setData({double(s.stops[size_t(stop)])}, {s.recovered(s.kept[size_t(stop)])});
    here->setLineStyle(QCPGraph::lsNone);
    here->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(palette::selected), 10));
    m_curve->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_curve->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    m_curve->xAxis->setRange(0.8, std::max(2.0, double(s.stops.back()) * 1.25));
    double low = 0, high = 1;
    for (double v : y) {
        low = std::min(low, v);
        high = std::max(high, v);
    }
    m_curve->yAxis->setRange(low - 0.05, high + 0.05);
    m_curve->xAxis->setLabel(tr("edges kept"));
    m_curve->yAxis->setLabel(tr("faithfulness (recovered)"));
    const QFont ticks = sizedFont(font(), 9), labels = sizedFont(font(), 10);
    for (QCPAxis *axis : {m_curve->xAxis, m_curve->yAxis}) {
        axis->setTickLabelFont(ticks);
        axis->setLabelFont(labels);
    }
    m_curve->replot(QCustomPlot::rpQueuedReplot);
}

void CircuitView::exportJson()
{
    if (!m_drawn)
        return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the circuit"), QStringLiteral("circuit.json"), tr("JSON (*.json)"));
    if (path.isEmpty())
        return;
    try {
        writeFileAtomically(path.toStdString(), graphJson());
    } catch (const std::exception &e) {
        QMessageBox::warning(this, tr("Export the circuit"), QString::fromStdString(e.what()));
    }
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::circuit::makeView(QWidget *parent)
{
    return std::make_unique<CircuitView>(parent);
}
