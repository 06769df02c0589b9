#include "logitlens/logitlensview.h"

#include "logitlens/logitlens.h"
#include "trace/names.h"
#include "views/heatmapplot.h"
#include "views/palette.h"
#include "views/viewfonts.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <limits>

namespace atlas {

LogitLensView::LogitLensView(QWidget *parent)
    : View(parent)
{
    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Track a token:"), m_controls));
    m_target = new QLineEdit(m_controls);
    m_target->setPlaceholderText(tr("a token, or #id"));
    m_target->setClearButtonEnabled(true);
    m_target->setToolTip(tr("Colour every cell by this token's probability and give its rank in the hover (spec key "
                            "target). Type it as the tokenizer reads it (\" the\" with its space for GPT-2), or as "
                            "#id. Empty: colour by each cell's most probable token."));
    m_target->setMaximumWidth(260);
    row->addWidget(m_target);
    row->addStretch(1);
    connect(m_target, &QLineEdit::editingFinished, this, [this] {
        const std::string target = m_target->text().toStdString();
        if (target == m_spec.target)
            return;
        ViewSpec spec = m_spec;
        spec.target = target;
        emit specEdited(spec);
    });
    m_formula = newFormulaLabel();
    m_message = newMessageLabel();
    m_plot = new HeatmapPlot(this);
    m_plot->setIndexInLabels(true);
    m_plot->setHoverText([this](int r, int c) { return hover(r, c); });
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] { writeCellTexts(); });
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_formula);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_plot, 1);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString LogitLensView::message() const
{
    return m_plot->isHidden() ? m_message->text() : QString();
}

QString LogitLensView::formula() const
{
    return m_formula->text();
}

QString LogitLensView::cellText(int row, int position) const
{
    if (!m_drawn)
        return {};
    return m_texts.shown(row, position);
}

void LogitLensView::showMessage(const QString &text)
{
    m_drawn.reset();
    m_formula->clear();
    m_message->setFont(sizedFont(font(), 12));
    m_message->setText(text);
    m_message->show();
    m_plot->hide();
}

int LogitLensView::lensRow(int displayRow) const
{
    return m_drawn->lens.rows() - 1 - displayRow;
}

QString LogitLensView::hover(int row, int col) const
{
    if (!m_drawn || row < 0 || row >= m_drawn->lens.rows() || col < 0 || col >= m_drawn->lens.tokens)
        return {};
    const LogitLens &lens = m_drawn->lens;
    const int r = lensRow(row);
    QStringList top;
    for (int k = 0; k < lens.topK; ++k)
        top << tr("%1. '%2' %3")
                   .arg(k + 1)
                   .arg(vocabularyLabel(m_input, lens.topId(r, col, k)))
                   .arg(formatPercent(lens.topProb(r, col, k)));
    if (!lens.present(r, col))
        return tr("after block %1, position %2: pooled away (the funnel's stride there is %3, so position %4 holds "
                  "this token's pool)")
            .arg(lens.blocks[size_t(r)])
            .arg(col)
            .arg(lens.strides[size_t(r)])
            .arg(col - col % lens.strides[size_t(r)]);
    const size_t cell = size_t(r) * size_t(lens.tokens) + size_t(col);
    QString text = tr("%1, position %2 '%3'\n%4\nentropy %5 nats")
                       .arg(lens.streams[size_t(r)] == names::haltingTensor("out")
                               ? tr("the halting's mixture \u03A3 p\u2099 X\u2099")
                               : lens.blocks[size_t(r)] == 0 ? tr("the embedding")
                                                             : tr("after block %1").arg(lens.blocks[size_t(r)]))
                       .arg(col)
                       .arg(tokenLabel(m_input, col), top.join(QLatin1Char('\n')), formatNumber(lens.entropy[cell], 3));
    if (lens.target >= 0)
        text += tr("\ntarget '%1': %2, rank %3")
                    .arg(vocabularyLabel(m_input, lens.target))
                    .arg(formatPercent(lens.targetProb[cell]))
                    .arg(lens.targetRank[cell]);
    return text;
}

