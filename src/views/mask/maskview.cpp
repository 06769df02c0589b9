#include "mask/maskview.h"

#include "views/viewfonts.h"

#include "trace/names.h"

#include "views/plottheme.h"

#include "views/colormaps.h"
#include "views/heatmapplot.h"
#include "views/palette.h"
#include "views/pooledhead.h"

#include <qcustomplot.h>

#include "analysis/attentionmask.h"
#include "attention/attentionkernel.h"
#include "engine/attentiontrace.h"
#include "util/error.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace atlas {

MaskView::MaskView(QWidget *parent)
    : View(parent)
    , m_scores(new HeatmapPlot(this))
    , m_mask(new HeatmapPlot(this))
    , m_probs(new HeatmapPlot(this))
    , m_cap(new QCustomPlot(this))
    , m_caption(new QLabel(this))
{
    auto *panels = new QHBoxLayout;
    panels->setSpacing(4);
    for (HeatmapPlot *plot : {m_scores, m_mask, m_probs})
        panels->addWidget(plot, 1);
    m_cap->hide(); // under the maps, beside the caption: a projector's width holds the three maps and no fourth
    m_cap->plotLayout()->insertRow(0);
    m_capTitle = new QCPTextElement(m_cap, tr("The cap and the head's scores"));
    m_cap->plotLayout()->addElement(0, 0, m_capTitle);
    m_cap->setToolTip(tr("The soft-cap c·tanh(s/c) (solid) against no cap (dashed), with every score of this head "
                         "at (s, c·tanh(s/c)): scores far beyond ±c all land near ±c."));
    auto *under = new QHBoxLayout;
    under->addWidget(m_caption, 1);
    under->addWidget(m_cap);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(panels, 1);
    layout->addLayout(under);

    m_scores->setValueLabel(tr("score"));
    m_mask->setTitle(tr("Mask (\u2212\u221E = not allowed)"));
    m_mask->setMaskMode(true);
    m_mask->setValueLabel(tr("mask M"));
    m_probs->setTitle(tr("Probabilities after softmax"));
    m_probs->setValueLabel(tr("probability"));
    m_scores->setHoverText([this](int r, int c) {
        if (!capped())
            return valueText("attn.scores", tr("score"), r, c);
        const QString before = cellNumber("attn.scores", r, c), after = cellNumber("attn.capped", r, c);
        if (before.isEmpty() || after.isEmpty())
            return QString();
        return cellPrefix(m_input, r, c) + tr(": score %1 → soft-capped %2").arg(before, after);
    });
    m_mask->setHoverText([this](int r, int c) { return maskText(r, c); });
    m_probs->setHoverText([this](int r, int c) { return valueText("attn.probs", tr("probability"), r, c); });

    m_caption->setAlignment(Qt::AlignCenter);
    m_caption->setWordWrap(true);
    setAutoFillBackground(true);
    applyTheme();
}

QString MaskView::cellNumber(const char *suffix, int row, int col) const
{
    float value = 0;
    return findHeadCell(m_input, m_spec.layer, suffix, m_spec.head, row, col, &value) ? formatNumber(value) : QString();
}

QString MaskView::valueText(const char *suffix, const QString &what, int row, int col) const
{
    const QString number = cellNumber(suffix, row, col);
    return number.isEmpty() ? QString() : cellPrefix(m_input, row, col) + QStringLiteral(": %1 %2").arg(what, number);
}

