#include "earlyexit/earlyexitview.h"

#include "analysis/earlyexit.h"
#include "earlyexit/earlyexit.h"
#include "views/colormaps.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>

namespace atlas {

namespace {

const QColor &kDisagrees = palette::alert;

ExitRule ruleOf(const ViewSpec &spec)
{
    return parseExitRule(
        spec.get(views::earlyexit::kExitRule), "exit_rule"); // the spec's parser admits only the rules' names
}

int patienceOf(const ViewSpec &spec, int layers)
{
    return std::clamp(spec.get(views::earlyexit::kExitPatience), 1, std::max(1, layers - 1));
}

double settingOf(const ViewSpec &spec, int layers)
{
    return ruleOf(spec) == ExitRule::Confidence ? spec.get(views::earlyexit::kExitThreshold)
                                                : double(patienceOf(spec, layers));
}

// What the trade-off's vertical axis measures: next-token accuracy when the input scores it, else how often the exit
// prediction is the whole model's.
double scoreOf(const EarlyExitPoint &p)
{
    return p.accuracy >= 0 ? p.accuracy : p.agreement;
}

} // namespace

EarlyExitView::EarlyExitView(QWidget *parent)
    : ResultPlotView(parent)
    , m_rule(new QComboBox(controlRow()))
    , m_threshold(new QDoubleSpinBox(controlRow()))
    , m_patience(new QSpinBox(controlRow()))
{
    auto *row = static_cast<QHBoxLayout *>(controlRow()->layout());
    row->addWidget(new QLabel(tr("Exit by"), controlRow()));
    m_rule->addItem(tr("confidence: top probability \u2265 \u03B8"), QStringLiteral("confidence"));
    m_rule->addItem(tr("patience (PABEE): unchanged t times"), QStringLiteral("patience"));
    m_rule->setToolTip(tr("Confidence: a token stops after the first block whose most probable next token has "
                          "probability \u2265 \u03B8. Patience (Zhou et al. 2020): it stops once its prediction has "
                          "stayed the same t times in a row."));
    row->addWidget(m_rule);
    row->addWidget(new QLabel(tr("\u03B8"), controlRow()));
    m_threshold->setRange(0.05, 1.0);
    m_threshold->setSingleStep(0.05);
    m_threshold->setDecimals(2);
    m_threshold->setToolTip(tr("The confidence a block's prediction needs to stop the token there (spec key "
                               "exit_threshold)"));
    row->addWidget(m_threshold);
    row->addWidget(new QLabel(tr("t"), controlRow()));
    m_patience->setRange(1, 1);
    m_patience->setToolTip(tr("How many times in a row the prediction must stay unchanged (spec key exit_patience)"));
    row->addWidget(m_patience);
    row->addStretch(1);
    connect(m_rule, &QComboBox::activated, this, [this] {
        m_spec.set(views::earlyexit::kExitRule, m_rule->currentData().toString().toStdString());
        emit specEdited(m_spec);
    });
    connect(m_threshold, &QDoubleSpinBox::valueChanged, this, [this](double value) {
        m_spec.set(views::earlyexit::kExitThreshold, value);
        emit specEdited(m_spec);
    });
    connect(m_patience, &QSpinBox::valueChanged, this, [this](int value) {
        m_spec.set(views::earlyexit::kExitPatience, value);
        emit specEdited(m_spec);
    });
}

QString EarlyExitView::pendingText() const
{
    return tr("Reading every block's prediction through the output head…");
}

void EarlyExitView::syncControls(int layers)
{
    const QSignalBlocker blockRule(m_rule), blockThreshold(m_threshold), blockPatience(m_patience);
    m_rule->setCurrentIndex(m_rule->findData(QString::fromStdString(m_spec.get(views::earlyexit::kExitRule))));
    m_threshold->setValue(m_spec.get(views::earlyexit::kExitThreshold));
    m_patience->setRange(1, std::max(1, layers - 1));
    m_patience->setValue(patienceOf(m_spec, layers));
    const bool confidence = ruleOf(m_spec) == ExitRule::Confidence;
    m_threshold->setEnabled(confidence);
    m_patience->setEnabled(!confidence);
}

QString EarlyExitView::draw(const EarlyExitAnalysis &result)
{
    const EarlyExit &e = result.exit;
    syncControls(e.layers);
    const ExitRule rule = ruleOf(m_spec);
    const double setting = settingOf(m_spec, e.layers);
    const std::vector<int> exits = e.exitBlocks(rule, setting);
    const EarlyExitPoint now = e.measure(rule, setting);
    const QString settingText = rule == ExitRule::Confidence ? tr("\u03B8 = %1").arg(setting, 0, 'f', 2)
                                                             : tr("patience t = %1").arg(int(setting));
    setTitle(rule == ExitRule::Confidence ? tr("Early exit by confidence \u00B7 %1").arg(settingText)
                                          : tr("Early exit by patience (PABEE) \u00B7 t = %1").arg(int(setting)));
    drawExits(e, exits);
    drawTradeOff(e);

    QString text = rule == ExitRule::Confidence
        ? tr("A token stops after the first block i whose prediction, read through the final norm and output head, "
             "has top probability p\u1D62 \u2265 \u03B8. ")
        : tr("PABEE: cnt\u1D62 = cnt\u1D62\u208B\u2081 + 1 when block i predicts what block i \u2212 1 did, else 0; a "
             "token stops once cnt\u1D62 = t. ");
    text += tr("At %1, tokens run %2 of %3 blocks on average (%4 of the work saved), and %5 stop with the whole "
               "model's prediction")
                .arg(settingText, formatNumber(now.meanLayers, 3))
                .arg(e.layers)
                .arg(formatPercent(1.0 - now.meanLayers / e.layers), formatPercent(now.agreement));
    if (now.accuracy >= 0)
        text += tr("; next-token accuracy %1 against the whole model's %2")
                    .arg(formatPercent(now.accuracy), formatPercent(e.fullAccuracy));
    text += tr(". Left, each block's confidence: \u25CB a token stops there with the whole model's prediction, "
               "\u2715 with another. Right, every \u03B8 from 0.05 to 1 and %1. Each layer here "
               "reads the model's own head (the logit lens); a model trained for early exit gives every layer a "
               "classifier of its own.")
                .arg(e.layers > 2 ? tr("every t from 1 to %1").arg(e.layers - 1) : tr("t = 1"));
    return text;
}

void EarlyExitView::drawExits(const EarlyExit &e, const std::vector<int> &exits)
{
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const int T = e.tokens, L = e.layers;
    // Row r is block r + 1, drawn bottom-up as the blocks stack: a mark of block b sits at b − 1.
    QCPColorMap *map = addMatrixMap(
        rect, L, T, [&](int r, int t) { return e.confidenceAt(r + 1, t); }, colormap(m_spec.colormap), 0, 1);
    addColorScale(0, 1, map, rect, tr("top probability"));

    auto *agrees = new QCPGraph(x, y), *differs = new QCPGraph(x, y);
    for (int t = 0; t < T; ++t) {
        const int block = exits[size_t(t)];
        (e.predictionAt(block, t) == e.predictionAt(L, t) ? agrees : differs)->addData(t, block - 1);
    }
    const ThemeColors colors = themeColors(m_spec.theme);
    agrees->setName(tr("stops: the whole model's prediction"));
    differs->setName(tr("stops: another prediction"));
    // Marks fitted to a token's share of the axes once they are laid out (tokenMarkSize). Small marks are rings, a run
    // of them a thin line.
    // Called from the plot's layout as long as `agrees` lives; the other two may go first when the plot is cleared.
    const auto fitMarks
        = [agrees, differs = QPointer<QCPGraph>(differs), rect = QPointer<QCPAxisRect>(rect), T, colors] {
              if (!differs || !rect)
                  return;
              const double mark = tokenMarkSize(rect, T);
              agrees->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, colors.text, colors.background, mark));
              differs->setScatterStyle(mark >= 6
                      ? QCPScatterStyle(QCPScatterStyle::ssCross, QPen(kDisagrees, 2.5), Qt::NoBrush, mark + 1)
                      : QCPScatterStyle(QCPScatterStyle::ssDisc, kDisagrees, kDisagrees, mark + 1));
          };
    fitMarks();
    connect(plot(), &QCustomPlot::afterLayout, agrees, fitMarks);
    for (QCPGraph *g : {agrees, differs}) {
        g->setLineStyle(QCPGraph::lsNone);
        g->setAntialiasedScatters(T < kAntialiasedMarksBelow);
    }

    setBlockByTokenAxes(x, y, T, L);
    // The marks are named in the caption: a legend row would squeeze the map on a projector.
    setPanelTitle(rect, tr("Where each token stops"));
}

