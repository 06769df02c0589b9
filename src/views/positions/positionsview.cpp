#include "positions/positionsview.h"

#include "positions/positions.h"
#include "views/heatmapplot.h"
#include "views/plottheme.h"
#include "views/plottitle.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

namespace atlas {

PositionsView::PositionsView(QWidget *parent)
    : View(parent)
    , m_encoding(new HeatmapPlot(this))
    , m_similarity(new HeatmapPlot(this))
{
    m_formula = newFormulaLabel();
    m_message = newMessageLabel();
    m_plots = new QWidget(this);
    m_curves = new QCustomPlot(m_plots);
    m_rotation = new QCustomPlot(m_plots);
    for (QWidget *plot : {static_cast<QWidget *>(m_encoding), static_cast<QWidget *>(m_similarity)})
        plot->setMinimumSize(240, 220);
    m_curves->setMinimumSize(240, 150);
    m_rotation->setMinimumSize(240, 150);
    auto *heatmaps = new QHBoxLayout;
    heatmaps->addWidget(m_encoding, 1);
    heatmaps->addWidget(m_similarity, 1);
    auto *column = new QVBoxLayout(m_plots);
    column->setContentsMargins(0, 0, 0, 0);
    column->addLayout(heatmaps, 3);
    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_curves, 1);
    bottom->addWidget(m_rotation, 1);
    column->addLayout(bottom, 2);
    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    m_runWith = new QComboBox(m_controls);
    m_runWith->addItem(tr("its own encoding"), QString());
    for (const char *kind : {"sinusoidal", "rope", "rope-half", "alibi", "none"})
        m_runWith->addItem(QString::fromLatin1(kind), QString::fromLatin1(kind));
    m_runWith->setToolTip(tr("Run the model's weights with another positional encoding (one without parameters): "
                             "every tab then shows what it changes, the Attention tab first"));
    row->addWidget(new QLabel(tr("Run the model with:"), m_controls));
    row->addWidget(m_runWith);
    row->addStretch(1);
    connect(m_runWith, &QComboBox::activated, this, [this](int index) {
        const std::string kind = m_runWith->itemData(index).toString().toStdString();
        if (kind == m_spec.positions)
            return;
        m_spec.positions = kind;
        emit specEdited(m_spec);
    });
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_formula);
    layout->addWidget(m_controls);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_plots, 1);

    m_curves->plotLayout()->insertRow(0);
    m_curvesTitle = new PlotTitle(m_curves, QString(), sizedFont(m_curves->font(), 11, true));
    m_curves->plotLayout()->addElement(0, 0, m_curvesTitle);
    legendUnderAxes(m_curves, 4);
    m_rotation->plotLayout()->insertRow(0);
    m_rotationTitle = new PlotTitle(m_rotation, QString(), sizedFont(m_rotation->font(), 11, true));
    m_rotation->plotLayout()->addElement(0, 0, m_rotationTitle);
    m_rotation->xAxis->setVisible(false);
    m_rotation->yAxis->setVisible(false);
    connect(m_rotation, &QCustomPlot::afterLayout, this, &PositionsView::keepRotationRound);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString PositionsView::formula() const
{
    return m_formula->text();
}

QString PositionsView::message() const
{
    return m_plots->isHidden() ? m_message->text() : QString();
}

void PositionsView::showMessage(const QString &text)
{
    m_message->setFont(sizedFont(font(), 12));
    m_message->setText(text);
    m_message->show();
    m_plots->hide();
}