QString MaskView::maskText(int row, int col) const
{
    float v = 0;
    if (!findHeadCell(m_input, m_spec.layer, "attn.masked", m_spec.head, row, col, &v)) {
        QString problem; // an efficient kernel's pattern (1 = attended)
        const Tensor *mask = findHeadTensor(m_input, m_spec.layer, "attn.mask", m_spec.head, &problem);
        if (mask == nullptr || row >= mask->dim(1) || col >= mask->dim(2))
            return {};
        return cellPrefix(m_input, row, col)
            + (mask->slice(m_spec.head)(row, col) > 0 ? tr(": in the kernel's pattern")
                                                      : tr(": outside the kernel's pattern"));
    }
    if (!(std::isinf(v) && v < 0))
        return cellPrefix(m_input, row, col) + tr(": allowed (M = 0, S\u2032 = %1)").arg(formatNumber(v));
    QString why;
    if (isKeyPadding(m_input, col))
        why = m_input.site.cross ? tr(" (the source token is padding)") : tr(" (the key is padding)");
    else if (m_input.causal && col > row)
        why = tr(" (the key is a future token)");
    return cellPrefix(m_input, row, col) + tr(": not allowed (M = \u2212\u221E)") + why;
}

QString MaskView::scoresFormula() const
{
    const ModelConfig *c = m_input.model ? &m_input.model->config : nullptr;
    QString s = !c || (c->scaleScores && c->queryScaleBase <= 0) ? tr("QK\u1D40/\u221Ad")
        : c->scaleScores                                         ? tr("QK\u1D40/\u221As")
                                                                 : tr("QK\u1D40");
    if (c && c->biasesScores() && !m_input.site.cross)
        s += tr(" + B");
    return capped() ? tr("c\u00B7tanh((%1)/c)").arg(s) : s;
}

bool MaskView::capped() const
{
    return m_input.model && m_input.model->config.attentionSoftcap > 0 && !m_input.site.cross;
}

bool MaskView::drawing() const
{
    return m_maskJob.busy() || m_capJob.busy() || m_scores->pooling() || m_mask->pooling() || m_probs->pooling();
}

void MaskView::finishDrawing()
{
    for (HeatmapPlot *plot : {m_scores, m_mask, m_probs})
        plot->finishPooling();
}

void MaskView::showPanel(HeatmapPlot *plot, const char *suffix, ops::ScoreStage stage)
{
    // The probabilities hatch the cells the mask hid, as the Attention view draws them: a masked key is "not
    // attended", not a probability of 0 (sparsemax's exact zeros are that).
    const bool hatchMasked = stage == ops::ScoreStage::Probs;
    plot->setMaskedScores(nullptr);
    QString problem; // the trace's head, or one computed now from a trace that keeps attention on demand
    if (!findHeadTensor(m_input, m_spec.layer, suffix, m_spec.head, &problem) && problem.isEmpty())
        if (auto readout = largeHeadReadout(m_input, m_spec.layer, m_spec.head)) { // pooled from its tiles
            const int tokens = int(readout->queries()), keys = int(readout->keys());
            plot->setLabels(tokenLabels(m_input, tokens), keyLabels(m_input, keys));
            plot->setPooledSource(tokens, keys,
                pooledHeadSource(std::move(readout), m_input.trace, stage,
                    hatchMasked ? ops::PoolCells::Seen : ops::PoolCells::All, m_spec.head));
            return;
        }
    const HeadMatrix head = findHeadMatrix(m_input, m_spec.layer, suffix, m_spec.head, &problem);
    if (!head) {
        plot->showMessage(
            problem.isEmpty() ? notComputedText(m_input, siteTensorName(m_input, m_spec.layer, suffix)) : problem);
        return;
    }
    plot->setLabels(tokenLabels(m_input, head.rows), keyLabels(m_input, head.cols));
    HeadMatrix masked;
    if (hatchMasked) {
        QString none; // a kernel's layer has no attn.masked: its probabilities are drawn as values
        masked = findHeadMatrix(m_input, m_spec.layer, "attn.masked", m_spec.head, &none);
    }
    if (!masked || masked.rows != head.rows || masked.cols != head.cols)
        return plot->setMatrix(head.data, head.rows, head.cols, head.owner);
    plot->setMaskedScores(masked.data);
    plot->setMatrix(head.data, head.rows, head.cols,
        std::make_shared<std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(
            head.owner, masked.owner));
}

