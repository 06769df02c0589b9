// Widget tests of the attention views on models with grouped-query attention, sinks and attention kept on demand
// (Attention, Mask, All heads, Next token, Token lines), drawn from the fixture models.
#include "attentionmap/attentionview.h"
#include "engine/attentiontrace.h"
#include "heads/headsgridview.h"
#include "mask/maskview.h"
#include "nexttoken/nexttokenview.h"
#include "testbundle.h"
#include "tokenlines/tokenlinesview.h"
#include "view/analysisrequests.h"
#include "view/viewanalysis.h"
#include "views/heatmapplot.h"
#include "views/pooledhead.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTest>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

using namespace atlas;

namespace {

// Fixture `model`'s layer 1, head 2 on six tokens in `view` (800 × 600), as `kind`; returns the input it shows.
ViewInput showFixture(View &view, const char *kind, const char *model)
{
    ViewSpec spec;
    spec.view = kind;
    spec.model = QString(ATLAS_TEST_DATA "/%1").arg(model).toStdString();
    spec.tokens = {3, 17, 42, 8, 0, 25};
    spec.layer = 1;
    spec.head = 2;
    view.resize(800, 600);
    view.setSpec(spec);
    ViewInput input = testing::forSpec(spec);
    view.setInput(input);
    return input;
}

// The fixture drawn in `whole` as showFixture draws it, and in `onDemand` from a run one byte over that trace's
// budget, so that it keeps its attention on demand; returns the on-demand run's input.
ViewInput showOnDemandToo(View &whole, View &onDemand, const char *kind, const char *model)
{
    const ViewInput wholeInput = showFixture(whole, kind, model);
    const SpecRun run = runSpec(whole.spec(), wholeInput.program->tracedBytes() - 1);
    ViewInput input = testing::analyzed(makeViewInput(run), whole.spec());
    onDemand.resize(800, 600);
    onDemand.setSpec(whole.spec());
    onDemand.setInput(input);
    return input;
}

} // namespace

class TestModelViews : public QObject
{
    Q_OBJECT

private slots:
    void attentionViewsNameTheSharedKeyValueHead();
    void attentionViewDrawsTheSinkAsAColumn();
    void attentionViewReadsAHeadKeptOnDemand();
    void nextTokenViewReadsAPositionKeptOnDemand();
    void maskViewReadsAHeadKeptOnDemand();
    void aLargeHeadKeptOnDemandIsComputedOnAWorker();
    void theMaskViewPoolsALargeHeadFromItsTiles();
    void allHeadsNumberEachHeadsSink();
    void rerunViewsRefuseAttentionTheyDoNotRerun();
};

// Grouped-query attention: the Attention view's title and the All heads view name the K/V head a query head reads and
// the heads that share it; a model with a K/V head per query head shows nothing of the kind.
void TestModelViews::attentionViewsNameTheSharedKeyValueHead()
{
    for (const char *model : {"mistral_tiny", "gpt2_tiny"}) {
        AttentionView view;
        const ViewInput input = showFixture(view, "attention", model);
        const bool grouped = QString(model) == "mistral_tiny"; // 4 query heads, 2 K/V heads
        QCOMPARE(view.plot()->title().contains("K/V head 1, shared by heads 2\u20133"), grouped);
        QCOMPARE(keyValueGroup(input, 3), grouped ? 1 : -1);
        QCOMPARE(keyValueGroup(input, 1), grouped ? 0 : -1);
    }
}

