#include "needle/needleview.h"

#include "viewmodel/viewinput.h"
#include "views/colormaps.h"
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

using namespace views::needle;

NeedleView::NeedleView(QWidget *parent)
    : ResultPlotView(parent)
    , m_tokens(new QSpinBox(controlRow()))
    , m_depths(new QSpinBox(controlRow()))
    , m_lengths(new QSpinBox(controlRow()))
    , m_haystack(new QComboBox(controlRow()))
{
    auto *row = static_cast<QHBoxLayout *>(controlRow()->layout());
    row->addWidget(new QLabel(tr("Context"), controlRow()));
    m_tokens->setRange(16, 1 << 20);
    m_tokens->setSingleStep(256);
    m_tokens->setSuffix(tr(" tokens"));
    m_tokens->setToolTip(tr("The context's length, the needle, the question and the answer included: at most the "
                            "model's context (spec key needle_tokens)"));
    row->addWidget(m_tokens);
    row->addWidget(new QLabel(tr("Depths"), controlRow()));
    m_depths->setRange(2, kMaxNeedleDepths);
    m_depths->setToolTip(tr("How many places the needle is put at, evenly from the document's start to just before "
                            "the question: one forward pass each (spec key needle_depths)"));
    row->addWidget(m_depths);
    row->addWidget(new QLabel(tr("Lengths"), controlRow()));
    m_lengths->setRange(1, kMaxNeedleLengths);
    m_lengths->setToolTip(tr("Kamradt's grid: the test at this many context lengths, evenly spaced up to the "
                             "Context; 1 runs the Context alone (spec key needle_lengths)"));
    row->addWidget(m_lengths);
    row->addWidget(new QLabel(tr("Document"), controlRow()));
    m_haystack->addItem(tr("the novel (held-out Pride and Prejudice)"), QStringLiteral("novel"));
    m_haystack->addItem(tr("the Input box's text"), QStringLiteral("input"));
    m_haystack->setToolTip(tr("The haystack, repeated to fill the context (spec key haystack). Load a long text "
                              "into the Input box with File \u25B8 Open Text File."));
    row->addWidget(m_haystack);
    row->addStretch(1);
    connect(m_tokens, &QSpinBox::editingFinished, this, [this] {
        if (m_tokens->value() == m_spec.get(kNeedleTokens) && m_spec.own.count(kNeedleTokens.name))
            return;
        m_spec.set(kNeedleTokens, m_tokens->value());
        emit specEdited(m_spec);
    });
    connect(m_depths, &QSpinBox::editingFinished, this, [this] {
        if (m_depths->value() == m_spec.get(kNeedleDepths))
            return;
        m_spec.set(kNeedleDepths, m_depths->value());
        emit specEdited(m_spec);
    });
    connect(m_lengths, &QSpinBox::editingFinished, this, [this] {
        if (m_lengths->value() == m_spec.get(kNeedleLengths))
            return;
        m_spec.set(kNeedleLengths, m_lengths->value());
        emit specEdited(m_spec);
    });
    connect(m_haystack, &QComboBox::activated, this, [this] {
        m_spec.set(kHaystack, m_haystack->currentData().toString().toStdString());
        emit specEdited(m_spec);
    });
    plot()->setToolTip(tr("A sentence put at every depth of a long document, then a question about it: how likely "
                          "the answer is, and where the question looks"));
}

QString NeedleView::pendingText() const
{
    return tr("Running the model once for each place of the needle\u2026");
}

QString NeedleView::progressFormat() const
{
    return tr("%v of %m forward passes run");
}

void NeedleView::syncControls(int tokens)
{
    const QSignalBlocker blockTokens(m_tokens), blockDepths(m_depths), blockLengths(m_lengths),
        blockHaystack(m_haystack);
    m_tokens->setValue(tokens);
    m_depths->setValue(m_spec.get(kNeedleDepths));
    m_lengths->setValue(m_spec.get(kNeedleLengths));
    m_haystack->setCurrentIndex(m_haystack->findData(QString::fromStdString(m_spec.get(kHaystack))));
}