void MaskView::refresh()
{
    layOutHidden(this);
    applyTheme();
    m_scores->setTitle(capped() ? tr("Soft-capped scores %1 (before masking)").arg(scoresFormula())
                                : tr("Scores %1 (before masking)").arg(scoresFormula()));
    m_squashed = -1;
    if (capped())
        showCap(); // sets the caption, now or when a worker has read the head
    else
        m_capJob.drop();
    m_cap->setVisible(capped());
    m_caption->setText(captionText());
    for (HeatmapPlot *plot : {m_scores, m_probs}) {
        try {
            plot->setColormap(m_spec.colormap);
        } catch (const Error &e) {
            plot->showMessage(QString::fromStdString(e.what()));
            return;
        }
        plot->setLogScale(m_spec.scale == "log" && plot == m_probs);
    }
    const bool exact = !m_input.program || m_input.site.stack != names::kOnlyStack // kernels: one-stack models only
        || attention::isExactAttention(m_input.program->attentionOf(m_spec.layer));
    if (exact)
        showPanel(m_scores, capped() ? "attn.capped" : "attn.scores",
            capped() ? ops::ScoreStage::Capped : ops::ScoreStage::Scores);
    else
        m_scores->showMessage(tr("This layer runs an efficient attention kernel: it never forms the full matrix of "
                                 "scores. The middle panel shows which keys its pattern lets each query attend, the "
                                 "right one the weights it gives them."));
    showMask(exact ? "attn.masked" : "attn.mask");
    showPanel(m_probs, "attn.probs", ops::ScoreStage::Probs);
}

void MaskView::takeCapCells(CapPoints &points, const float *s, const float *sc, int64_t first, int64_t n, int64_t every)
{
    for (int64_t i = 0; i < n; ++i) {
        if (std::abs(double(s[i]) - double(sc[i])) > std::abs(double(s[i])) / 10)
            ++points.squashed;
        points.reach = std::max(points.reach, 1.05 * std::abs(double(s[i])));
        if ((first + i) % every == 0) {
            points.scores.push_back(s[i]);
            points.capped.push_back(sc[i]);
        }
    }
}

namespace {

constexpr int64_t kCapPointsDrawn = 4000; // the curve is what they show, not each one

} // namespace

void MaskView::showCap()
{
    const double cap = m_input.model->config.attentionSoftcap;
    QString problem;
    if (!findHeadTensor(m_input, m_spec.layer, "attn.scores", m_spec.head, &problem) && problem.isEmpty())
        if (auto readout = largeHeadReadout(m_input, m_spec.layer, m_spec.head)) {
            m_squashed = -1;
            auto build = [readout = std::move(readout), trace = m_input.trace, head = m_spec.head, cap](
                             const std::atomic<bool> &cancel) {
                CapPoints points;
                points.reach = 3.0 * cap;
                points.squashed = 0;
                const int64_t T = readout->queries(), S = readout->keys(), rows = 64;
                const int64_t every = std::max<int64_t>(1, T * S / kCapPointsDrawn);
                try {
                    std::vector<float> s(size_t(rows * S)), sc(size_t(rows * S));
                    for (int64_t r0 = 0; r0 < T && !cancel; r0 += rows) {
                        const int64_t r1 = std::min(T, r0 + rows);
                        readout->tile(s.data(), S, ops::ScoreStage::Scores, head, r0, r1, 0, S);
                        readout->tile(sc.data(), S, ops::ScoreStage::Capped, head, r0, r1, 0, S);
                        takeCapCells(points, s.data(), sc.data(), r0 * S, (r1 - r0) * S, every);
                    }
                } catch (const std::exception &) { // memory: the panel stays empty, the maps say more
                    return CapPoints {};
                }
                return points;
            };
            drawnHeadless(this) ? m_capJob.runNow(build) : m_capJob.start(std::move(build));
            return;
        }
    m_capJob.drop();
    const HeadMatrix scores = findHeadMatrix(m_input, m_spec.layer, "attn.scores", m_spec.head, &problem);
    const HeadMatrix cappedScores = findHeadMatrix(m_input, m_spec.layer, "attn.capped", m_spec.head, &problem);
    CapPoints points;
    if (scores && cappedScores) {
        const int64_t cells = int64_t(scores.rows) * scores.cols;
        points.reach = 3.0 * cap;
        points.squashed = 0;
        takeCapCells(points, scores.data, cappedScores.data, 0, cells, std::max<int64_t>(1, cells / kCapPointsDrawn));
    }
    drawCap(points);
}