// gpt-oss: the Attention view puts each row's sink share first and the keys after it, so that each row of the map
// sums to 1; the sink's cell says what it is, and a key's cell is the key's own. A model without sinks has no such
// column.
void TestModelViews::attentionViewDrawsTheSinkAsAColumn()
{
    for (const char *model : {"gpt_oss_tiny", "mistral_tiny"}) {
        AttentionView view;
        const ViewInput input = showFixture(view, "attention", model);
        const bool sinks = QString(model) == "gpt_oss_tiny";
        const Pooled &drawn = view.plot()->pooled();
        QCOMPARE(drawn.rows, 6);
        QCOMPARE(drawn.cols, sinks ? 7 : 6);
        const Tensor &probs = input.trace->tensor("layer.1.attn.probs");
        for (int r = 0; r < 6; ++r) {
            double sum = 0;
            for (int c = 0; c < drawn.cols; ++c) // a masked cell is drawn as −∞
                if (const float v = drawn.values[size_t(r * drawn.cols + c)]; std::isfinite(v))
                    sum += v;
            QVERIFY2(
                std::abs(sum - 1.0) < 1e-5, qPrintable(QString("%1 row %2 sums to %3").arg(model).arg(r).arg(sum)));
            if (sinks)
                QCOMPARE(drawn.values[size_t(r * drawn.cols)], input.trace->tensor("layer.1.attn.sink").matrix()(2, r));
            const float key0 = drawn.values[size_t(r * drawn.cols + drawn.cols - 6)]; // −∞ where a window masks it
            QCOMPARE(std::isfinite(key0) ? key0 : 0.0f, probs.slice(2).data()[r * 6]);
        }
        QCOMPARE(view.cellText(4, 0).contains("sink took"), sinks);
        double first = 0; // the first token's weight averaged over the later queries, named on the key axis
        for (int r = 1; r < 6; ++r)
            first += probs.slice(2).data()[r * 6] / 5.0;
        const QString axis = view.plot()->xAxis->label();
        QVERIFY2(axis.contains("takes " + QString::number(100.0 * first, 'f', 0) + " % of the later rows"),
            qPrintable(axis));
        QCOMPARE(axis.contains("the head's sink"), sinks);
        QCOMPARE(view.cellText(4, sinks ? 2 : 1),
            cellPrefix(input, 4, 1) + ":" + attentionCellText(input, 1, 2, 4, 1, true));
        // One token: no later rows to average, so no first-token figure (it read −100 %)
        ViewSpec one;
        one.view = "attention";
        one.model = QString(ATLAS_TEST_DATA "/%1").arg(model).toStdString();
        one.tokens = {3};
        view.setSpec(one);
        view.setInput(testing::forSpec(one));
        QVERIFY2(!view.plot()->xAxis->label().contains("first token"), qPrintable(view.plot()->xAxis->label()));
    }
}

// A run whose whole matrices are over the budget keeps its attention on demand (engine/attentiontrace.h): the
// Attention view computes its head from q, k and each row's log-sum-exp and draws what the whole trace would (gpt-oss's
// sinks and window, Gemma 2's soft-cap and window), and so do Token lines (the layer recomputed once) and All heads
// (every head on its worker).
void TestModelViews::attentionViewReadsAHeadKeptOnDemand()
{
    for (const char *model : {"gpt_oss_tiny", "gemma2_tiny", "llama_tiny"}) {
        AttentionView whole, onDemand;
        const ViewInput input = showOnDemandToo(whole, onDemand, "attention", model);
        const ViewInput &wholeInput = whole.input();
        const ViewSpec spec = whole.spec();
        QVERIFY2(input.program->producerOf("layer.1.attn.lse") >= 0, model);
        QVERIFY(!input.trace->find("layer.1.attn.probs"));
        const Pooled &a = whole.plot()->pooled(), &b = onDemand.plot()->pooled();
        QVERIFY2(!onDemand.plot()->showingMessage(), qPrintable(onDemand.plot()->message()));
        QCOMPARE(b.rows, a.rows);
        QCOMPARE(b.cols, a.cols);
        for (size_t i = 0; i < a.values.size(); ++i)
            QVERIFY2(
                std::isfinite(a.values[i]) ? std::abs(a.values[i] - b.values[i]) < 1e-5 : a.values[i] == b.values[i],
                qPrintable(
                    QString("%1 cell %2: %3 on demand, %4 whole").arg(model).arg(i).arg(b.values[i]).arg(a.values[i])));
        QCOMPARE(onDemand.plot()->xAxis->label(), whole.plot()->xAxis->label());
        for (const char *stage : {"attn.probs", "attn.scores", "attn.masked"}) {
            float x = 0, y = 0;
            QVERIFY(findHeadCell(wholeInput, 1, stage, 2, 4, 1, &x));
            QVERIFY(findHeadCell(input, 1, stage, 2, 4, 1, &y));
            QVERIFY2(std::abs(x - y) < 1e-5,
                qPrintable(QString("%1 %2: %3 on demand, %4 whole").arg(model, stage).arg(y).arg(x)));
        }
        QVERIFY(onDemand.cellText(4, 2).contains("probability"));
        QVERIFY(onDemand.cellText(1, 5).contains("masked") || QString(model) == "gpt_oss_tiny");

        // Token lines: every head of the layer, recomputed once, the same lines
        ViewSpec lines = spec;
        lines.view = "lines";
        lines.head = -1;
        TokenLinesView lineView, wholeLines;
        for (auto [view, shown] : {std::pair {&lineView, &input}, std::pair {&wholeLines, &wholeInput}}) {
            view->resize(800, 600);
            view->setSpec(lines);
            view->setInput(testing::analyzed(*shown, lines));
        }
        const std::vector<TokenLinesView::Segment> drawnLines = lineView.segments(), wholeDrawn = wholeLines.segments();
        QVERIFY(!drawnLines.empty());
        QCOMPARE(drawnLines.size(), wholeDrawn.size());
        for (size_t i = 0; i < drawnLines.size(); ++i)
            QVERIFY(std::abs(drawnLines[i].weight - wholeDrawn[i].weight) < 1e-5f);

        // All heads: every thumbnail and first-key or sink share as the whole trace's
        ViewSpec all = spec;
        all.view = "heads";
        HeadsGridView heads, wholeHeads;
        for (auto [view, shown] : {std::pair {&heads, &input}, std::pair {&wholeHeads, &wholeInput}}) {
            view->resize(800, 600);
            view->setSpec(all);
            view->setInput(testing::analyzed(*shown, all));
        }
        QVERIFY2(heads.message().isEmpty(), qPrintable(heads.message()));
        for (int l = 0; l < input.layers; ++l)
            for (int h = 0; h < input.heads; ++h) {
                QVERIFY(std::abs(heads.sinkShare(l, h) - wholeHeads.sinkShare(l, h)) < 1e-5f);
                const QImage a = heads.thumbnail(l, h), b = wholeHeads.thumbnail(l, h);
                QVERIFY(!a.isNull());
                QCOMPARE(a.size(), b.size());
                int differing = 0; // a colour step apart at most, where rounding moves a value across one
                for (int y = 0; y < a.height(); ++y)
                    for (int x = 0; x < a.width(); ++x)
                        differing += a.pixel(x, y) != b.pixel(x, y);
                QVERIFY2(differing <= a.width() * a.height() / 50,
                    qPrintable(QString("%1 head %2.%3: %4 pixels differ").arg(model).arg(l).arg(h).arg(differing)));
            }
    }
}

