#include "logitattribution/logitattributionview.h"

#include "logitattribution/logitattribution.h"
#include "views/heatmapplot.h"
#include "views/viewfonts.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTextDocument>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

// Whether the grid has a column for the output projections' biases: not for a model without them (Llama's family).
bool hasBias(const LogitAttribution &a)
{
    return std::any_of(a.attentionBias.begin(), a.attentionBias.end(), [](double v) { return v != 0; });
}

// The columns of a layer's row: its self-attention heads, an encoder–decoder's cross-attention heads, the output
// projections' bias where there is one, the feed-forward.
int columnCount(const LogitAttribution &a)
{
    return a.heads * (a.crossAttention ? 2 : 1) + (hasBias(a) ? 2 : 1);
}

} // namespace

LogitAttributionView::LogitAttributionView(QWidget *parent)
    : View(parent)
{
    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    const auto lineEdit = [this](const QString &placeholder, const QString &tip) {
        auto *e = new QLineEdit(m_controls);
        e->setPlaceholderText(placeholder);
        e->setToolTip(tip);
        e->setClearButtonEnabled(true);
        e->setMaximumWidth(240);
        return e;
    };
    m_target = lineEdit(tr("the top token"),
        tr("The token whose logit is split (spec key target): as the tokenizer reads it (\" the\" with its space for "
           "GPT-2), or #id. Empty: the model's most probable token at the position."));
    m_against = lineEdit(tr("none: the logit alone"),
        tr("A second token: the view then splits logit(target) − logit(against), the logit difference, which the "
           "parts every token shares (the embedding's norm, a bias toward frequent tokens) cancel from "
           "(spec key against)"));
    m_position = new QSpinBox(m_controls);
    m_position->setRange(-1, 0);
    m_position->setSpecialValueText(tr("last"));
    m_position->setToolTip(tr("The position whose prediction is split (spec key position)"));
    row->addWidget(new QLabel(tr("Target:"), m_controls));
    row->addWidget(m_target, 1);
    row->addWidget(new QLabel(tr("Against:"), m_controls));
    row->addWidget(m_against, 1);
    row->addWidget(new QLabel(tr("Position:"), m_controls));
    row->addWidget(m_position);
    row->addStretch(1);
    connect(m_target, &QLineEdit::editingFinished, this,
        [this] { editSpec([this](ViewSpec &s) { s.target = m_target->text().toStdString(); }); });
    connect(m_against, &QLineEdit::editingFinished, this, [this] {
        editSpec([this](ViewSpec &s) { s.set(views::logitattribution::kAgainst, m_against->text().toStdString()); });
    });
    connect(
        m_position, &QSpinBox::valueChanged, this, [this](int p) { editSpec([p](ViewSpec &s) { s.position = p; }); });

    m_formula = newFormulaLabel();
    m_message = newMessageLabel();
    m_body = new QWidget(this);
    auto *body = new QHBoxLayout(m_body);
    body->setContentsMargins(0, 0, 0, 0);
    m_plot = new HeatmapPlot(m_body);
    m_plot->setDiverging(true);
    m_plot->setIndexInLabels(false);
    m_plot->setValueLabel(tr("direct effect on the logit"));
    m_plot->setHoverText([this](int r, int c) {
        if (!m_drawn || r < 0 || c < 0 || r >= m_drawn->parts.layers || c >= columnCount(m_drawn->parts))
            return QString();
        const LogitAttribution &a = m_drawn->parts;
        QString text = tr("layer %1, %2: %3 of the %4 %5 (%6)")
                           .arg(r)
                           .arg(columnName(c), formatNumber(cellValue(r, c), 4))
                           .arg(a.contrast >= 0 ? tr("logit difference") : tr("logit"), formatNumber(a.sum, 4),
                               formatPercent(a.sum != 0 ? cellValue(r, c) / a.sum : 0));
        if (c < a.heads * (a.crossAttention ? 2 : 1))
            text += tr("\nclick to open this head in the Attention view");
        if (c == columnCount(a) - 1)
            for (const LogitAttribution::ExpertPart &e : a.experts[size_t(r)])
                text += tr("\nexpert %1 (gate %2): %3")
                            .arg(e.expert)
                            .arg(formatNumber(e.gate, 3), formatNumber(e.value, 4));
        return text;
    });
    m_plot->installEventFilter(this);
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] { writeCellTexts(); });
    m_top = new QLabel(m_body);
    m_top->setTextFormat(Qt::RichText);
    m_top->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_top->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_top->setToolTip(tr("The parts with the largest direct effect, largest first, and their share of the sum"));
    body->addWidget(m_plot, 4);
    body->addWidget(m_top, 1);
    m_caption = new QLabel(this);
    m_caption->setWordWrap(true);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_formula);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_body, 1);
    layout->addWidget(m_caption);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString LogitAttributionView::message() const
{
    return m_body->isHidden() ? m_message->text() : QString();
}

