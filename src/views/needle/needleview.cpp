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
    return tr("%v of %m depths run");
}

void NeedleView::syncControls(int tokens)
{
    const QSignalBlocker blockTokens(m_tokens), blockDepths(m_depths), blockHaystack(m_haystack);
    m_tokens->setValue(tokens);
    m_depths->setValue(m_spec.get(kNeedleDepths));
    m_haystack->setCurrentIndex(m_haystack->findData(QString::fromStdString(m_spec.get(kHaystack))));
}

QString NeedleView::draw(const NeedleAnalysis &a)
{
    const NeedleResult &r = a.result;
    syncControls(r.tokens);
    setTitle(tr("Needle in a haystack \u00B7 %1 \u00B7 %2 tokens of %3")
                 .arg(QString::fromStdString(r.model))
                 .arg(r.tokens)
                 .arg(a.haystack == "input" ? tr("the Input box's text") : tr("the novel")));
    drawProbabilities(r);
    drawAttention(r);

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

void NeedleView::drawAttention(const NeedleResult &r)
{
    QCPAxisRect *rect = addAxisRect(0, 1);
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
        ticker->addTick(double(d), QString::number(std::lround(100.0 * r.depths[d].depth)) + QStringLiteral("%"));
    x->setTicker(ticker);
    x->setLabel(tr("depth of the needle"));
    y->setLabel(tr("layer"));
    auto layers = QSharedPointer<QCPAxisTickerFixed>::create();
    layers->setTickStep(std::max(1, r.layers / 8));
    y->setTicker(layers);
    addColorScale(0, 2, map, rect, tr("share of the question's attention on the needle"));
    setPanelTitle(rect, tr("Where the question looks"));
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::needle::makeView(QWidget *parent)
{
    return std::make_unique<NeedleView>(parent);
}