// gpt-oss: All heads writes each head's mean sink share on it (reverse-gpt-oss's layer 1 heads 2 and 3 above a half,
// as lesson 25 says) and ranks the three largest; a model without sinks gets its first token's mean weight over the
// later queries instead, the sink such models learn.
// A run kept on demand holds no [T, V] tensor: the Next token view computes the position it shows from the last
// stream, through the model's own head (Gemma 2's soft-cap, BERT's transform and bias), with the whole run's bars.
void TestModelViews::nextTokenViewReadsAPositionKeptOnDemand()
{
    for (const char *model : {"gemma2_tiny", "bert_tiny", "llama_tiny"}) {
        for (const int position : {-1, 2}) {
            NextTokenView whole, onDemand;
            ViewSpec spec;
            spec.view = "next-token";
            spec.model = QString(ATLAS_TEST_DATA "/%1").arg(model).toStdString();
            spec.tokens = {3, 17, 42, 8, 0, 25};
            spec.position = position;
            const ViewInput wholeInput = testing::forSpec(spec);
            whole.setSpec(spec);
            whole.setInput(wholeInput);
            const SpecRun run = runSpec(spec, wholeInput.program->tracedBytes() - 1);
            QVERIFY2(!run.trace->contains("next_probs") && !run.trace->contains("logits"), model);
            onDemand.setSpec(spec);
            onDemand.setInput(makeViewInput(run));
            QVERIFY2(onDemand.message().isEmpty(), qPrintable(onDemand.message()));
            QCOMPARE(onDemand.position(), position < 0 ? 5 : position);
            QCOMPARE(onDemand.title(), whole.title());
            QCOMPARE(onDemand.bars().size(), whole.bars().size());
            for (size_t i = 0; i < whole.bars().size(); ++i) {
                QCOMPARE(onDemand.bars()[i].id, whole.bars()[i].id);
                QVERIFY2(std::abs(onDemand.bars()[i].probability - whole.bars()[i].probability) < 1e-6,
                    qPrintable(QString("%1 bar %2: %3 on demand, %4 whole")
                                   .arg(model)
                                   .arg(i)
                                   .arg(onDemand.bars()[i].probability)
                                   .arg(whole.bars()[i].probability)));
            }
        }
    }
}