void EarlyExitView::drawTradeOff(const EarlyExit &e)
{
    QCPAxisRect *rect = addAxisRect(0, 2);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const QList<QColor> &series = seriesColours();
    const auto curve = [&](const std::vector<EarlyExitPoint> &points, const QString &name, const QColor &color,
                           QCPScatterStyle::ScatterShape shape) {
        auto *c = new QCPCurve(x, y);
        for (const EarlyExitPoint &p : points)
            c->addData(p.meanLayers, 100.0 * scoreOf(p));
        c->setName(name);
        c->setPen(QPen(color, 2));
        c->setScatterStyle(QCPScatterStyle(shape, color, color, 6));
        return c;
    };
    QCPCurve *confidence = curve(e.confidenceCurve, tr("confidence \u03B8"), series.at(0), QCPScatterStyle::ssDisc);
    QCPCurve *patience = curve(e.patienceCurve, tr("patience t"), series.at(1), QCPScatterStyle::ssSquare);

    const ThemeColors colors = themeColors(m_spec.theme);
    auto *whole = new QCPGraph(x, y);
    const EarlyExitPoint full = e.measure(ExitRule::Confidence, 2.0);
    whole->addData(full.meanLayers, 100.0 * scoreOf(full));
    whole->setLineStyle(QCPGraph::lsNone);
    whole->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssStar, QPen(colors.text, 2), Qt::NoBrush, 14));
    whole->setName(tr("every block"));

    auto *chosen = new QCPGraph(x, y);
    const EarlyExitPoint now = e.measure(ruleOf(m_spec), settingOf(m_spec, e.layers));
    chosen->addData(now.meanLayers, 100.0 * scoreOf(now));
    chosen->setLineStyle(QCPGraph::lsNone);
    chosen->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kDisagrees, 3), Qt::NoBrush, 18));
    chosen->setName(tr("this setting"));

    x->setRange(0.8, e.layers + 0.2);
    setIntegerTicks(x);
    x->setLabel(tr("blocks run per token (mean)"));
    y->setRange(0, 105);
    y->setLabel(full.accuracy >= 0 ? tr("next-token accuracy (%)") : tr("stops with the whole model's prediction (%)"));
    setPanelTitle(rect, tr("Blocks run against accuracy"));
    addPanelLegend(rect, {confidence, patience});
    // The two marked points are named beside them: one legend row fits a projector, two squeeze the axes.
    const auto nameBeside = [&](const EarlyExitPoint &p, const QString &text, Qt::Alignment side) {
        auto *label = new QCPItemText(plot());
        label->setClipAxisRect(rect);
        label->position->setAxes(x, y);
        label->position->setCoords(p.meanLayers, 100.0 * scoreOf(p));
        label->setPositionAlignment(side);
        label->setPadding(QMargins(10, 0, 10, 10));
        label->setText(text);
        label->setColor(colors.text);
        label->setFont(sizedFont(font(), 9));
    };
    nameBeside(full, tr("every block"), Qt::AlignRight | Qt::AlignBottom);
    nameBeside(now, tr("this setting"), Qt::AlignHCenter | Qt::AlignBottom);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::earlyexit::makeView(QWidget *parent)
{
    return std::make_unique<EarlyExitView>(parent);
}
