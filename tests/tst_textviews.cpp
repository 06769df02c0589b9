#include "attentionmap/attentionview.h"
#include "engine/temperature.h"
#include "heads/headsgridview.h"
#include "layouttesting.h"
#include "mask/maskview.h"
#include "neuron/neuron.h"
#include "neuron/neuronview.h"
#include "nexttoken/nexttoken.h"
#include "nexttoken/nexttokenview.h"
#include "testbundle.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizerview.h"
#include "tokenlines/tokenlines.h"
#include "tokenlines/tokenlinesview.h"
#include "tracedtensor/tensorview.h"
#include "util/error.h"
#include "views/tokenchipstrip.h"
#include "views/viewfactory.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QtTest>

#include <cmath>
#include <limits>

using namespace atlas;

namespace {

constexpr int kT = 5;
constexpr int kV = 10;

// Causal attention of one head: row i spreads over keys 0..i; query 4 puts 0.9 on key 1.
Tensor makeProbs(int heads, int tokens, bool zero = false)
{
    Tensor a({heads, tokens, tokens});
    for (int h = 0; h < heads; ++h) {
        MatrixMap m = a.slice(h);
        for (int i = 0; i < tokens && !zero; ++i) {
            for (int j = 0; j <= i; ++j)
                m(i, j) = 1.0f / float(i + 1);
        }
    }
    if (!zero && tokens == kT) {
        MatrixMap m = a.slice(0);
        m.row(4).setZero();
        m(4, 1) = 0.9f;
        m(4, 4) = 0.1f;
    }
    return a;
}

std::shared_ptr<Trace> makeTrace(bool zeroAttention = false, int tokens = kT)
{
    auto trace = std::make_shared<Trace>();
    Tensor q({2, tokens, 4});
    for (int64_t i = 0; i < q.numel(); ++i)
        q.data()[i] = float(i) * 0.25f - 3.0f;
    trace->put("layer.0.attn.q", "Q_h = Q[:, h·d : (h+1)·d]", 3, q);
    trace->put("layer.0.attn.probs", "A = softmax(S')", 6, makeProbs(2, tokens, zeroAttention));
    trace->put("layer.1.attn.probs", "A = softmax(S')", 16, makeProbs(2, tokens, zeroAttention));

    Tensor masked({2, tokens, tokens});
    for (int h = 0; h < 2; ++h)
        for (int i = 0; i < tokens; ++i)
            for (int j = 0; j < tokens; ++j)
                masked.slice(h)(i, j) = j > i ? -std::numeric_limits<float>::infinity() : float(i - j) - 1.0f;
    trace->put("layer.0.attn.masked", "S' = S where allowed, else -inf", 5, masked);

    Tensor next({tokens, kV});
    for (int t = 0; t < tokens; ++t) {
        // Row t: id (t + k) % V gets weight proportional to (k + 1): a known, distinct order per row.
        float sum = 0;
        for (int k = 0; k < kV; ++k)
            sum += float(k + 1);
        for (int k = 0; k < kV; ++k)
            next.data()[t * kV + (t + k) % kV] = float(k + 1) / sum;
    }
    trace->put("next_probs", "p = softmax(Z)", 30, next);
    return trace;
}

ViewInput makeInput(std::shared_ptr<const Trace> trace, int tokens = kT)
{
    ViewInput in;
    in.trace = std::move(trace);
    const QStringList words = {"The", " cat", " sat", " on", " mat"};
    for (int t = 0; t < tokens; ++t)
        in.tokens << (t < words.size() ? words[t] : QStringLiteral("w%1").arg(t));
    in.vocabLabel = [](int id) { return QStringLiteral("'v%1' (#%1)").arg(id); };
    in.layers = 2;
    in.heads = 2;
    in.program = testing::programFor(2, 2, tokens);
    return in;
}

ViewSpec spec(const std::string &kind)
{
    ViewSpec s;
    s.view = kind;
    return s;
}

} // namespace