void PositionsView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    if (const int index = m_runWith->findData(QString::fromStdString(m_spec.positions)); index >= 0) {
        const QSignalBlocker block(m_runWith);
        m_runWith->setCurrentIndex(index);
    }
    const auto *analysis = currentAnalysis<PositionsAnalysis>();
    if (analysis == nullptr) {
        m_formula->clear();
        return showMessage(!m_input.analysis.problem.isEmpty() ? m_input.analysis.problem
                : m_input.analysis.pending                     ? tr("Computing…")
                                                               : QString::fromUtf8(kNothingComputed));
    }
    const PositionProfile &p = analysis->profile;
    m_formula->setText(p.nopeLayer
            ? QString::fromStdString(p.formula) // "layer 3 (NoPE): …", no kind to name
            : tr("%1 positions:  %2")
                  .arg(QString::fromStdString(positionKindName(p.kind)), QString::fromStdString(p.formula)));
    if (p.nopeLayer)
        return showMessage(tr("Layer %1 is a NoPE layer: it does not turn its queries and keys, so its scores compare "
                              "content only. It knows the order of the tokens only through the causal mask and what "
                              "earlier layers wrote into the stream. SmolLM3 leaves RoPE out of every fourth layer, "
                              "which its authors found helps on long texts (after Yang et al. 2025, \"RoPE to NoPE "
                              "and back again\"). Choose another layer to see its rotation.")
                               .arg(m_spec.layer));
    if (p.encoding.empty())
        return showMessage(tr("This model has no positions: nothing tells attention where a token stands (a causal "
                              "mask only says which tokens came before). In a bidirectional model, permuting the input "
                              "permutes the output, row for row."));
    m_message->hide();
    m_plots->show();
    const QStringList positions = numberedLabels(p.length);
    auto owner = std::make_shared<PositionsAnalysis>(*analysis); // keeps the matrices alive while shown
    for (HeatmapPlot *plot : {m_encoding, m_similarity}) {
        plot->setTheme(m_spec.theme);
        plot->setColormap(m_spec.colormap);
    }
    const Tensor &e = owner->profile.encoding;
    const bool scoreTerm = p.kind == PositionKind::Alibi || p.kind == PositionKind::T5 || p.kind == PositionKind::Shaw;
    // A causal model's keys after the query are masked: drawn in the masked style, as on the Attention tab.
    auto masked = std::make_shared<std::vector<float>>();
    if (scoreTerm && m_input.causal) {
        masked->assign(size_t(e.numel()), 0.0f);
        for (int64_t i = 0; i < e.dim(0); ++i)
            for (int64_t j = i + 1; j < e.dim(1); ++j)
                (*masked)[size_t(i * e.dim(1) + j)] = -std::numeric_limits<float>::infinity();
    }
    m_encoding->setMaskedScores(masked->empty() ? nullptr : masked->data());
    m_encoding->setMatrix(e.data(), int(e.dim(0)), int(e.dim(1)),
        std::make_shared<std::pair<std::shared_ptr<PositionsAnalysis>, std::shared_ptr<std::vector<float>>>>(
            owner, masked));
    m_encoding->setIndexInLabels(false);
    m_encoding->setLabels(positions, numberedLabels(int(e.dim(1))));
    m_encoding->setTitle(QString::fromStdString(p.encodingTitle));
    m_encoding->setAxisTitles(
        QString::fromStdString(p.encodingColumns), scoreTerm ? tr("query position i") : tr("position t"));
    m_encoding->setValueLabel(tr("value"));
    if (owner->profile.similarity.empty()) {
        m_similarity->hide();
    } else {
        const Tensor &s = owner->profile.similarity;
        m_similarity->show();
        m_similarity->setMatrix(s.data(), int(s.dim(0)), int(s.dim(1)), owner);
        m_similarity->setIndexInLabels(false);
        m_similarity->setLabels(positions, positions);
        m_similarity->setTitle(QString::fromStdString(p.similarityTitle));
        m_similarity->setAxisTitles(tr("position s"), tr("position t"));
        m_similarity->setValueLabel(tr("similarity"));
    }
    drawCurves(p);
    drawRotation(p);
}

void PositionsView::drawRotation(const PositionProfile &p)
{
    m_rotation->clearItems();
    m_rotation->setVisible(!p.rotatedPairs.empty());
    if (p.rotatedPairs.empty())
        return;
    applyPlotTheme(m_rotation, m_spec.theme);
    const QColor text = themeColors(m_spec.theme).text, grid = themeColors(m_spec.theme).axis;
    const QColor qColour = seriesColours().at(0), kColour = seriesColours().at(1);
    const QStringList labels = tokenLabels(m_input, p.length);
    m_rotationTitle->setText(tr("RoPE turns query %1 '%2' by %1·θⱼ and its most-attended key %3 '%4' by "
                                "%3·θⱼ\n(dashed: before the turn, solid: after)")
                                 .arg(p.query)
                                 .arg(labels.value(p.query))
                                 .arg(p.key)
                                 .arg(labels.value(p.key)));
    m_rotationTitle->setFont(sizedFont(font(), 10, true));
    m_rotationTitle->setTextColor(text);
    const double gap = 2.7;
    const auto arrow = [&](double cx, const double *v, double scale, const QColor &colour, bool dashed) {
        auto *line = new QCPItemLine(m_rotation);
        line->start->setCoords(cx, 0);
        line->end->setCoords(cx + v[0] * scale, v[1] * scale);
        QPen pen(colour, dashed ? 1.5 : 2.5);
        if (dashed)
            pen.setStyle(Qt::DashLine);
        line->setPen(pen);
        line->setHead(dashed ? QCPLineEnding::esNone : QCPLineEnding::esSpikeArrow);
    };
    for (size_t n = 0; n < p.rotatedPairs.size(); ++n) {
        const PositionProfile::RotatedPair &r = p.rotatedPairs[n];
        const double cx = gap * double(n);
        const double longest = std::max({std::hypot(r.q[0], r.q[1]), std::hypot(r.k[0], r.k[1]), 1e-9});
        auto *circle = new QCPItemEllipse(m_rotation);
        circle->topLeft->setCoords(cx - 1, 1);
        circle->bottomRight->setCoords(cx + 1, -1);
        circle->setPen(QPen(grid, 1));
        arrow(cx, r.q, 1 / longest, qColour, true);
        arrow(cx, r.k, 1 / longest, kColour, true);
        arrow(cx, r.qRot, 1 / longest, qColour, false);
        arrow(cx, r.kRot, 1 / longest, kColour, false);
        auto *caption = new QCPItemText(m_rotation);
        caption->position->setCoords(cx, -1.15);
        caption->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
        caption->setFont(sizedFont(font(), 9));
        caption->setColor(text);
        const double degrees = 180.0 / M_PI;
        caption->setText(tr("pair %1, θ = %2\nq +%3°  k +%4°")
                             .arg(n)
                             .arg(formatNumber(r.theta, 3))
                             .arg(formatNumber(std::round(std::fmod(p.query * r.theta * degrees, 360.0))),
                                 formatNumber(std::round(std::fmod(p.key * r.theta * degrees, 360.0)))));
    }
    auto *legend = new QCPItemText(m_rotation);
    legend->position->setCoords(-1.1, 1.15);
    legend->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    legend->setFont(sizedFont(font(), 9));
    legend->setColor(text);
    legend->setText(tr("blue: the query's pair · orange: the key's pair"));
    m_rotationWidth = gap * double(p.rotatedPairs.size() - 1) + 2.4;
    m_rotation->replot();
}

