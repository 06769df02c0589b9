#include "halting/haltingview.h"

#include "model/model.h"
#include "views/colormaps.h"
#include "views/palette.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace atlas {

HaltingView::HaltingView(QWidget *parent)
    : ResultPlotView(parent)
    , m_maxSteps(new QSpinBox(controlRow()))
{
    auto *row = static_cast<QHBoxLayout *>(controlRow()->layout());
    row->addWidget(new QLabel(tr("Applications at most"), controlRow()));
    m_maxSteps->setRange(0, Model::kMaxSharedSteps);
    m_maxSteps->setKeyboardTracking(false);
    m_maxSteps->setToolTip(tr("A Universal Transformer's shared block with halting applied at most this many times on "
                              "the input; 0 keeps the count it was trained with (spec key max_steps)"));
    row->addWidget(m_maxSteps);
    row->addStretch(1);
    connect(m_maxSteps, &QSpinBox::valueChanged, this,
        [this](int value) { editSpec([value](ViewSpec &s) { s.set(views::halting::kMaxSteps, value); }); });
    plot()->setToolTip(tr("Left: how much of each block's output ln_f reads for each token (p\u2099); a ring where the "
                          "token halted. Right: each position's ponder time N + R against the model's loss on the "
                          "next token there"));
}

QString HaltingView::pendingText() const
{
    return tr("Reading the halting of every token\u2026");
}

// The box shows the count run, "as trained (6)" at 0, and only a shared block's count can change.
void HaltingView::syncMaxSteps(const HaltingAnalysis &a)
{
    const QSignalBlocker block(m_maxSteps);
    m_maxSteps->setSpecialValueText(tr("as trained (%1)").arg(a.trained));
    m_maxSteps->setValue(m_spec.get(views::halting::kMaxSteps));
    m_maxSteps->setEnabled(a.sharedBlock);
}

QString HaltingView::draw(const HaltingAnalysis &a)
{
    syncMaxSteps(a);
    const QString depth = !a.sharedBlock ? tr("%1 blocks").arg(a.layers)
        : a.layers == a.trained ? tr("one block applied up to %1 times (a Universal Transformer)").arg(a.layers)
                                : tr("one block applied up to %1 times, trained with %2").arg(a.layers).arg(a.trained);
    setTitle(tr("Adaptive computation time \u00B7 %1, halting at \u03A3h \u2265 1 \u2212 \u03B5 = %2")
                 .arg(depth)
                 .arg(1.0 - a.epsilon, 0, 'g', 3));
    drawWeights(a);
    drawPonder(a);
    const double mean = a.meanPonder();
    QString text
        = tr("After block n a halting unit gives each token h\u2099 = \u03C3(w \u00B7 X\u2099 + b); the token halts at "
             "the first block N where h\u2081 + \u2026 + h\u2099 reaches 1 \u2212 \u03B5, and ln_f reads \u03A3 "
             "p\u2099 X\u2099: "
             "p\u2099 = h\u2099 before N, the remainder R = 1 \u2212 (h\u2081 + \u2026 + h\u2099\u208B\u2081) at N. ");
    const double blocks = std::accumulate(a.steps.begin(), a.steps.end(), 0.0) / std::max(1, a.tokens);
    if (a.sharedBlock)
        text += tr("Every block here is one block's weights, shared: block n is its n-th application. ");
    if (a.layers > a.trained) {
        const auto past = std::count_if(a.steps.begin(), a.steps.end(), [&](int n) { return n > a.trained; });
        text += tr("It was trained with at most %1 applications and %2 are allowed here: a token whose halting has not "
                   "reached 1 \u2212 \u03B5 after %1 runs on, where the trained model stopped it. %3 of %4 tokens "
                   "run past %1. ")
                    .arg(a.trained)
                    .arg(a.layers)
                    .arg(past)
                    .arg(a.tokens);
    } else if (a.layers < a.trained) {
        text += tr("It was trained with %1 applications and %2 are allowed here: a token still running at %2 halts "
                   "there, its remainder R given to the last application. ")
                    .arg(a.trained)
                    .arg(a.layers);
    }
    text += tr("Here a token runs %1 of %2 blocks on average (%3 of the work saved), and its ponder time N + R is %4. ")
                .arg(formatNumber(blocks, 3))
                .arg(a.layers)
                .arg(formatPercent(1.0 - blocks / a.layers), formatNumber(mean, 3));
    const double hard = a.quarterPonder(true), easy = a.quarterPonder(false);
    if (std::isfinite(hard))
        text += tr("The quarter of positions whose next token surprised the model most ponder %1 blocks, the least "
                   "surprising quarter %2 (correlation %3). ")
                    .arg(formatNumber(hard, 3), formatNumber(easy, 3), formatNumber(a.correlation(), 2));
    QStringList kinds;
    for (const auto &[kind, steps] : a.stepsByCharacter)
        if (std::isfinite(steps))
            kinds << tr("%1 %2").arg(QString::fromStdString(kind), formatNumber(steps, 3));
    if (!kinds.isEmpty())
        text += tr("Blocks run (N) by the character read: %1. ").arg(kinds.join(QStringLiteral(", ")));
    text += tr("Training adds \u03C4 times the mean ponder time to the loss, so a block costs something and a token "
               "halts where more blocks stop paying.");
    return text;
}

