#include "attentionmap/attentionview.h"
#include "handmadetracetesting.h"
#include "heads/headsgridview.h"
#include "layouttesting.h"
#include "mask/maskview.h"
#include "model/builtinmodels.h"
#include "neuron/neuron.h"
#include "neuron/neuronview.h"
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

#include <qcustomplot.h>

#include <QSignalSpy>
#include <QtTest>

#include <cmath>
#include <limits>

using namespace atlas;

using namespace atlas::testing;

class TestTextViews : public QObject
{
    Q_OBJECT

private slots:
    void tensorViewShapeFormulaAndSlices()
    {
        TensorView view;
        view.resize(700, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        ViewSpec s = viewSpecOf("tensor");
        s.tensor = "layer.0.attn.q";
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace()));
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
        ViewSpec s = viewSpecOf("tensor");
        s.tensor = "layer.0.attn.masked";
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace()));
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
        ViewSpec s = viewSpecOf("tensor");
        s.tensor = "big";
        view.setSpec(s);
        view.setInput(handMadeInput(trace));
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
        ViewSpec s = viewSpecOf("tensor");
        s.tensor = "vec";
        view.setSpec(s);
        view.setInput(handMadeInput(trace));
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
        ViewSpec s = viewSpecOf("lines");
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace()));
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
        ViewSpec s = viewSpecOf("lines");
        s.head = -1;
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace()));
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
        view.setInput(handMadeInput(handMadeTrace(true)));
        QVERIFY(view.segments().empty());
        const QImage blank = view.grab().toImage();
        const QPoint mid = heavy.pointAt(0.5).toPoint();
        QVERIFY(drawn.pixel(mid) != blank.pixel(mid));
        QCOMPARE(blank.pixel(mid), blank.pixel(mid + QPoint(3, 0))); // background only
        QVERIFY(drawn != blank);
        testing::maybeSave(view, "lines-zero");

        s.theme = "dark";
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace()));
        testing::maybeSave(view, "lines-dark");
    }

    // BertViz's head view: every head in its colour, each switched off and on by its swatch; the spec says which.
    void linesHeadsToggleBySwatch()
    {
        TokenLinesView view;
        view.resize(640, 400);
        ViewSpec s = viewSpecOf("lines");
        s.head = -1;
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace()));
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
        fromSpec.setInput(handMadeInput(handMadeTrace()));
        QCOMPARE(fromSpec.segments().size(), view.segments().size());
    }

    // The neuron view draws queryKeyTerms's vectors and says its sums; its spin boxes choose the pair.
    void neuronViewDrawsTheTermsOfOnePair()
    {
        ViewSpec s = viewSpecOf("neuron");
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
        ViewSpec s = viewSpecOf("lines");
        s.position = 80;
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace(false, tokens), tokens));
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
        ViewSpec s = viewSpecOf("lines");
        s.layer = 1;
        view.setSpec(s);
        auto trace = handMadeTrace();
        trace->drop("layer.1.attn.probs");
        view.setInput(handMadeInput(trace));
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

        // A tokenizer named by its path is shown by its file's name: the path would push the pieces off the header.
        spec.set(views::tokenizer::kCompareTokenizer, resolveModel("austen-q4_0"));
        QVERIFY(spec.get(views::tokenizer::kCompareTokenizer).find('/') != std::string::npos);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.header(1).startsWith(QStringLiteral("austen-q4_0.gguf \u00B7 ")), qPrintable(view.header(1)));

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