void MaskView::drawCap(const CapPoints &p)
{
    m_cap->clearPlottables();
    m_cap->clearItems();
    applyPlotTheme(m_cap, m_spec.theme);
    const double cap = m_input.model->config.attentionSoftcap;
    m_cap->xAxis->setLabel(tr("score s; dashed: no cap"));
    m_cap->yAxis->setLabel(tr("c\u00B7tanh(s/c), c = %1").arg(formatNumber(cap, 3)));
    m_cap->xAxis->ticker()->setTickCount(3); // a narrow panel: a few round ticks
    m_squashed = p.squashed;
    m_caption->setText(captionText());
    if (p.squashed < 0) {
        m_cap->replot();
        return;
    }
    auto *points = new QCPGraph(m_cap->xAxis, m_cap->yAxis);
    points->setData(
        QVector<double>(p.scores.begin(), p.scores.end()), QVector<double>(p.capped.begin(), p.capped.end()));
    points->setLineStyle(QCPGraph::lsNone);
    points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, palette::alert, palette::alert, 5));
    const ThemeColors colors = themeColors(m_spec.theme);
    auto *identity = new QCPGraph(m_cap->xAxis, m_cap->yAxis);
    identity->setData({-p.reach, p.reach}, {-p.reach, p.reach});
    identity->setPen(QPen(colors.muted, 1.2, Qt::DashLine));
    auto *curve = new QCPGraph(m_cap->xAxis, m_cap->yAxis);
    for (int i = 0; i <= 200; ++i) {
        const double x = -p.reach + 2.0 * p.reach * i / 200.0;
        curve->addData(x, cap * std::tanh(x / cap));
    }
    curve->setPen(QPen(palette::tableauPurple, 2.5));
    m_cap->xAxis->setRange(-p.reach, p.reach);
    m_cap->yAxis->setRange(-1.2 * cap, 1.2 * cap);
    m_cap->replot();
}

// The mask M as attentionMask reads it from the trace (the same function `dump` writes attn.mask with): 0 where
// query i may attend key j, −∞ where not.
void MaskView::showMask(const char *source)
{
    QString problem;
    const Tensor *allowed = findHeadTensor(m_input, m_spec.layer, source, m_spec.head, &problem);
    // A trace that keeps attention on demand: the mask from the layer's rule alone, no product (ops::ScoreStage::Mask).
    std::shared_ptr<const AttentionReadout> readout
        = allowed || !problem.isEmpty() ? nullptr : findAttentionReadout(m_input, m_spec.layer);
    if (readout && (m_spec.head < 0 || m_spec.head >= readout->heads())) {
        problem = tr("Head %1 does not exist: layer %2 has %3 heads")
                      .arg(m_spec.head)
                      .arg(m_spec.layer)
                      .arg(readout->heads());
        readout = nullptr;
    }
    if (!allowed && !readout) {
        m_maskJob.drop();
        m_mask->showMessage(
            problem.isEmpty() ? notComputedText(m_input, siteTensorName(m_input, m_spec.layer, source)) : problem);
        return;
    }
    if (readout && readout->queries() * readout->keys() > HeatmapPlot::kPoolOnWorkerCells) { // counted, not made
        m_maskJob.drop();
        const int tokens = int(readout->queries()), keys = int(readout->keys());
        m_mask->setLabels(tokenLabels(m_input, tokens), keyLabels(m_input, keys));
        m_mask->setPooledSource(tokens, keys,
            pooledHeadSource(
                std::move(readout), m_input.trace, ops::ScoreStage::Mask, ops::PoolCells::Seen, m_spec.head));
        return;
    }
    // At thousands of tokens building T² cells takes longer than a frame: a worker does it for a shown view.
    const int64_t cells = allowed ? allowed->dim(1) * allowed->dim(2) : readout->queries() * readout->keys();
    auto build = [trace = m_input.trace, readout, layer = m_spec.layer, head = m_spec.head, site = m_input.site](
                     const std::atomic<bool> &) {
        MaskCells out;
        try {
            const Tensor mask = readout ? readout->head(ops::ScoreStage::Mask, head) // −∞ where not allowed
                                        : attentionMask(*trace, layer, head, site); // 1 where allowed
            out.tokens = static_cast<int>(mask.dim(0));
            out.keys = static_cast<int>(mask.dim(1));
            out.cells = std::make_shared<std::vector<float>>(size_t(out.tokens) * size_t(out.keys));
            for (size_t i = 0; i < out.cells->size(); ++i)
                (*out.cells)[i] = (readout ? std::isfinite(mask.data()[i]) : mask.data()[i] > 0)
                    ? 0.0f
                    : -std::numeric_limits<float>::infinity();
        } catch (const std::exception &e) {
            out.problem = QString::fromStdString(e.what());
        }
        return out;
    };
    if (cells > HeatmapPlot::kPoolOnWorkerCells && !drawnHeadless(this))
        m_maskJob.start(std::move(build));
    else
        m_maskJob.runNow(build);
}