// The Mask view on a run kept on demand: the scores (soft-capped for Gemma 2), the mask from the layer's rule and the
// probabilities, each panel and each hovered cell as the whole run's, the cap's panel the same points.
void TestModelViews::maskViewReadsAHeadKeptOnDemand()
{
    for (const char *model : {"gemma2_tiny", "gpt_oss_tiny", "llama_tiny"}) {
        MaskView whole, onDemand;
        QVERIFY2(!showOnDemandToo(whole, onDemand, "mask", model).trace->contains("layer.1.attn.scores"), model);
        for (const auto &[a, b] :
            {std::pair {whole.scoresPlot(), onDemand.scoresPlot()}, std::pair {whole.maskPlot(), onDemand.maskPlot()},
                std::pair {whole.probsPlot(), onDemand.probsPlot()}}) {
            QVERIFY2(!b->showingMessage(), qPrintable(QString(model) + ": " + b->message()));
            const Pooled &x = a->pooled(), &y = b->pooled();
            QCOMPARE(y.rows, x.rows);
            QCOMPARE(y.cols, x.cols);
            for (size_t i = 0; i < x.values.size(); ++i)
                QVERIFY2(std::isfinite(x.values[i]) ? std::abs(x.values[i] - y.values[i]) < 1e-4
                                                    : x.values[i] == y.values[i],
                    qPrintable(QString("%1 cell %2: %3 on demand, %4 whole")
                                   .arg(model)
                                   .arg(i)
                                   .arg(y.values[i])
                                   .arg(x.values[i])));
            for (const auto &[r, c] : {std::pair {4, 1}, std::pair {1, 4}, std::pair {5, 5}}) {
                a->replot(QCustomPlot::rpImmediateRefresh);
                b->replot(QCustomPlot::rpImmediateRefresh);
                const QString text = a->hoverTextAt(a->cellCenter(r, c));
                QVERIFY(!text.isEmpty());
                QCOMPARE(b->hoverTextAt(b->cellCenter(r, c)), text);
            }
        }
        // The probabilities hatch the keys the causal mask hid, as the Attention view does, whole and on demand.
        for (MaskView *view : {&whole, &onDemand}) {
            QVERIFY2(view->probsPlot()->pooled().hasNegInf, model);
            QVERIFY2(std::isnan(view->probsPlot()->colorMap()->data()->cell(4, 1)), model); // query 1's key 4
        }
        QCOMPARE(onDemand.caption()->text(), whole.caption()->text());
    }
}

namespace {

// `view` of tiny-bytes' layer 1, head `head`, on 2100 letters (a, then every `step`-th letter of the alphabet): past
// HeatmapPlot::kPoolOnWorkerCells, so a run that keeps attention on demand pools its heads from their tiles.
ViewSpec longTinyBytesSpec(const char *view, int step, int head)
{
    ViewSpec spec;
    spec.view = view;
    spec.model = "tiny-bytes";
    for (int t = 0; t < 2100; ++t)
        spec.tokens.push_back('a' + (t * step) % 26);
    spec.layer = 1;
    spec.head = head;
    return spec;
}

} // namespace

