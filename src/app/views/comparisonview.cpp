#include "views/comparisonview.h"

#include "view/comparison.h"
#include "view/viewkinds.h"
#include "views/heatmapplot.h"
#include "views/viewfactory.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPushButton>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>

namespace atlas {

namespace {

// What tells one side's run from the other's, after its letter: the model, and the text or kernel when they differ.
QString runCaption(const QString &letter, const ViewSpec &comparison, const ViewSpec &side)
{
    QString caption = letter + QStringLiteral(" \u00B7 ") + QString::fromStdString(side.model);
    if (!comparison.compareText.empty())
        caption += QStringLiteral(" \u00B7 \u201C") + QString::fromStdString(side.text) + QStringLiteral("\u201D");
    if (!comparison.compareAttention.empty())
        caption += QStringLiteral(" \u00B7 ")
            + QObject::tr("attention %1")
                  .arg(QString::fromStdString(kernelCaption(side.attention, side.attentionParams)));
    return caption;
}

QLabel *captionLabel(QWidget *parent)
{
    auto *label = new QLabel(parent);
    label->setWordWrap(true);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    return label;
}

} // namespace

ComparisonView::ComparisonView(QWidget *parent)
    : View(parent)
    , m_controls(new QWidget(this))
    , m_mode(new QComboBox(m_controls))
    , m_stop(new QPushButton(tr("Stop comparing"), m_controls))
    , m_summary(newFormulaLabel())
    , m_captionA(captionLabel(this))
    , m_captionB(captionLabel(this))
    , m_message(newMessageLabel())
    , m_sides(new QWidget(this))
    , m_difference(new HeatmapPlot(this))
    , m_heads(new HeatmapPlot(this))
{
    m_mode->addItem(tr("Side by side"), QStringLiteral("side"));
    m_mode->addItem(tr("Difference A \u2212 B"), QStringLiteral("difference"));
    m_mode->addItem(tr("Every head and the next token"), QStringLiteral("heads"));
    m_mode->setToolTip(tr("Draw the two runs next to each other, the attention view's A \u2212 B on a diverging "
                          "scale (blue: B attends more, red: A attends more), or how far B is from A in every head "
                          "and in the next-token distributions"));
    m_stop->setToolTip(tr("Back to one run: the view shows run A alone"));
    auto *controls = new QHBoxLayout(m_controls);
    controls->setContentsMargins(0, 0, 0, 0);
    controls->addWidget(new QLabel(tr("Show:"), m_controls));
    controls->addWidget(m_mode);
    controls->addStretch(1);
    controls->addWidget(m_stop);

    auto *sides = new QHBoxLayout(m_sides);
    sides->setContentsMargins(0, 0, 0, 0);
    for (QLabel *caption : {m_captionA, m_captionB}) {
        auto *column = new QVBoxLayout;
        column->addWidget(caption);
        sides->addLayout(column, 1);
    }

    m_difference->setValueLabel(tr("A \u2212 B"));
    m_difference->setDiverging(true);
    m_difference->setHoverText([this](int row, int col) { return differenceHover(row, col); });
    m_difference->hide();
    m_heads->setValueLabel(tr("\u00BD \u03A3 |A \u2212 B|"));
    m_heads->setAxisTitles(tr("head"), tr("layer"));
    m_heads->setIndexInLabels(false); // the labels say "layer 3" already
    m_heads->setHoverText([this](int row, int col) { return headsHover(row, col); });
    m_heads->setToolTip(tr("Click a head to see its A \u2212 B"));
    connect(m_heads, &QCustomPlot::mousePress, this, &ComparisonView::openHead);
    m_heads->hide();
    m_message->hide();

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(kViewMargin, kViewMargin, kViewMargin, kViewMargin);
    layout->addWidget(m_controls);
    layout->addWidget(m_summary);
    layout->addWidget(m_sides, 1);
    layout->addWidget(m_difference, 1);
    layout->addWidget(m_heads, 1);
    layout->addWidget(m_message);

    connect(m_mode, &QComboBox::activated, this, [this] {
        ViewSpec spec = m_spec;
        spec.compare = m_mode->currentData().toString().toStdString();
        emit specEdited(spec);
    });
    connect(m_stop, &QPushButton::clicked, this, [this] {
        ViewSpec spec = sideSpec(m_spec, Side::A);
        emit specEdited(spec);
    });
}

std::vector<QWidget *> ComparisonView::interfaceWidgets() const
{
    std::vector<QWidget *> widgets {m_controls};
    for (View *side : {m_a, m_b})
        if (side)
            for (QWidget *w : side->interfaceWidgets())
                widgets.push_back(w);
    return widgets;
}

QString ComparisonView::captionA() const
{
    return m_captionA->text();
}

QString ComparisonView::captionB() const
{
    return m_captionB->text();
}

QString ComparisonView::summary() const
{
    return m_summary->text();
}

QString ComparisonView::message() const
{
    return m_message->isVisible() || !m_message->isHidden() ? m_message->text() : QString();
}

void ComparisonView::makeSides(const std::string &kind)
{
    delete m_a;
    delete m_b;
    m_a = m_b = nullptr;
    m_kind = kind;
    if (!findViewKind(kind))
        return;
    auto *sides = static_cast<QHBoxLayout *>(m_sides->layout());
    const Side order[] = {Side::A, Side::B};
    for (int i = 0; i < 2; ++i) {
        View *view = createView(kind, m_sides).release();
        static_cast<QVBoxLayout *>(sides->itemAt(i)->layout())->addWidget(view, 1);
        const Side side = order[i];
        connect(view, &View::specEdited, this,
            [this, side](const ViewSpec &edited) { emit specEdited(comparisonEdit(m_spec, edited, side)); });
        connect(view, &View::analysisCancelled, this, &View::analysisCancelled);
        (side == Side::A ? m_a : m_b) = view;
    }
}

void ComparisonView::refresh()
{
    if (m_spec.compare.empty()) { // not on screen: let go of run B
        m_shown.reset();
        m_madeFrom = nullptr;
        m_inputB = {};
        return;
    }
    const ViewKind *kind = findViewKind(m_spec.view);
    if (m_spec.view != m_kind)
        makeSides(m_spec.view);
    const QSignalBlocker block(m_mode);
    m_mode->setCurrentIndex(std::max(0, m_mode->findData(QString::fromStdString(m_spec.compare))));
    if (auto *items = qobject_cast<QStandardItemModel *>(m_mode->model()))
        items->item(1)->setEnabled(kind && kind->drawsDifference);
    const QString change = QString::fromStdString(comparedChange(m_spec));
    m_summary->setText(compareMode(m_spec) == CompareMode::Difference
            ? tr("Run A is the input on screen; run B differs by %1. Red: A attends more than B; blue: B attends more; "
                 "white: the same. Each row of A and of B sums to 1, so each row of A − B sums to 0.")
                  .arg(change)
            : compareMode(m_spec) == CompareMode::Heads
            ? tr("Run A is the input on screen; run B differs by %1. Each cell: how far B's attention is from A's in "
                 "that head, ½ Σ |A − B| over the keys averaged over the queries (0: the same; 1: no key in common).")
                  .arg(change)
            : tr("Run A is the input on screen; run B differs by %1. Layer, head and positions are shared: a click on "
                 "either side moves both.")
                  .arg(change));
    m_captionA->setText(runCaption(QStringLiteral("A"), m_spec, sideSpec(m_spec, Side::A)));
    m_captionB->setText(runCaption(QStringLiteral("B"), m_spec, sideSpec(m_spec, Side::B)));

    const auto *result = m_input.analysisAs<ComparisonAnalysis>();
    if (result)
        m_shown = m_input.analysis.result;
    const bool difference = compareMode(m_spec) == CompareMode::Difference,
               heads = compareMode(m_spec) == CompareMode::Heads;
    m_sides->setVisible(!difference && !heads);
    m_difference->setVisible(difference);
    m_heads->setVisible(heads);
    if (difference)
        refreshDifference(result);
    else if (heads)
        refreshHeads(result);
    else
        refreshSides(result);
}

ViewInput ComparisonView::sideInput(const ViewInput &run, const ComparisonAnalysis *result, Side side) const
{
    ViewInput input = run;
    input.analysis = {};
    if (result) { // the side's own analysis, from the comparison's result
        input.analysis.result = side == Side::A ? result->ownA : result->ownB;
        input.analysis.settings = side == Side::A ? result->settingsA : result->settingsB;
        input.analysis.problem = QString::fromStdString(side == Side::A ? result->problemA : result->problemB);
    } else { // the comparison's state while it runs, or why it failed
        input.analysis.pending = m_input.analysis.pending;
        input.analysis.done = m_input.analysis.done;
        input.analysis.total = m_input.analysis.total;
        input.analysis.problem = m_input.analysis.problem;
    }
    return input;
}

void ComparisonView::refreshSides(const ComparisonAnalysis *result)
{
    m_message->hide();
    if (!m_a || !m_b)
        return;
    m_a->setInputAndSpec(sideInput(m_input, result, Side::A), sideSpec(m_spec, Side::A));

    const ViewSpec b = sideSpec(m_spec, Side::B);
    if (result && m_madeFrom != result) {
        m_inputB = makeViewInput(result->run, result->tokenizer);
        m_madeFrom = result;
    }
    // While B's analysis of a new head runs, B is drawn from the run on hand when the run is still B's.
    const auto *madeFrom = dynamic_cast<const ComparisonAnalysis *>(m_shown.get());
    const bool runOnHand = madeFrom && m_madeFrom == madeFrom && runKeyOf(madeFrom->b) == runKeyOf(b);
    if (!runOnHand) {
        m_b->hide();
        m_message->setText(m_input.analysis.pending || m_input.analysis.problem.isEmpty()
                ? tr("Running B (%1)\u2026").arg(QString::fromStdString(comparedChange(m_spec)))
                : tr("Run B cannot be drawn: %1").arg(m_input.analysis.problem));
        m_message->show();
        return;
    }
    m_b->show();
    m_b->setInputAndSpec(sideInput(m_inputB, result, Side::B), b);
}

void ComparisonView::refreshDifference(const ComparisonAnalysis *result)
{
    m_message->hide();
    m_difference->setTheme(m_spec.theme);
    if (m_input.site.cross)
        m_difference->setAxisTitles(tr("key: source token (encoder output)"), tr("query: decoder token"));
    else
        m_difference->setAxisTitles(tr("key"), tr("query"));
    const QString site = siteTitle(m_input);
    const QString where = tr("layer %1 \u00B7 head %2").arg(m_spec.layer).arg(m_spec.head);
    m_difference->setTitle(
        (site.isEmpty() ? QStringLiteral("L") + where.mid(1) : site + QStringLiteral(" \u00B7 ") + where)
        + tr(" \u00B7 attention probabilities, A \u2212 B"));
    if (!readyToDraw(result, m_difference))
        return;
    if (!result->differenceProblem.empty()) {
        m_difference->showMessage(QString::fromStdString(result->differenceProblem));
        return;
    }
    // Two texts: each position's two tokens, A's first.
    const auto labels = [](QStringList a, const QStringList &b) {
        for (int i = 0; i < a.size() && i < b.size(); ++i)
            if (a[i] != b[i])
                a[i] += QStringLiteral(" / ") + b[i];
        return a;
    };
    m_difference->setLabels(labels(tokenLabels(m_input, result->rows), tokenLabels(m_inputB, result->rows)),
        labels(keyLabels(m_input, result->cols), keyLabels(m_inputB, result->cols)));
    m_difference->setMaskedScores(result->maskedInBoth.empty() ? nullptr : result->maskedInBoth.data());
    m_difference->setMatrix(result->difference.data(), result->rows, result->cols, m_shown);
    m_difference->setMarkedRow(m_spec.query);
}

bool ComparisonView::readyToDraw(const ComparisonAnalysis *result, HeatmapPlot *plot)
{
    if (!result) {
        plot->showMessage(m_input.analysis.pending || m_input.analysis.problem.isEmpty()
                ? tr("Running B (%1)\u2026").arg(QString::fromStdString(comparedChange(m_spec)))
                : m_input.analysis.problem);
        return false;
    }
    if (m_madeFrom != result) { // B's labels, for hovers and the summary
        m_inputB = makeViewInput(result->run, result->tokenizer);
        m_madeFrom = result;
    }
    return true;
}

QString ComparisonView::differenceHover(int row, int col) const
{
    const auto *result = dynamic_cast<const ComparisonAnalysis *>(m_shown.get());
    if (!result || result->difference.empty() || row < 0 || col < 0 || row >= result->rows || col >= result->cols)
        return {};
    const size_t cell = size_t(row) * size_t(result->cols) + size_t(col);
    QString text = cellPrefix(m_input, row, col);
    if (m_madeFrom == result
        && (tokenLabel(m_inputB, row) != tokenLabel(m_input, row) || keyLabel(m_inputB, col) != keyLabel(m_input, col)))
        text += tr(" (B: '%1' \u2192 '%2')").arg(tokenLabel(m_inputB, row), keyLabel(m_inputB, col));
    return text
        + tr(": A %1 \u2212 B %2 = %3")
              .arg(formatNumber(result->probsA[cell]), formatNumber(result->probsB[cell]),
                  formatNumber(result->difference[cell]));
}

void ComparisonView::refreshHeads(const ComparisonAnalysis *result)
{
    m_message->hide();
    m_heads->setTheme(m_spec.theme);
    const QString site = siteTitle(m_input);
    m_heads->setTitle((site.isEmpty() ? QString() : site + QStringLiteral(" \u00B7 "))
        + tr("every head: how far B's attention is from A's"));
    if (!readyToDraw(result, m_heads))
        return;
    const HeadsCompared &h = result->heads;
    if (h.layers == 0 || h.heads == 0) {
        m_heads->showMessage(tr("Run A has no attention to compare."));
        return;
    }
    QStringList layers, heads;
    for (int l = 0; l < h.layers; ++l)
        layers << tr("layer %1").arg(l);
    for (int k = 0; k < h.heads; ++k)
        heads << tr("head %1").arg(k);
    m_heads->setLabels(layers, heads);
    m_heads->setMatrix(h.distance.data(), h.layers, h.heads, m_shown);

    const auto most = std::max_element(h.distance.begin(), h.distance.end());
    const int at = int(most - h.distance.begin());
    QString text = m_summary->text() + QStringLiteral(" ")
        + tr("The most changed head is layer %1 head %2 (%3). Click a head to see its A \u2212 B.")
              .arg(at / h.heads)
              .arg(at % h.heads)
              .arg(formatNumber(*most));
    if (!h.nextTokenProblem.empty()) {
        text += QStringLiteral(" ") + tr("Next token: %1").arg(QString::fromStdString(h.nextTokenProblem));
    } else if (!h.nextTokenKl.empty()) {
        double sum = 0;
        for (double kl : h.nextTokenKl)
            sum += kl;
        const auto worst = std::max_element(h.nextTokenKl.begin(), h.nextTokenKl.end());
        const int position = int(worst - h.nextTokenKl.begin());
        const int agree = int(std::count(h.sameTopToken.begin(), h.sameTopToken.end(), char(1)));
        text += QStringLiteral(" ")
            + tr("Next token: KL(A \u2016 B) averages %1 nats over %2 positions, the largest %3 after '%4' (position "
                 "%5); the most likely token is the same at %6 of %2.")
                  .arg(formatNumber(sum / double(h.nextTokenKl.size())))
                  .arg(h.nextTokenKl.size())
                  .arg(formatNumber(*worst))
                  .arg(tokenLabel(m_input, position))
                  .arg(position)
                  .arg(agree);
    }
    m_summary->setText(text);
}

QString ComparisonView::headsHover(int layer, int head) const
{
    const auto *result = dynamic_cast<const ComparisonAnalysis *>(m_shown.get());
    if (!result || layer < 0 || head < 0 || layer >= result->heads.layers || head >= result->heads.heads)
        return {};
    return tr("layer %1 \u00B7 head %2: \u00BD \u03A3 |A \u2212 B| averages %3 over the %4 queries (click: A \u2212 B)")
        .arg(layer)
        .arg(head)
        .arg(formatNumber(result->heads.distance[size_t(layer) * size_t(result->heads.heads) + size_t(head)]))
        .arg(result->heads.queries);
}

void ComparisonView::openHead(QMouseEvent *event)
{
    const HeatmapPlot::Cell cell = m_heads->cellAt(event->position());
    const auto *result = dynamic_cast<const ComparisonAnalysis *>(m_shown.get());
    if (!cell.valid() || !result || cell.row >= result->heads.layers || cell.col >= result->heads.heads)
        return;
    ViewSpec spec = m_spec;
    const ViewKind *kind = findViewKind(spec.view);
    spec.compare = kind && kind->drawsDifference ? "difference" : "side";
    spec.layer = cell.row;
    spec.head = cell.col;
    emit specEdited(spec);
}

} // namespace atlas