class TestTextViews : public QObject
{
    Q_OBJECT

private slots:
    void nextTokenBarsAreTopKDescending()
    {
        NextTokenView view;
        view.resize(700, 420);
        ViewSpec s = spec("next-token");
        s.topK = 3;
        s.position = 2;
        view.setSpec(s);
        view.setInput(makeInput(makeTrace()));
        QVERIFY(view.message().isEmpty());
        QCOMPARE(view.position(), 2);
        // Row 2: id (2 + k) % 10 has weight k + 1, so the top three are ids 1, 0, 9 with 10, 9, 8 / 55.
        const auto &bars = view.bars();
        QCOMPARE(bars.size(), size_t(3));
        const int ids[] = {1, 0, 9};
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(bars[size_t(i)].id, ids[i]);
            QCOMPARE(bars[size_t(i)].probability, double(float(10 - i) / 55.0f));
            QCOMPARE(bars[size_t(i)].label, QStringLiteral("'v%1' (#%1)").arg(ids[i]));
        }
        QCOMPARE(view.title(), QStringLiteral("Next token after ' sat' (position 2)"));

        auto *plottable = qobject_cast<QCPBars *>(view.plot()->plottable(0));
        QVERIFY(plottable);
        QCOMPARE(plottable->data()->size(), 3);
        QCOMPARE(plottable->data()->at(0)->value, bars[0].probability);
        QVERIFY(plottable->data()->at(0)->value > plottable->data()->at(2)->value);
        QVERIFY(view.plot()->yAxis->rangeReversed()); // bar 0 (largest) on top
        testing::maybeSave(view, "next-token-light");
        s.theme = "dark";
        view.setSpec(s);
        testing::maybeSave(view, "next-token-dark");
    }

    void nextTokenLastPosition()
    {
        NextTokenView view;
        ViewSpec s = spec("next-token");
        s.topK = 50; // more than the vocabulary: every id once
        view.setSpec(s);
        view.setInput(makeInput(makeTrace()));
        QCOMPARE(view.position(), kT - 1);
        QCOMPARE(view.bars().size(), size_t(kV));
        QCOMPARE(view.bars().front().id, (kT - 1 + kV - 1) % kV); // row 4: id 3 has weight 10
        QVERIFY(view.title().contains(QStringLiteral("' mat' (position 4)")));
        for (size_t i = 1; i < view.bars().size(); ++i)
            QVERIFY(view.bars()[i - 1].probability >= view.bars()[i].probability);
    }

    // At temperature T the bars are the traced row reshaped by softmax(z / T); the controls show and edit the spec.
    void nextTokenTemperatureAndPosition()
    {
        NextTokenView view;
        view.resize(700, 420);
        ViewSpec s = spec("next-token");
        s.topK = 3;
        s.position = 2;
        s.set(views::nexttoken::kTemperature, 0.5);
        view.setSpec(s);
        auto trace = makeTrace();
        view.setInput(makeInput(trace));
        QVERIFY(view.message().isEmpty());
        const std::vector<double> expected = atTemperature(trace->tensor("next_probs").data() + 2 * kV, kV, 0.5);
        // Row 2's weights are 1..10 / 55: at T = 0.5 they become (k + 1)² / Σ k², the top one 100 / 385.
        QCOMPARE(view.bars().front().id, 1);
        QVERIFY(std::abs(view.bars().front().probability - 100.0 / 385.0) < 1e-6);
        for (const auto &bar : view.bars())
            QCOMPARE(bar.probability, double(float(expected[size_t(bar.id)])));
        QVERIFY(view.title().endsWith(QStringLiteral("at temperature 0.5")));

        QSignalSpy edited(&view, &View::specEdited);
        auto *position = view.findChild<QSpinBox *>();
        QVERIFY(position);
        QCOMPARE(position->value(), 2);
        position->setValue(-1); // "last"
        QCOMPARE(view.position(), kT - 1);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().position, -1);

        auto *slider = view.findChild<QSlider *>();
        QVERIFY(slider);
        slider->setValue(slider->maximum()); // T = 10: nearly flat
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(views::nexttoken::kTemperature), 10.0);
        QVERIFY(view.bars().front().probability < 0.2);
        const std::vector<QWidget *> hidden = view.interfaceWidgets();
        QVERIFY(std::find(hidden.begin(), hidden.end(), position->parentWidget()) != hidden.end());
    }

    // Issue 63: with top_p below 1 the bars are what nucleus sampling draws from: the fewest most probable tokens
    // whose probabilities reach p, renormalised, and the rest greyed as cut; the box edits the spec.
    void nextTokenTopPCutsTheTail()
    {
        NextTokenView view;
        view.resize(700, 420);
        ViewSpec s = spec("next-token");
        s.topK = kV;
        s.position = 2;
        s.set(views::nexttoken::kTopP, 0.5);
        view.setSpec(s);
        view.setInput(makeInput(makeTrace()));
        QVERIFY(view.message().isEmpty());
        // Row 2's weights are 10, 9, 8 … 1 over 55: 10 + 9 + 8 = 27 is 49 % of them, 34 is 62 %: four are kept.
        const auto &bars = view.bars();
        QCOMPARE(bars.size(), size_t(kV));
        double keptSum = 0;
        for (size_t i = 0; i < bars.size(); ++i) {
            QCOMPARE(bars[i].cut, i >= 4);
            if (!bars[i].cut)
                keptSum += bars[i].probability;
        }
        QVERIFY(std::abs(keptSum - 1.0) < 1e-6);
        QVERIFY(std::abs(bars[0].probability - 10.0 / 34.0) < 1e-6);
        QVERIFY(std::abs(bars[4].probability - 6.0 / 55.0) < 1e-6); // a cut bar: its probability before the cut
        QVERIFY2(view.title().contains(QStringLiteral("top-p 0.5 keeps 4 tokens")), qPrintable(view.title()));
        testing::maybeSave(view, "next-token-top-p");

        QSignalSpy edited(&view, &View::specEdited);
        auto *box = view.findChild<QDoubleSpinBox *>();
        QVERIFY(box);
        QCOMPARE(box->value(), 0.5);
        box->setValue(1.0);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(views::nexttoken::kTopP), 1.0);
        QVERIFY(std::none_of(view.bars().begin(), view.bars().end(), [](const auto &b) { return b.cut; }));
    }

    void nextTokenMissingAndOutOfRange()
    {
        NextTokenView view;
        auto trace = makeTrace();
        trace->drop("next_probs");
        view.setInput(makeInput(trace));
        QVERIFY2(view.message().startsWith(QStringLiteral("Not computed yet: step to next-token softmax")),
            qPrintable(view.message()));
        QVERIFY(view.bars().empty());

        ViewSpec s = spec("next-token");
        s.position = 7;
        view.setSpec(s);
        view.setInput(makeInput(makeTrace()));
        QVERIFY(view.message().contains(QStringLiteral("outside")));
    }

    void tensorViewShapeFormulaAndSlices()
    {
        TensorView view;
        view.resize(700, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        ViewSpec s = spec("tensor");
        s.tensor = "layer.0.attn.q";
        view.setSpec(s);
        view.setInput(makeInput(makeTrace()));
        QCOMPARE(view.shapeText(), QStringLiteral("[2, 5, 4]"));
        QCOMPARE(view.formulaText(), QStringLiteral("Q_h = Q[:, h·d : (h+1)·d]"));
        QVERIFY2(view.headerText().contains(QStringLiteral("min −3")), qPrintable(view.headerText()));
        QVERIFY(view.message().isEmpty());
        QVERIFY(view.sliceBox()->isVisibleTo(&view));
        QCOMPARE(view.sliceBox()->maximum(), 1);

        // Cell (row 1, col 2) of head 0 is element 6; of head 1 element 26.
        QCOMPARE(view.colorMap()->data()->cell(2, 1), 6 * 0.25 - 3.0);
        QSignalSpy edited(&view, &View::specEdited);
        view.setSlice(1);
        QCOMPARE(view.slice(), 1);
        QCOMPARE(view.colorMap()->data()->cell(2, 1), 26 * 0.25 - 3.0);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().head, 1);
        // Signed data (head 1 alone is positive, the tensor is not): a colour range symmetric around 0 that
        // spans the whole tensor, max 39 * 0.25 - 3.
        const QCPRange r = view.colorScale()->dataRange();
        QCOMPARE(r.lower, -6.75);
        QCOMPARE(r.upper, 6.75);
        testing::maybeSave(view, "tensor-q");

        // Rows are tokens: the y axis is labelled with them and their index, as the Attention view's rows (a lesson's
        // "rows 7 and 9").
        auto ticker = view.heatPlot()->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
        QVERIFY(ticker);
        QCOMPARE(ticker->ticks().value(1.0), QStringLiteral("#1  cat"));
    }

    void tensorViewMaskedAndMissing()
    {
        TensorView view;
        view.resize(700, 500);
        ViewSpec s = spec("tensor");
        s.tensor = "layer.0.attn.masked";
        view.setSpec(s);
        view.setInput(makeInput(makeTrace()));
        QVERIFY(std::isnan(view.colorMap()->data()->cell(3, 0))); // key 3 of query 0: −∞ -> NaN colour
        QCOMPARE(view.colorMap()->data()->cell(0, 3), 2.0);
        QVERIFY(view.headerText().contains(QStringLiteral("−∞")));
        testing::maybeSave(view, "tensor-masked");

        s.tensor = "layer.1.attn.probs";
        s.theme = "dark";
        view.setSpec(s);
        QCOMPARE(view.colorScale()->dataRange().lower, 0.0); // non-negative: not the diverging map
        testing::maybeSave(view, "tensor-probs-dark");

        s.tensor = "layer.1.attn.context";
        view.setSpec(s);
        QCOMPARE(view.message(),
            QStringLiteral("Not computed yet: step to weighted sum of V in layer 1 (layer.1.attn.context)"));
        QVERIFY(view.shapeText().isEmpty());
    }

    void tensorViewPoolsBigMatrices()
    {
        const float block[] = {1, 3, 5, 5, 2, 2, -std::numeric_limits<float>::infinity(), 7};
        const auto pooled = TensorView::meanPool(block, 2, 4, 1, 2);
        QCOMPARE(pooled.size(), size_t(2));
        QCOMPARE(pooled[0], 2.0f); // mean of 1, 3, 2, 2
        QCOMPARE(pooled[1], 17.0f / 3); // −∞ left out of the mean

        auto trace = std::make_shared<Trace>();
        trace->put("big", "", 0, Tensor({2500, 3}, 1.5f));
        TensorView view;
        ViewSpec s = spec("tensor");
        s.tensor = "big";
        view.setSpec(s);
        view.setInput(makeInput(trace));
        QVERIFY(view.colorMap()->data()->valueSize() <= TensorView::kMaxCells);
        QCOMPARE(view.colorMap()->data()->keySize(), 3);
        QCOMPARE(view.colorMap()->data()->cell(1, 10), 1.5);
    }

    void tensorViewVectorAndScalar()
    {
        auto trace = std::make_shared<Trace>();
        Tensor v({3});
        v.values() = {0.5f, -1.0f, 2.0f};
        trace->put("vec", "v", 0, v);
        Tensor scalar(Shape {});
        scalar.data()[0] = 42.5f;
        trace->put("loss", "L", 1, scalar);

        TensorView view;
        ViewSpec s = spec("tensor");
        s.tensor = "vec";
        view.setSpec(s);
        view.setInput(makeInput(trace));
        QCOMPARE(view.shapeText(), QStringLiteral("[3]"));
        QVERIFY(!view.sliceBox()->isVisibleTo(&view));
        auto *bars = qobject_cast<QCPBars *>(view.barPlot()->plottable(0));
        QVERIFY(bars);
        QCOMPARE(bars->data()->size(), 3);
        QCOMPARE(bars->data()->at(1)->value, -1.0);
        QCOMPARE(bars->data()->at(2)->value, 2.0);

        s.tensor = "loss";
        view.setSpec(s);
        QCOMPARE(view.shapeText(), QStringLiteral("[]"));
        QCOMPARE(view.message(), QStringLiteral("42.5"));
    }

    void linesSegmentsFollowWeights()
    {
        TokenLinesView view;
        view.resize(640, 400);
        ViewSpec s = spec("lines");
        view.setSpec(s);
        view.setInput(makeInput(makeTrace()));
        QVERIFY(view.message().isEmpty());
        const auto segments = view.segments();
        QVERIFY(!segments.empty());
        bool heavy = false;
        for (const auto &seg : segments) {
            QVERIFY(seg.key <= seg.query); // causal: no line to a later key
            QVERIFY(seg.weight >= TokenLinesView::kMinWeight);
            QCOMPARE(seg.head, 0);
            QVERIFY(std::abs(seg.alpha - 255.0 * seg.weight) <= 1.0);
            if (seg.query == 4 && seg.key == 1) {
                heavy = true;
                QVERIFY(seg.alpha >= 229 && seg.width > 3.0);
            }
            QVERIFY(!(seg.query == 4 && seg.key == 2)); // weight 0 in head 0
        }
        QVERIFY(heavy);
        QCOMPARE(segments.size(), size_t(1 + 2 + 3 + 4 + 2));

        view.setHover(TokenLinesView::Side::Query, 4);
        for (const auto &seg : view.segments())
            QCOMPARE(seg.query, 4);
        QCOMPARE(view.segments().size(), size_t(2));
        view.setHover(TokenLinesView::Side::Key, 1);
        for (const auto &seg : view.segments())
            QCOMPARE(seg.key, 1);
        QCOMPARE(view.segments().size(), size_t(4)); // queries 1, 2, 3, 4
        testing::maybeSave(view, "lines-hover-key");
    }

    void linesAllHeadsAndPixels()
    {
        TokenLinesView view;
        view.resize(640, 400);
        ViewSpec s = spec("lines");
        s.head = -1;
        view.setSpec(s);
        view.setInput(makeInput(makeTrace()));
        QSet<int> heads;
        for (const auto &seg : view.segments())
            heads.insert(seg.head);
        QCOMPARE(heads.size(), 2);
        QVERIFY(TokenLinesView::headColor(0, 2) != TokenLinesView::headColor(1, 2));
        testing::maybeSave(view, "lines-all-heads");

        s.head = 0;
        view.setSpec(s);
        const QImage drawn = view.grab().toImage();
        QLineF heavy;
        for (const auto &seg : view.segments())
            if (seg.query == 4 && seg.key == 1)
                heavy = seg.line;
        QVERIFY(!heavy.isNull());
        view.setInput(makeInput(makeTrace(true)));
        QVERIFY(view.segments().empty());
        const QImage blank = view.grab().toImage();
        const QPoint mid = heavy.pointAt(0.5).toPoint();
        QVERIFY(drawn.pixel(mid) != blank.pixel(mid));
        QCOMPARE(blank.pixel(mid), blank.pixel(mid + QPoint(3, 0))); // background only
        QVERIFY(drawn != blank);
        testing::maybeSave(view, "lines-zero");

        s.theme = "dark";
        view.setSpec(s);
        view.setInput(makeInput(makeTrace()));
        testing::maybeSave(view, "lines-dark");
    }

    // BertViz's head view: every head in its colour, each switched off and on by its swatch; the spec says which.
    void linesHeadsToggleBySwatch()
    {
        TokenLinesView view;
        view.resize(640, 400);
        ViewSpec s = spec("lines");
        s.head = -1;
        view.setSpec(s);
        view.setInput(makeInput(makeTrace()));
        QSignalSpy edited(&view, &View::specEdited);
        QTest::mouseClick(&view, Qt::LeftButton, {}, view.swatchRect(1).center().toPoint());
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(views::tokenlines::kHiddenHeads), std::vector<int> {1});
        for (const auto &seg : view.segments())
            QCOMPARE(seg.head, 0);
        QVERIFY(!view.segments().empty());
        QTest::mouseClick(&view, Qt::LeftButton, {}, view.swatchRect(0).center().toPoint());
        QVERIFY(view.segments().empty()); // both hidden
        QTest::mouseClick(&view, Qt::LeftButton, {}, view.swatchRect(1).center().toPoint());
        QCOMPARE(view.spec().get(views::tokenlines::kHiddenHeads), std::vector<int> {0});
        for (const auto &seg : view.segments())
            QCOMPARE(seg.head, 1);
        // a spec with hidden heads draws them hidden (lessons, render)
        s.set(views::tokenlines::kHiddenHeads, {0});
        TokenLinesView fromSpec;
        fromSpec.resize(640, 400);
        fromSpec.setSpec(s);
        fromSpec.setInput(makeInput(makeTrace()));
        QCOMPARE(fromSpec.segments().size(), view.segments().size());
    }

    // The neuron view draws queryKeyTerms's vectors and says its sums; its spin boxes choose the pair.
    void neuronViewDrawsTheTermsOfOnePair()
    {
        ViewSpec s = spec("neuron");
        s.model = "reverse";
        s.text = "abcd>dcb";
        s.layer = 1;
        s.head = 2;
        s.query = 6;
        s.set(views::neuron::kKey, 2);
        NeuronView view;
        view.resize(900, 700);
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        std::string problem;
        const QueryKeyTerms expected = queryKeyTerms(*view.input().trace, 1, 2, 6, 2, &problem);
        QCOMPARE(view.terms().dot, expected.dot);
        auto *terms = qobject_cast<QCPBars *>(view.plot()->plottable(2));
        QVERIFY(terms);
        QCOMPARE(terms->dataCount(), expected.dim);
        QCOMPARE(terms->data()->at(3)->value, double(expected.product[3]));
        QVERIFY2(view.caption().contains("weight after softmax " + formatNumber(expected.weight, 3)),
            qPrintable(view.caption()));
        QVERIFY(view.formula().contains("query 6 'c' → key 2 'c'"));
        QSignalSpy edited(&view, &View::specEdited);
        view.keyBox()->setValue(7); // after the query: masked
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(views::neuron::kKey), 7);
        QVERIFY(view.terms().masked);
        QVERIFY(view.caption().contains("masked (−∞ before softmax)"));
        view.keyBox()->setValue(-1);
        QCOMPARE(view.terms().key, queryKeyTerms(*view.input().trace, 1, 2, 6, -1, &problem).key);
        s.head = 7;
        view.setSpec(s);
        QVERIFY(view.message().contains("no head 7"));
        QCOMPARE(view.plot()->axisRectCount(), 3); // no soft-cap panel for a model without one
    }

    void linesWindowForLongInputs()
    {
        const int tokens = 100;
        TokenLinesView view;
        view.resize(700, 1400);
        ViewSpec s = spec("lines");
        s.position = 80;
        view.setSpec(s);
        view.setInput(makeInput(makeTrace(false, tokens), tokens));
        const auto [first, count] = view.tokenWindow();
        QCOMPARE(count, TokenLinesView::kMaxWindow);
        QVERIFY(first <= 80 && 80 < first + count);
        for (const auto &seg : view.segments())
            QVERIFY(seg.query >= first && seg.key >= first && seg.query < first + count);
        testing::maybeSave(view, "lines-window");
    }

    void linesMissingTensor()
    {
        TokenLinesView view;
        ViewSpec s = spec("lines");
        s.layer = 1;
        view.setSpec(s);
        auto trace = makeTrace();
        trace->drop("layer.1.attn.probs");
        view.setInput(makeInput(trace));
        QVERIFY2(view.message().startsWith(QStringLiteral("Not computed yet: step to softmax in layer 1")),
            qPrintable(view.message()));
        QVERIFY(view.segments().empty());
    }

    // The byte model's split beside GPT-2's and BERT's: one chip per token, bytes of a multi-byte character marked,
    // BERT's [UNK] and [MASK] marked, and a tokenizer that names nothing said so in the view.
    void tokenizerViewComparesSplits()
    {
        ViewSpec spec;
        spec.view = "tokenizer";
        spec.model = "tiny-bytes";
        spec.text = "caf\u00e9 [MASK] \U0001F600";
        spec.set(views::tokenizer::kCompareTokenizer, "bert-base-uncased");
        TokenizerView view;
        view.resize(1000, 600);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const int bytes = int(std::string(spec.text).size());
        QCOMPARE(view.chips(0)->marks().size(), size_t(bytes)); // one token per byte
        QVERIFY2(view.header(0).contains(QStringLiteral("%1 tokens").arg(bytes)), qPrintable(view.header(0)));
        QVERIFY2(view.header(0).contains(QStringLiteral("6 single bytes")), qPrintable(view.header(0))); // é, 😀
        QVERIFY2(view.header(1).startsWith(QStringLiteral("bert-base-uncased · WordPiece · 3 tokens")),
            qPrintable(view.header(1))); // cafe [MASK] [UNK]: "café" is one token after stripping accents
        QVERIFY2(view.header(1).contains(QStringLiteral("1 special"))
                && view.header(1).contains(QStringLiteral("1 unknown")),
            qPrintable(view.header(1)));
        QVERIFY(view.summary().contains(QStringLiteral("%1 bytes").arg(bytes)));
        QCOMPARE(view.compareBox()->currentText(), QStringLiteral("bert-base-uncased"));

        QSignalSpy edited(&view, &View::specEdited);
        view.compareBox()->setCurrentText(QStringLiteral("gpt2"));
        emit view.compareBox()->textActivated(QStringLiteral("gpt2"));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().get(views::tokenizer::kCompareTokenizer), std::string("gpt2"));

        spec.set(views::tokenizer::kCompareTokenizer, "/nowhere/at/all");
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains(QStringLiteral("tokenizer '/nowhere/at/all'")), qPrintable(view.message()));
    }

    void factoryMakesEveryKind()
    {
        for (const std::string &kind : ViewSpec::viewKinds()) {
            std::unique_ptr<View> v = createView(kind);
            QVERIFY2(v != nullptr, kind.c_str());
        }
        QVERIFY(dynamic_cast<AttentionView *>(createView("attention").get()));
        QVERIFY(dynamic_cast<HeadsGridView *>(createView("heads").get()));
        QVERIFY(dynamic_cast<TokenLinesView *>(createView("lines").get()));
        QVERIFY(dynamic_cast<MaskView *>(createView("mask").get()));
        QVERIFY(dynamic_cast<NextTokenView *>(createView("next-token").get()));
        QVERIFY(dynamic_cast<TensorView *>(createView("tensor").get()));
        QWidget parent;
        QCOMPARE(createView("tensor", &parent)->parentWidget(), &parent);
        try {
            createView("pie-chart");
            QFAIL("no exception for an unknown kind");
        } catch (const atlas::Error &e) {
            QVERIFY(QString::fromUtf8(e.what()).contains(QStringLiteral("pie-chart")));
        }
    }
};

QTEST_MAIN(TestTextViews)
#include "tst_textviews.moc"