QString NeedleView::draw(const NeedleAnalysis &a)
{
    const NeedleResult &r = a.runs.back();
    syncControls(r.tokens);
    const bool grid = a.runs.size() > 1;
    setTitle(tr("Needle in a haystack \u00B7 %1 \u00B7 %2 tokens of %3")
                 .arg(QString::fromStdString(r.model))
                 .arg(grid ? tr("%1 to %2").arg(a.runs.front().tokens).arg(r.tokens) : QString::number(r.tokens))
                 .arg(a.haystack == "input" ? tr("the Input box's text") : tr("the novel")));
    if (grid) {
        drawGrid(a.runs);
        drawAttention(r, 2);
        return gridText(a.runs);
    }
    drawProbabilities(r);
    drawAttention(r, 1);

    int found = 0;
    size_t best = 0, worst = 0;
    for (size_t d = 0; d < r.depths.size(); ++d) {
        found += r.depths[d].greedy;
        if (r.depths[d].answerProbability > r.depths[best].answerProbability)
            best = d;
        if (r.depths[d].answerProbability < r.depths[worst].answerProbability)
            worst = d;
    }
    const auto depthText = [&](size_t d) { return formatPercent(r.depths[d].depth); };
    QString text
        = tr("The needle \u201C%1\u201D is put after the sentence end nearest before each depth, and "
             "\u201C%2\u201D closes the context; the answer \u201C%3\u201D is %4. ")
              .arg(QString::fromStdString(m_spec.get(kNeedle)).trimmed(),
                  QString::fromStdString(m_spec.get(kNeedleQuestion)).trimmed(),
                  QString::fromStdString(m_spec.get(kNeedleAnswer)).trimmed())
              .arg(r.answer.size() == 1 ? tr("one token, read at the position before it")
                                        : tr("%1 tokens, each read at the position before it").arg(r.answer.size()));
    text += tr("Greedy decoding gives the answer at %1 of %2 depths. P(answer) is highest, %3, with the needle at "
               "%4 of the document and lowest, %5, at %6. ")
                .arg(found)
                .arg(r.depths.size())
                .arg(QString::number(r.depths[best].answerProbability, 'g', 3), depthText(best))
                .arg(QString::number(r.depths[worst].answerProbability, 'g', 3), depthText(worst));
    text += tr("Right: the share of the question's last token's attention (position %1) on the needle's tokens, heads "
               "averaged; the needle is %2 of the context.")
                .arg(r.questionPosition)
                .arg(formatPercent(double(r.depths.front().needleEnd - r.depths.front().needleStart) / r.tokens));
    return text;
}

void NeedleView::drawProbabilities(const NeedleResult &r)
{
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const QColor whole = seriesColours().at(0), first = seriesColours().at(1);
    const auto curve = [&](auto value, const QColor &colour, Qt::PenStyle style, const QString &name) {
        auto *g = new QCPGraph(x, y);
        for (const NeedleAtDepth &d : r.depths)
            g->addData(100.0 * d.depth, std::max(value(d), 1e-12));
        g->setPen(QPen(colour, 2.5, style));
        g->setName(name);
        return g;
    };
    if (r.answer.size() > 1) // else the same curve
        curve([](const NeedleAtDepth &d) { return d.firstTokenProbability; }, first, Qt::DashLine,
            tr("P(the answer's first token)"))
            ->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, first, first, 6));
    QCPGraph *answer
        = curve([](const NeedleAtDepth &d) { return d.answerProbability; }, whole, Qt::SolidLine, tr("P(the answer)"));
    answer->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, whole, themeColors(m_spec.theme).background, 9));
    auto *greedy = new QCPGraph(x, y); // filled discs where greedy decoding names the answer
    for (const NeedleAtDepth &d : r.depths)
        if (d.greedy)
            greedy->addData(100.0 * d.depth, std::max(d.answerProbability, 1e-12));
    greedy->setLineStyle(QCPGraph::lsNone);
    greedy->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, whole, whole, 9));
    greedy->setName(tr("greedy decoding gives the answer"));
    double low = 1;
    for (const NeedleAtDepth &d : r.depths)
        low = std::min({low, d.answerProbability, d.firstTokenProbability});
    y->setScaleType(QCPAxis::stLogarithmic);
    y->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    y->setNumberFormat(QStringLiteral("g")); // the powers in full size: "1e-05", "0.001"
    y->setNumberPrecision(0);
    y->setRange(std::pow(10.0, std::floor(std::log10(std::max(low, 1e-12)))), 1.5);
    y->setLabel(tr("probability (log scale)"));
    x->setRange(-3, 103);
    x->setLabel(tr("depth of the needle (% of the document before it)"));
    setPanelTitle(rect, tr("How likely the answer is"));
    addLegend(3);
}