// Past HeatmapPlot::kPoolOnWorkerCells (2100² cells here) a shown Attention view computes an on-demand head on a
// worker: the window's thread is back at once with a message, and the picture that lands is the one drawn headless.
void TestModelViews::aLargeHeadKeptOnDemandIsComputedOnAWorker()
{
    const ViewSpec spec = longTinyBytesSpec("attention", 7, 3);
    const SpecRun run = runSpec(spec, size_t(64) << 20);
    QVERIFY(run.trace->contains("layer.1.attn.lse"));
    const ViewInput input = makeViewInput(run);
    AttentionView headless;
    headless.resize(800, 600);
    headless.setInputAndSpec(input, spec);
    QWidget window; // owns the shown view
    auto *shown = new AttentionView(&window);
    (new QVBoxLayout(&window))->addWidget(shown);
    window.resize(800, 600);
    window.show();
    shown->setInputAndSpec(input, spec);
    QVERIFY(shown->drawing());
    QVERIFY2(shown->plot()->message().startsWith("Computing head 3 of layer 1"), qPrintable(shown->plot()->message()));
    QTRY_VERIFY_WITH_TIMEOUT(!shown->drawing(), 30000);
    QVERIFY(!shown->plot()->showingMessage());
    shown->plot()->finishPooling();
    headless.plot()->finishPooling();
    QCOMPARE(shown->plot()->matrixRows(), 2100);
    QCOMPARE(shown->plot()->colorMap()->data()->keySize(), headless.plot()->colorMap()->data()->keySize());
    QCOMPARE(shown->plot()->displayedValue(2000, 1500), headless.plot()->displayedValue(2000, 1500));
    QCOMPARE(shown->plot()->displayedValue(100, 1500), headless.plot()->displayedValue(100, 1500)); // masked
    // The picture pooled from the head's tiles is the whole head's, pooled: each block the mean of the probabilities
    // its queries see, −∞ where they see none.
    const auto readout = findAttentionReadout(input, 1);
    const Tensor probs = readout->head(ops::ScoreStage::Probs, 3), mask = readout->head(ops::ScoreStage::Mask, 3);
    const Pooled &drawn = shown->plot()->pooled();
    QVERIFY(drawn.blockRows > 1 && drawn.blockCols > 1);
    std::vector<double> sums(drawn.values.size()), counts(drawn.values.size());
    for (int r = 0; r < 2100; ++r)
        for (int c = 0; c < 2100; ++c)
            if (!std::isinf(mask.matrix()(r, c))) {
                const size_t cell = size_t((r / drawn.blockRows) * drawn.cols + c / drawn.blockCols);
                sums[cell] += probs.matrix()(r, c);
                counts[cell] += 1;
            }
    for (size_t cell = 0; cell < sums.size(); ++cell) {
        if (counts[cell] == 0) {
            QCOMPARE(drawn.values[cell], -std::numeric_limits<float>::infinity());
            continue;
        }
        const double mean = sums[cell] / counts[cell];
        QVERIFY2(std::abs(drawn.values[cell] - mean) <= 1e-6 * (1 + mean),
            qPrintable(QString("block %1: %2 against %3").arg(cell).arg(drawn.values[cell]).arg(mean)));
    }
    // Zoomed into 90 × 120 cells across the diagonal: each drawn cell is the head's own, masked ones −∞; the window
    // stays when another head is shown.
    headless.plot()->setCellWindow({1000, 90, 960, 120});
    const Pooled &zoomed = headless.plot()->pooled();
    QCOMPARE(zoomed.blockRows, 1);
    QCOMPARE(zoomed.blockCols, 1);
    for (int r = 0; r < 90; ++r)
        for (int c = 0; c < 120; ++c) {
            const float v = zoomed.at(r, c), p = probs.matrix()(1000 + r, 960 + c);
            if (std::isinf(mask.matrix()(1000 + r, 960 + c)))
                QVERIFY(std::isinf(v) && v < 0);
            else
                QVERIFY2(std::abs(v - p) <= 1e-6 * (1 + p),
                    qPrintable(QString("(%1, %2): %3, not %4").arg(r).arg(c).arg(v).arg(p)));
        }
    ViewSpec next = spec;
    next.head = 1;
    headless.setInputAndSpec(input, next);
    QCOMPARE(headless.plot()->cellWindow(), (CellWindow {1000, 90, 960, 120}));
    shown->plot()->setCellWindow({1000, 90, 960, 120});
    QTRY_VERIFY_WITH_TIMEOUT(!shown->drawing(), 30000);
    QVERIFY(shown->plot()->pooled().blockRows == 1 && shown->plot()->zoomed());
    if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty()) {
        QTest::qWait(200); // the queued replot
        window.grab().save(dir + "/attention-2100-zoomed.png");
    }
}