void LogitLensView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    if (!m_target->hasFocus())
        m_target->setText(QString::fromStdString(m_spec.target));
    const auto *analysis = currentAnalysis<LogitLensAnalysis>();
    if (analysis == nullptr)
        return showMessage(!m_input.analysis.problem.isEmpty()        ? m_input.analysis.problem
                : m_input.analysis.pending || m_input.analysis.result ? tr("Computing…")
                                                                      : QString::fromUtf8(kNothingComputed));
    m_drawn = std::make_shared<LogitLensAnalysis>(*analysis);
    const LogitLens &lens = m_drawn->lens;
    const int rows = lens.rows(), T = lens.tokens;
    const bool tracking = lens.target >= 0;
    m_cells = std::make_shared<std::vector<float>>(size_t(rows) * size_t(T));
    QStringList rowLabels;
    for (int d = 0; d < rows; ++d) {
        const int r = lensRow(d), blocks = lens.blocks[size_t(r)];
        rowLabels << (lens.streams[size_t(r)] == names::haltingTensor("out") ? tr("halting mix")
                : blocks == 0                                                ? tr("embedding")
                                                                             : tr("block %1").arg(blocks));
        for (int t = 0; t < T; ++t)
            (*m_cells)[size_t(d) * size_t(T) + size_t(t)] = !lens.present(r, t)
                ? -std::numeric_limits<float>::infinity()
                : tracking ? lens.targetProb[size_t(r) * size_t(T) + size_t(t)]
                           : lens.topProb(r, t);
    }
    m_plot->setTheme(m_spec.theme);
    m_plot->setColormap(m_spec.colormap);
    m_plot->setLogScale(m_spec.scale == "log");
    m_plot->setLabels(rowLabels, tokenLabels(m_input, T));
    m_plot->setAxisTitles(tr("position"), tr("the stream after"));
    m_plot->setValueLabel(
        tracking ? tr("p('%1')").arg(vocabularyLabel(m_input, lens.target)) : tr("p(most probable token)"));
    const bool complete = rows == m_input.model->config.layers + 1;
    m_plot->setTitle(tracking
            ? tr("Logit lens: the probability of '%1' read from each stream").arg(vocabularyLabel(m_input, lens.target))
            : complete ? tr("Logit lens: what each stream would predict")
                       : tr("Logit lens: the %1 streams computed so far (step on for the rest)").arg(rows));
    m_plot->setMaskedNote(m_input.model->config.funnel.active() ? tr("pooled away by the funnel")
                                                                : tr("masked (\u2212\u221E before softmax)"));
    m_plot->setMatrix(m_cells->data(), rows, T, m_cells);
    m_texts.reset(m_plot, rows, T);
    const QString head = logitsFormula(m_input);
    m_formula->setText(
        tr("Row 'block i' reads X_i, the residual stream after i blocks, through the model's own output head as if "
           "the model ended there: p = softmax(Z), with %1 and X_i in place of the last stream. The top row is the "
           "model's own prediction; each cell writes its most probable token (nostalgebraist's logit lens).")
            .arg(head)
        + (m_input.model->config.funnel.active()
                ? tr(" Hatched: the positions the funnel pooled away after that block, which no token owns.")
                : QString())
        + (m_input.model->config.act.enabled
                ? tr(" This model halts each token by adaptive computation time: its output head reads \u03A3 "
                     "p\u2099 X\u2099, the blocks' streams weighted by their halting (the top row, 'halting mix').")
                : QString()));
    m_message->hide();
    m_plot->show();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void LogitLensView::resizeEvent(QResizeEvent *event)
{
    View::resizeEvent(event);
    writeCellTexts();
}

void LogitLensView::writeCellTexts()
{
    if (!m_drawn)
        return;
    const QFont font = sizedFont(this->font(), 10);
    const QFontMetrics metrics(font);
    m_texts.write(m_plot, font, [&](int d, int t, double cellWidth, double cellHeight) {
        // A cell too small for one character writes nothing (the hover still names its token).
        if (cellWidth < metrics.horizontalAdvance(QLatin1Char('M')) + 2 || cellHeight < metrics.height()
            || !m_drawn->lens.present(lensRow(d), t))
            return QString();
        const QString text = metrics.elidedText(
            vocabularyLabel(m_input, m_drawn->lens.topId(lensRow(d), t)), Qt::ElideRight, int(cellWidth) - 4);
        return text == QStringLiteral("…") ? QString() : text;
    });
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::logitlens::makeView(QWidget *parent)
{
    return std::make_unique<LogitLensView>(parent);
}