void PositionsView::keepRotationRound()
{
    // Runs after each layout, before drawing: the axis with fewer units per pixel widens to match the other, so the
    // circles stay round and everything still fits at any size.
    const QRect area = m_rotation->axisRect()->rect();
    const double width = m_rotationWidth, height = 3.4;
    const double perPixel = std::max(width / std::max(1, area.width()), height / std::max(1, area.height()));
    const double x = perPixel * area.width(), y = perPixel * area.height();
    m_rotation->xAxis->setRange(-1.2 - (x - width) / 2, -1.2 + width + (x - width) / 2);
    m_rotation->yAxis->setRange(-1.9 - (y - height) / 2, 1.5 + (y - height) / 2);
}

void PositionsView::drawCurves(const PositionProfile &p)
{
    m_curves->clearGraphs();
    applyPlotTheme(m_curves, m_spec.theme);
    const QList<QColor> &colours = seriesColours();
    if (!p.wavelengths.empty()) {
        QVector<double> x, y;
        for (size_t j = 0; j < p.wavelengths.size(); ++j) {
            x << double(j);
            y << p.wavelengths[j];
        }
        QCPGraph *g = m_curves->addGraph();
        g->setName(tr("wavelength 2π/θⱼ"));
        g->setData(x, y, true);
        g->setPen(QPen(colours.value(0), 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        m_curves->yAxis->setScaleType(QCPAxis::stLogarithmic);
        m_curves->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        m_curves->yAxis->setNumberFormat("gb");
        m_curves->xAxis->setLabel(tr("pair j"));
        setIntegerTicks(m_curves->xAxis); // pairs are whole numbers, however few the model turns
        m_curves->yAxis->setLabel(tr("positions per turn"));
        m_curvesTitle->setText(tr("Each pair turns at its own rate: short wavelengths\ntell neighbours apart, "
                                  "long ones tell far positions apart"));
        m_curves->xAxis->setRange(-0.5, double(p.wavelengths.size()) - 0.5);
        m_curves->yAxis->setRange(y.first() * 0.7, y.last() * 1.4);
    } else if (!p.biasByDistance.empty()) {
        m_curves->yAxis->setScaleType(QCPAxis::stLinear);
        m_curves->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        m_curves->yAxis->setNumberFormat("g");
        double lo = 0, hi = 0;
        for (size_t h = 0; h < p.biasByDistance.size(); ++h) {
            QVector<double> x, y;
            for (size_t d = 0; d < p.biasByDistance[h].size(); ++d) {
                x << double(d);
                y << p.biasByDistance[h][d];
                lo = std::min(lo, y.last());
                hi = std::max(hi, y.last());
            }
            QCPGraph *g = m_curves->addGraph();
            g->setName(tr("head %1").arg(h));
            g->setData(x, y, true);
            g->setPen(QPen(colours.value(int(h) % colours.size()), 2));
        }
        m_curves->xAxis->setLabel(tr("distance i − j of the key behind the query"));
        setIntegerTicks(m_curves->xAxis);
        m_curves->yAxis->setLabel(tr("added to the score"));
        m_curvesTitle->setText(p.kind == PositionKind::Alibi
                ? tr("ALiBi: each head forgets the past at its own slope")
                : tr("T5: one learned bias per distance bucket and head, exact nearby, coarse far away"));
        m_curves->xAxis->setRange(0, std::max(1, p.length - 1));
        m_curves->yAxis->setRange(lo - 0.05 * (hi - lo + 1e-3), hi + 0.05 * (hi - lo + 1e-3));
    }
    m_curves->setVisible(m_curves->graphCount() > 0);
    m_curvesTitle->setFont(sizedFont(font(), 11, true));
    m_curves->legend->setVisible(m_curves->graphCount() > 1 && m_curves->graphCount() <= 16);
    m_curves->replot();
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::positions::makeView(QWidget *parent)
{
    return std::make_unique<PositionsView>(parent);
}
