#include "attentionmap/attentionview.h"
#include "attentionmap/attentionmap.h"

#include "engine/attentiontrace.h"
#include "trace/names.h"

#include "views/heatmapplot.h"
#include "views/pooledhead.h"

#include "util/error.h"

#include <QElapsedTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>
#include <vector>

namespace atlas {

namespace {

QString percent(float share)
{
    return QString::number(100.0 * double(share), 'f', 0) + QStringLiteral(" %");
}

} // namespace

AttentionView::AttentionView(QWidget *parent)
    : View(parent)
    , m_plot(new HeatmapPlot(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setValueLabel(tr("probability"));
    m_plot->setHoverText([this](int row, int col) { return cellText(row, col); });
}

QString AttentionView::cellText(int row, int col) const
{
    if (m_sinkColumn && col == 0) {
        const Tensor *shares = findSinkShares(m_input, m_spec.layer, m_input.heads, int(m_input.tokens.size()));
        if (shares == nullptr || row < 0 || row >= shares->dim(1))
            return {};
        return tr("query %1: the head's sink took %2 of this row (a learned logit in the softmax, with no value)")
            .arg(row)
            .arg(QString::number(double(shares->matrix()(m_spec.head, row)), 'g', 4));
    }
    if (m_sinkColumn)
        --col;
    const QString cell = attentionCellText(m_input, m_spec.layer, m_spec.head, row, col, true);
    return cell.isEmpty() ? cell : cellPrefix(m_input, row, col) + QLatin1Char(':') + cell;
}

void AttentionView::refresh()
{
    QElapsedTimer timer;
    timer.start();
    layOutHidden(this);
    QString problem;
    m_sinkColumn = false; // until a sink's shares are drawn
    try {
        m_plot->setColormap(m_spec.colormap);
    } catch (const Error &e) {
        problem = QString::fromStdString(e.what());
    }
    m_plot->setTheme(m_spec.theme);
    m_plot->setLogScale(m_spec.scale == "log");
    if (m_input.site.cross)
        m_plot->setAxisTitles(tr("key: source token (encoder output)"), tr("query: decoder token"));
    else
        m_plot->setAxisTitles(tr("key"), tr("query"));
    const QString site = siteTitle(m_input);
    const QString shared = sharedKeyValueText(m_input, m_spec.head);
    m_plot->setTitle(
        (site.isEmpty()
                ? tr("Layer %1 \u00B7 Head %2 \u00B7 attention probabilities").arg(m_spec.layer).arg(m_spec.head)
                : tr("%1 \u00B7 layer %2 \u00B7 head %3 \u00B7 probabilities")
                      .arg(site)
                      .arg(m_spec.layer)
                      .arg(m_spec.head))
        + (shared.isEmpty() ? QString() : QStringLiteral(" (") + shared + QLatin1Char(')')));
    std::shared_ptr<const AttentionReadout> pooled
        = problem.isEmpty() ? largeHeadReadout(m_input, m_spec.layer, m_spec.head) : nullptr;
    if (pooled) {
        drawPooledHead(std::move(pooled));
    } else {
        const HeadMatrix probs = problem.isEmpty()
            ? findHeadMatrix(m_input, m_spec.layer, "attn.probs", m_spec.head, &problem)
            : HeadMatrix {};
        drawHead(probs, probs ? findMaskedCells(m_input, m_spec.layer, m_spec.head) : HeadMatrix {}, problem);
    }
    m_lastRefreshMicros = static_cast<int>(timer.nsecsElapsed() / 1000);
}

bool AttentionView::drawing() const
{
    return m_plot->pooling();
}

void AttentionView::finishDrawing()
{
    m_plot->finishPooling();
}

// The labels, the notes and the axis titles of a head of `tokens` queries × `keys` keys whose first key takes
// `first` of the later rows (−1: not shown); with a sink's `shares` ([H, T]) the sink's column comes first.
void AttentionView::describeHead(int tokens, int keys, float first, const Tensor *shares)
{
    const QString sparse = sparseNormaliserName(m_input);
    m_plot->setExactZeroNote(sparse.isEmpty() ? QString() : tr("\u25A7 exactly 0, not masked (%1)").arg(sparse));
    m_sinkColumn = shares != nullptr;
    QStringList labels = keyLabels(m_input, keys);
    if (m_sinkColumn) {
        labels.prepend(tr("sink"));
        const QString average = percent(shares->matrix().row(m_spec.head).mean());
        m_plot->setAxisTitles(first < 0
                ? tr("key (first column: the head's sink, %1 of a row on average)").arg(average)
                : tr("key (first column: the head's sink, %1 of a row on average; the first token takes %2 of the "
                     "later rows)")
                      .arg(average)
                      .arg(percent(first)),
            tr("query"));
    } else if (first >= 0 && !m_input.site.cross) {
        m_plot->setAxisTitles(tr("key (the first token, where many models park attention, takes %1 of the later rows)")
                                  .arg(percent(first)),
            tr("query"));
    }
    m_plot->setLabels(tokenLabels(m_input, tokens), labels);
}

// A head too large to hold, pooled to the plot's pixels from its tiles on the plot's worker; a sink's shares fill
// the first column. The tooltip reads each cell exactly from the same readout.
void AttentionView::drawPooledHead(std::shared_ptr<const AttentionReadout> readout)
{
    const int tokens = int(readout->queries()), keys = int(readout->keys()), head = m_spec.head;
    std::vector<float> firstColumn(static_cast<size_t>(tokens));
    readout->tile(firstColumn.data(), 1, ops::ScoreStage::Probs, head, 0, tokens, 0, 1);
    const Tensor *shares = findSinkShares(m_input, m_spec.layer, m_input.heads, tokens);
    describeHead(tokens, keys, firstKeyShare({firstColumn.data(), tokens, 1, nullptr}), shares);
    std::vector<float> sinkShares;
    if (shares)
        sinkShares.assign(
            shares->data() + size_t(head) * size_t(tokens), shares->data() + size_t(head + 1) * size_t(tokens));
    m_plot->setMaskedScores(nullptr);
    m_plot->setPooledSource(tokens, keys + (shares ? 1 : 0),
        pooledHeadSource(std::move(readout), m_input.trace, ops::ScoreStage::Probs, ops::PoolCells::Seen, head,
            std::move(sinkShares)),
        tr("Computing head %1 of layer %2 from its queries and keys (%3 \u00D7 %3)\u2026")
            .arg(head)
            .arg(m_spec.layer)
            .arg(tokens));
    m_plot->setMarkedRow(m_spec.query);
    m_plot->setVeiledRow(m_spec.get(views::attentionmap::kVeilQuery) ? m_spec.query : -1);
}

// The head's probabilities, with the cells its mask hides (−∞), or `problem` (a "not computed" text when empty).
void AttentionView::drawHead(const HeadMatrix &probs, const HeadMatrix &masked, const QString &problem)
{
    if (!probs) {
        m_plot->showMessage(problem.isEmpty()
                ? notComputedText(m_input, siteTensorName(m_input, m_spec.layer, "attn.probs"))
                : problem);
    } else {
        const int tokens = probs.rows, keys = probs.cols;
        const Tensor *shares = findSinkShares(m_input, m_spec.layer, m_input.heads, tokens);
        describeHead(tokens, keys, firstKeyShare(probs), shares);
        const float *maskedScores = masked && masked.rows == tokens && masked.cols == keys ? masked.data : nullptr;
        if (m_sinkColumn) { // the sink first, then the keys, as one matrix the plot keeps alive
            const int cols = keys + 1;
            auto cells = std::make_shared<std::vector<float>>(size_t(2 * tokens * cols), 0.0f);
            for (int r = 0; r < tokens; ++r) {
                float *row = cells->data() + size_t(r * cols), *maskRow = row + size_t(tokens * cols);
                row[0] = shares->matrix()(m_spec.head, r);
                std::copy(probs.data + size_t(r) * size_t(keys), probs.data + size_t(r + 1) * size_t(keys), row + 1);
                if (maskedScores)
                    std::copy(maskedScores + size_t(r) * size_t(keys), maskedScores + size_t(r + 1) * size_t(keys),
                        maskRow + 1);
            }
            m_plot->setMaskedScores(maskedScores ? cells->data() + size_t(tokens * cols) : nullptr);
            m_plot->setMatrix(cells->data(), tokens, cols, cells);
        } else {
            m_plot->setMaskedScores(maskedScores);
            // the plot keeps both alive: an on-demand head's matrices are its own
            m_plot->setMatrix(probs.data, tokens, keys,
                std::make_shared<std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(
                    probs.owner, masked.owner));
        }
        m_plot->setMarkedRow(m_spec.query);
        m_plot->setVeiledRow(m_spec.get(views::attentionmap::kVeilQuery) ? m_spec.query : -1);
    }
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::attentionmap::makeView(QWidget *parent)
{
    return std::make_unique<AttentionView>(parent);
}