void HaltingView::drawWeights(const HaltingAnalysis &a)
{
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const int T = a.tokens, L = a.layers;
    QCPColorMap *map = addMatrixMap(
        rect, L, T, [&](int r, int t) { return a.weights[size_t(t * L + r)]; }, colormap(m_spec.colormap), 0, 1);
    addColorScale(0, 1, map, rect, tr("weight p\u2099"));
    const ThemeColors colors = themeColors(m_spec.theme);
    auto *halts = new QCPGraph(x, y);
    for (int t = 0; t < T; ++t)
        halts->addData(t, a.steps[size_t(t)] - 1);
    halts->setLineStyle(QCPGraph::lsNone);
    // rings fitted to a token's share of the map once it is laid out, as the Early exit view's marks
    const auto fitRings = [halts, rect = QPointer<QCPAxisRect>(rect), T, pen = QPen(colors.text, 1.5)] {
        if (rect)
            halts->setScatterStyle(
                QCPScatterStyle(QCPScatterStyle::ssCircle, pen, Qt::NoBrush, tokenMarkSize(rect, T)));
    };
    fitRings();
    connect(plot(), &QCustomPlot::afterLayout, halts, fitRings);
    halts->setAntialiasedScatters(T < kAntialiasedMarksBelow);
    setBlockByTokenAxes(x, y, T, L);
    setPanelTitle(rect, tr("How much of each block ln_f reads"));
}

void HaltingView::drawPonder(const HaltingAnalysis &a)
{
    QCPAxisRect *rect = addAxisRect(0, 2);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const QColor colour = seriesColours().at(0);
    auto *points = new QCPGraph(x, y);
    double most = 1;
    for (int t = 0; t < a.tokens; ++t)
        if (std::isfinite(a.surprise[size_t(t)])) {
            points->addData(a.surprise[size_t(t)], a.ponder[size_t(t)]);
            most = std::max(most, a.surprise[size_t(t)]);
        }
    points->setLineStyle(QCPGraph::lsNone);
    points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, 7));
    x->setRange(0, std::ceil(most + 0.5));
    x->setLabel(tr("loss on the next token (nats)"));
    y->setRange(0.8, a.layers + 1.2);
    setIntegerTicks(y);
    y->setLabel(tr("ponder time N + R (blocks)"));
    addReferenceLine(rect, Qt::Horizontal, a.meanPonder(), QPen(themeColors(m_spec.theme).text, 1.5, Qt::DashLine));
    setPanelTitle(rect,
        points->dataCount() > 0 ? tr("Ponder time against surprise")
                                : tr("Ponder time (the model predicts no next token)"));
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::halting::makeView(QWidget *parent)
{
    return std::make_unique<HaltingView>(parent);
}