// The Mask view's three panels of a head past HeatmapPlot::kPoolOnWorkerCells, kept on demand, are pooled from its
// tiles (no 2100² matrix made), and draw what the whole trace's tensors draw: the scores, the mask, the probabilities.
void TestModelViews::theMaskViewPoolsALargeHeadFromItsTiles()
{
    const ViewSpec spec = longTinyBytesSpec("mask", 5, 2);
    const SpecRun onDemandRun = runSpec(spec, size_t(64) << 20), wholeRun = runSpec(spec, size_t(8) << 30);
    QVERIFY(!onDemandRun.trace->contains("layer.1.attn.scores") && wholeRun.trace->contains("layer.1.attn.scores"));
    MaskView whole, onDemand;
    for (MaskView *view : {&whole, &onDemand})
        view->resize(1200, 500);
    whole.setInputAndSpec(makeViewInput(wholeRun), spec);
    onDemand.setInputAndSpec(makeViewInput(onDemandRun), spec);
    QVERIFY(largeHeadReadout(onDemand.input(), 1, 2) && !largeHeadReadout(whole.input(), 1, 2));
    for (const auto &[a, b] : {std::pair {whole.scoresPlot(), onDemand.scoresPlot()},
             std::pair {whole.maskPlot(), onDemand.maskPlot()}, std::pair {whole.probsPlot(), onDemand.probsPlot()}}) {
        QVERIFY2(!b->showingMessage(), qPrintable(b->message()));
        const Pooled &x = a->pooled(), &y = b->pooled();
        QVERIFY(x.blockRows > 1 && x.blockCols > 1);
        QCOMPARE(y.rows, x.rows);
        QCOMPARE(y.cols, x.cols);
        for (size_t i = 0; i < x.values.size(); ++i)
            QVERIFY2(std::isfinite(x.values[i])
                    ? std::abs(x.values[i] - y.values[i]) < 1e-5 * (1 + std::abs(x.values[i]))
                    : x.values[i] == y.values[i],
                qPrintable(QString("cell %1: %2 on demand, %3 whole").arg(i).arg(y.values[i]).arg(x.values[i])));
    }
}

void TestModelViews::allHeadsNumberEachHeadsSink()
{
    for (const char *model : {"reverse-gpt-oss", "reverse-llama"}) {
        ViewSpec spec;
        spec.view = "heads";
        spec.model = model;
        spec.text = "dsfacdd>ddcafsd";
        HeadsGridView view;
        view.resize(1000, 600);
        view.setSpec(spec);
        const ViewInput input = testing::forSpec(spec);
        view.setInput(input);
        const bool sinks = QString(model) == "reverse-gpt-oss";
        QCOMPARE(view.learnedSinks(), sinks);
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 4; ++h) {
                const std::string layer = "layer." + std::to_string(l);
                if (sinks) {
                    const Tensor &share = input.trace->tensor(layer + ".attn.sink");
                    QVERIFY(std::abs(view.sinkShare(l, h) - share.matrix().row(h).mean()) < 1e-6f);
                    continue;
                }
                const Tensor &probs = input.trace->tensor(layer + ".attn.probs");
                const int64_t T = probs.dim(1);
                double first = 0;
                for (int64_t q = 1; q < T; ++q)
                    first += probs.slice(h).data()[q * T] / double(T - 1);
                QVERIFY(std::abs(view.sinkShare(l, h) - first) < 1e-6);
            }
        if (sinks)
            QVERIFY(view.sinkShare(1, 2) > 0.5f && view.sinkShare(1, 3) > 0.5f);
    }
}

// The views that rerun one head as softmax(QKᵀ/√d) from its q, k and v (Kernels, Scaling, Approximation) say why
// they cannot where the model's attention is something else: gpt-oss's sinks, Mistral's window shorter than the text
// (but Scaling, whose caption says so), Gemma 2's soft-cap; Llama's plain attention reruns.
void TestModelViews::rerunViewsRefuseAttentionTheyDoNotRerun()
{
    const std::pair<const char *, const char *> cases[] = {{"gpt_oss_tiny", "a learned sink logit"},
        {"mistral_tiny", "sees only the last 4 keys"}, {"gemma2_tiny", "soft-caps them"}, {"llama_tiny", ""}};
    for (const auto &[model, why] : cases)
        for (const char *kind : {"kernels", "scaling", "approximation"}) {
            // Scaling's caption says a window is not applied (tst_scalingview)
            const bool refused = *why && !(QString(kind) == "scaling" && QString(model) == "mistral_tiny");
            ViewSpec spec;
            spec.view = kind;
            spec.model = QString(ATLAS_TEST_DATA "/%1").arg(model).toStdString();
            spec.tokens = {3, 17, 42, 8, 0, 25};
            spec.layer = 1;
            const QString problem
                = QString::fromStdString(analysisRequest(spec, analysisContext(testing::forSpec(spec))).problem);
            QVERIFY2(refused ? problem.contains(why) : problem.isEmpty(),
                qPrintable(QString("%1 on %2: %3").arg(kind, model, problem)));
        }
}

QTEST_MAIN(TestModelViews)
#include "tst_modelviews.moc"