void MaskView::adoptMask(const MaskCells &mask)
{
    if (!mask.cells) {
        m_mask->showMessage(mask.problem);
        return;
    }
    m_mask->setLabels(tokenLabels(m_input, mask.tokens), keyLabels(m_input, mask.keys));
    m_mask->setMatrix(mask.cells->data(), mask.tokens, mask.keys, mask.cells);
}

QString MaskView::captionText() const
{
    QString caption = tr("A = softmax(%1 + M), row by row, where M\u1D62\u2C7C = 0 if query i may "
                         "attend key j and \u2212\u221E if not; exp(\u2212\u221E) = 0, so masked keys get "
                         "probability 0.")
                          .arg(scoresFormula());
    if (capped()) {
        caption += tr(" c = %1 (attn_logit_softcapping): every score lies within \u00B1c.")
                       .arg(formatNumber(m_input.model->config.attentionSoftcap));
        if (m_squashed >= 0)
            caption += tr(" The cap moved %n of this head's scores by more than a tenth.", nullptr, int(m_squashed));
        else if (m_capJob.busy())
            caption += tr(" Reading the head's scores for the cap's panel\u2026");
    }
    if (m_input.site.cross)
        caption += tr(" Cross-attention: the decoder's queries, the encoder's keys; only the source's padding is "
                      "masked, never a later source token.");
    else if (!m_input.causal)
        caption += tr(" Bidirectional: no causal mask, only padding is masked.");
    return caption;
}

void MaskView::applyTheme()
{
    m_caption->setFont(sizedFont(font(), 11));
    applyPlotTheme(m_cap, m_spec.theme);
    for (HeatmapPlot *plot : {m_scores, m_mask, m_probs})
        plot->setTheme(m_spec.theme);
    const ThemeColors colors = themeColors(m_spec.theme);
    m_capTitle->setFont(sizedFont(font(), 12, true));
    m_capTitle->setTextColor(colors.text);
    const QFontMetrics title(m_capTitle->font()); // the panel grows with the fonts (a projector's are larger)
    m_cap->setFixedSize(title.horizontalAdvance(m_capTitle->text()) + 4 * title.height(), 12 * title.height());
    QPalette pal = palette();
    pal.setColor(QPalette::Window, colors.background);
    pal.setColor(QPalette::WindowText, colors.text);
    setPalette(pal);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::mask::makeView(QWidget *parent)
{
    return std::make_unique<MaskView>(parent);
}