QString LogitAttributionView::caption() const
{
    return m_caption->text();
}

QString LogitAttributionView::topWriters() const
{
    QTextDocument document;
    document.setHtml(m_top->text());
    return document.toPlainText();
}

QString LogitAttributionView::cellText(int row, int col) const
{
    if (!m_drawn)
        return {};
    return m_texts.shown(row, col);
}

void LogitAttributionView::showMessage(const QString &text)
{
    m_drawn.reset();
    m_message->setFont(sizedFont(font(), 12));
    setMessageText(m_message, text);
    m_message->show();
    m_body->hide();
    m_caption->hide();
}

double LogitAttributionView::cellValue(int row, int col) const
{
    const LogitAttribution &a = m_drawn->parts;
    if (col < a.heads)
        return a.selfHead(row, col);
    if (a.crossAttention && col < 2 * a.heads)
        return a.crossHead(row, col - a.heads);
    return col == columnCount(a) - 1 ? a.feedForward[size_t(row)] : a.attentionBias[size_t(row)];
}

QString LogitAttributionView::columnName(int col) const
{
    const LogitAttribution &a = m_drawn->parts;
    if (col < a.heads)
        return tr("head %1").arg(col);
    if (a.crossAttention && col < 2 * a.heads)
        return tr("cross-attention head %1").arg(col - a.heads);
    return col == columnCount(a) - 1 ? tr("the feed-forward") : tr("the attention's bias");
}