void NeedleView::drawGrid(const std::vector<NeedleResult> &runs)
{
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const auto logP = [](const NeedleAtDepth &d) { return std::log10(std::max(d.answerProbability, 1e-12)); };
    double low = -1;
    for (const NeedleResult &r : runs)
        for (const NeedleAtDepth &d : r.depths)
            low = std::min(low, std::floor(logP(d)));
    const size_t depths = runs.front().depths.size();
    QCPColorMap *map = addMatrixMap(
        rect, int(depths), int(runs.size()), [&](int d, int l) { return logP(runs[size_t(l)].depths[size_t(d)]); },
        colormap(m_spec.colormap), low, 0);
    auto *greedy = new QCPGraph(x, y); // rings where greedy decoding names the whole answer
    for (size_t l = 0; l < runs.size(); ++l)
        for (size_t d = 0; d < depths; ++d)
            if (runs[l].depths[d].greedy)
                greedy->addData(double(l), double(d));
    greedy->setLineStyle(QCPGraph::lsNone);
    const QColor ring = themeColors(m_spec.theme).text;
    greedy->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(ring, 2), Qt::NoBrush, 10));
    greedy->setName(tr("greedy decoding gives the answer"));
    auto lengths = QSharedPointer<QCPAxisTickerText>::create();
    for (size_t l = 0; l < runs.size(); ++l)
        lengths->addTick(double(l), QString::number(runs[l].tokens));
    x->setTicker(lengths);
    x->setLabel(tr("context length (tokens)"));
    auto depthTicks = QSharedPointer<QCPAxisTickerText>::create();
    const size_t every = std::max<size_t>(1, depths / 6);
    for (size_t d = 0; d < depths; d += every)
        depthTicks->addTick(double(d), formatPercent(runs.front().depths[d].depth));
    y->setTicker(depthTicks);
    y->setLabel(tr("depth of the needle"));
    addColorScale(0, 1, map, rect, tr("log\u2081\u2080 P(the answer)"));
    setPanelTitle(rect, tr("How likely the answer is"));
    addLegend(1);
}

QString NeedleView::gridText(const std::vector<NeedleResult> &runs) const
{
    int found = 0, cells = 0;
    const NeedleAtDepth *best = &runs.front().depths.front(), *worst = best;
    int bestLength = runs.front().tokens, worstLength = bestLength;
    for (const NeedleResult &r : runs)
        for (const NeedleAtDepth &d : r.depths) {
            ++cells;
            found += d.greedy;
            if (d.answerProbability > best->answerProbability) {
                best = &d;
                bestLength = r.tokens;
            }
            if (d.answerProbability < worst->answerProbability) {
                worst = &d;
                worstLength = r.tokens;
            }
        }
    return tr("Kamradt's grid: the needle \u201C%1\u201D put after the sentence end nearest before each depth of "
              "contexts of %2 lengths, \u201C%3\u201D closing each. Left: log\u2081\u2080 of P(\u201C%4\u201D), "
              "a ring where greedy decoding gives the answer (%5 of %6 cells). P(answer) is highest, %7, at %8 "
              "tokens with the needle at %9, and lowest, %10, at %11 tokens and %12. Right: each layer's share of the "
              "question's last token's attention on the needle in the longest context, heads averaged.")
        .arg(QString::fromStdString(m_spec.get(kNeedle)).trimmed())
        .arg(runs.size())
        .arg(QString::fromStdString(m_spec.get(kNeedleQuestion)).trimmed(),
            QString::fromStdString(m_spec.get(kNeedleAnswer)).trimmed())
        .arg(found)
        .arg(cells)
        .arg(QString::number(best->answerProbability, 'g', 3))
        .arg(bestLength)
        .arg(formatPercent(best->depth))
        .arg(QString::number(worst->answerProbability, 'g', 3))
        .arg(worstLength)
        .arg(formatPercent(worst->depth));
}

void NeedleView::drawAttention(const NeedleResult &r, int column)
{
    QCPAxisRect *rect = addAxisRect(0, column);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    double top = 0;
    for (const NeedleAtDepth &d : r.depths)
        for (float v : d.attention)
            top = std::max(top, double(v));
    QCPColorMap *map = addMatrixMap(
        rect, r.layers, int(r.depths.size()),
        [&](int layer, int d) { return double(r.depths[size_t(d)].attention[size_t(layer)]); },
        colormap(m_spec.colormap), 0, std::max(top, 1e-6));
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int every = std::max(1, int(r.depths.size()) / 6);
    for (size_t d = 0; d < r.depths.size(); d += size_t(every))
        ticker->addTick(double(d), formatPercent(r.depths[d].depth));
    x->setTicker(ticker);
    x->setLabel(tr("depth of the needle"));
    y->setLabel(tr("layer"));
    auto layers = QSharedPointer<QCPAxisTickerFixed>::create();
    layers->setTickStep(std::max(1, r.layers / 8));
    y->setTicker(layers);
    addColorScale(0, column + 1, map, rect, tr("share of the question's attention on the needle"));
    setPanelTitle(
        rect, column > 1 ? tr("Where the question looks, at %1 tokens").arg(r.tokens) : tr("Where the question looks"));
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::needle::makeView(QWidget *parent)
{
    return std::make_unique<NeedleView>(parent);
}