void LogitAttributionView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    m_caption->setFont(sizedFont(font(), 10));
    m_top->setFont(sizedFont(font(), 10));
    if (!m_target->hasFocus())
        m_target->setText(QString::fromStdString(m_spec.target));
    if (!m_against->hasFocus())
        m_against->setText(QString::fromStdString(m_spec.get(views::logitattribution::kAgainst)));
    {
        const QSignalBlocker block(m_position);
        m_position->setRange(-1, std::max(0, int(m_input.tokens.size()) - 1));
        m_position->setValue(m_spec.position);
    }
    const auto *analysis = currentAnalysis<LogitAttributionAnalysis>();
    if (!analysis)
        return showMessage(!m_input.analysis.problem.isEmpty()        ? m_input.analysis.problem
                : m_input.analysis.pending || m_input.analysis.result ? tr("Computing…")
                                                                      : QString::fromUtf8(kNothingComputed));
    m_drawn = std::make_shared<LogitAttributionAnalysis>(*analysis);
    const LogitAttribution &a = m_drawn->parts;
    const int rows = a.layers, cols = columnCount(a);
    m_cells = std::make_shared<std::vector<float>>(size_t(rows) * size_t(cols));
    QStringList rowLabels, colLabels;
    for (int l = 0; l < rows; ++l) {
        rowLabels << tr("layer %1").arg(l);
        for (int c = 0; c < cols; ++c)
            (*m_cells)[size_t(l) * size_t(cols) + size_t(c)] = float(cellValue(l, c));
    }
    for (int h = 0; h < a.heads; ++h)
        colLabels << tr("H%1").arg(h);
    if (a.crossAttention)
        for (int h = 0; h < a.heads; ++h)
            colLabels << tr("X%1").arg(h);
    if (hasBias(a))
        colLabels << tr("bias");
    colLabels << tr("FFN");
    const QString target = vocabularyLabel(m_input, a.target);
    const QString what = a.contrast >= 0
        ? tr("logit('%1') − logit('%2')").arg(target, vocabularyLabel(m_input, a.contrast))
        : tr("logit('%1')").arg(target);
    m_plot->setTheme(m_spec.theme);
    m_plot->setColormap(m_spec.colormap);
    m_plot->setLabels(rowLabels, colLabels);
    const QString bias = hasBias(a) ? tr(", the attention's bias") : QString();
    m_plot->setAxisTitles(a.crossAttention
            ? tr("self-attention heads H, cross-attention heads X%1, the feed-forward").arg(bias)
            : tr("head%1, the feed-forward").arg(bias),
        tr("layer"));
    m_plot->setTitle(tr("What each part writes straight into %1 at position %2").arg(what).arg(a.position));
    m_plot->setMatrix(m_cells->data(), rows, cols, m_cells);
    m_texts.reset(m_plot, rows, cols);

    const bool layerNorm = m_input.model->config.norm == NormKind::LayerNorm;
    const QString w = a.contrast >= 0 ? tr("W_U['%1'] − W_U['%2']").arg(target, vocabularyLabel(m_input, a.contrast))
                                      : tr("W_U['%1']").arg(target);
    m_formula->setText(
        (layerNorm ? tr("With the final LayerNorm's 1/σ frozen at its value here (%1), %2 is a sum over everything "
                        "written into the residual stream: Σ w · γ ⊙ (part − mean(part)) / σ + w · β, with w = %3, "
                        "each part centred as the norm centres their sum")
                   : tr("With the final RMSNorm's 1/rms frozen at its value here (%1), %2 is a sum over everything "
                        "written into the residual stream: Σ w · γ ⊙ part / rms, with w = %3"))
            .arg(formatNumber(a.frozenScale, 4), what, w)
        + tr(" (Elhage et al. 2021).")
        + (a.softcap > 0 ? tr(" The soft-capped logits are split before their cap, c · tanh(z / c).") : QString()));

    const std::vector<NamedPart> writers = largestWriters(a);
    QString list = tr("<b>Largest writers</b><table>");
    for (size_t i = 0; i < std::min<size_t>(12, writers.size()); ++i)
        list += QStringLiteral("<tr><td>%1</td><td align=right>&nbsp;&nbsp;%2</td><td align=right>&nbsp;%3</td></tr>")
                    .arg(QString::fromStdString(writers[i].name).toHtmlEscaped(), formatNumber(writers[i].value, 3),
                        formatPercent(a.sum != 0 ? writers[i].value / a.sum : 0, 2));
    m_top->setText(list + QStringLiteral("</table>"));

    const double gap = a.sum - a.modelLogit;
    const QString parts = tr("the embedding %1 + every part in the grid %2")
                              .arg(formatNumber(a.embedding, 4), formatNumber(a.sum - a.embedding - a.normShift, 4));
    QString check = layerNorm ? tr("Check: %1 + the final norm's β %2 = %3").arg(parts, formatNumber(a.normShift, 4))
                              : tr("Check: %1 = %2").arg(parts);
    check = check.arg(formatNumber(a.sum, 6))
        + tr("; the model's own %1 is %2 (a gap of %3).")
              .arg(a.contrast >= 0 ? tr("logit difference") : tr("logit"), formatNumber(a.modelLogit, 6),
                  formatNumber(gap, 2));
    if (layerNorm)
        check += tr(" The norm's centring took %1 out of the uncentred parts.").arg(formatNumber(a.centring, 4));
    m_caption->setText(check);
    m_message->hide();
    m_body->show();
    m_caption->show();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void LogitAttributionView::resizeEvent(QResizeEvent *event)
{
    View::resizeEvent(event);
    writeCellTexts();
}

void LogitAttributionView::writeCellTexts()
{
    if (m_drawn)
        m_texts.write(m_plot, sizedFont(font(), 9),
            [this](int row, int col, double, double) { return formatNumber(cellValue(row, col), 2); });
}

// A click (a press and a release in place: a drag moves a zoomed grid) on a head opens it in the Attention view.
bool LogitAttributionView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_plot && m_drawn) {
        if (event->type() == QEvent::MouseButtonPress)
            m_pressedAt = static_cast<QMouseEvent *>(event)->position();
        if (event->type() == QEvent::MouseButtonRelease) {
            const auto *mouse = static_cast<QMouseEvent *>(event);
            const HeatmapPlot::Cell cell = m_plot->cellAt(mouse->position());
            if (mouse->button() == Qt::LeftButton && (mouse->position() - m_pressedAt).manhattanLength() < 4
                && cell.valid() && cell.col < m_drawn->parts.heads * (m_drawn->parts.crossAttention ? 2 : 1)) {
                ViewSpec spec = m_spec;
                const bool cross = cell.col >= m_drawn->parts.heads;
                spec.view = "attention";
                spec.site = cross ? "cross" : "self";
                spec.layer = cell.row;
                spec.head = cell.col - (cross ? m_drawn->parts.heads : 0);
                emit specEdited(spec);
            }
        }
    }
    return View::eventFilter(watched, event);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::logitattribution::makeView(QWidget *parent)
{
    return std::make_unique<LogitAttributionView>(parent);
}
