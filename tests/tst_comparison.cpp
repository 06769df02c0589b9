// Two runs side by side (the spec's "compare"): run B is the spec with another model, text or kernel; the analysis
// runs it exactly as a spec of its own would run; A − B is the two runs' probabilities subtracted, cell by cell, with
// the cells both runs mask kept masked; a click on either side moves both; what cannot be compared is refused by key.
#include "attentionmap/attentionview.h"
#include "rollout/rollout.h"
#include "rollout/rolloutview.h"
#include "testbundle.h"
#include "trace/names.h"
#include "util/error.h"
#include "view/analysisrequests.h"
#include "view/comparison.h"
#include "view/viewanalysis.h"
#include "views/comparisonview.h"
#include "views/heatmapplot.h"
#include "viewtesting.h"

#include <QSignalSpy>
#include <QTest>

#include <cmath>
#include <limits>

using namespace atlas;

namespace {

ViewSpec comparing(const std::string &mode)
{
    ViewSpec spec;
    spec.view = "attention";
    spec.model = "reverse";
    spec.text = "abcdefgh>";
    spec.layer = 1;
    spec.head = 2;
    spec.compare = mode;
    spec.compareModel = "reverse-rope";
    return spec;
}

// The input's comparison; the input holds it, so keep the input while the reference is used.
const ComparisonAnalysis &comparisonOf(const ViewInput &input)
{
    const auto *result = input.analysisAs<ComparisonAnalysis>();
    if (result == nullptr)
        throw Error("no comparison: " + input.analysis.problem.toStdString());
    return *result;
}

// Head `head` of layer `layer`'s probabilities in a spec's own run.
std::vector<float> ownProbs(const ViewSpec &spec, int layer, int head)
{
    const SpecRun run = runSpec(spec);
    const Tensor &t = run.trace->tensor(names::attentionTensor(run.site, layer, "probs"));
    const float *first = t.data() + size_t(head) * size_t(t.dim(1) * t.dim(2));
    return {first, first + t.dim(1) * t.dim(2)};
}

// The view drawing the spec's comparison (computed at once), shown at `size`.
bool shown(ComparisonView &view, const ViewSpec &spec, QSize size)
{
    view.resize(size);
    view.setInput(testing::forSpec(spec));
    view.setSpec(spec);
    view.show();
    return QTest::qWaitForWindowExposed(&view);
}

std::string parseError(const std::string &json)
{
    try {
        ViewSpec::fromJson(json, "spec.json");
    } catch (const Error &e) {
        return e.what();
    }
    return {};
}

} // namespace

class TestComparison : public QObject
{
    Q_OBJECT

private slots:
    void sideBIsTheSpecWithTheComparisonApplied()
    {
        ViewSpec spec = comparing("side");
        spec.tokens = {97, 98};
        spec.padding = {1};
        spec.compareText = "xyz>";
        spec.compareAttention = "longformer";
        spec.compareAttentionParams = {"window=2"};
        const ViewSpec a = sideSpec(spec, Side::A), b = sideSpec(spec, Side::B);
        QVERIFY(a.compare.empty() && a.compareModel.empty() && a.compareAttentionParams.empty());
        QCOMPARE(a.model, std::string("reverse"));
        QCOMPARE(a.tokens, (std::vector<int> {97, 98}));
        QCOMPARE(b.model, std::string("reverse-rope"));
        QCOMPARE(b.text, std::string("xyz>"));
        QVERIFY(b.tokens.empty() && b.padding.empty()); // B's text replaces A's tokens and padding
        QCOMPARE(b.attention, std::string("longformer"));
        QCOMPARE(b.attentionParams, (std::vector<std::string> {"window=2"}));
        QCOMPARE(b.layer, 1);
        QCOMPARE(b.head, 2);
        QCOMPARE(comparedChange(spec),
            std::string("model reverse-rope, text \u201Cxyz>\u201D, attention longformer "
                        "(window=2)"));
        // The keys round-trip through JSON.
        QCOMPARE(ViewSpec::fromJson(spec.toJson(true), "spec"), spec);
    }

    void whatCannotBeComparedIsRefusedByKey()
    {
        QVERIFY(parseError(R"({"compare_model": "reverse-rope"})").find("key 'compare_model'") != std::string::npos);
        QVERIFY(parseError(R"({"compare": "side"})").find("run B is the same as run A") != std::string::npos);
        QVERIFY(parseError(R"({"compare": "side", "compare_model": "tiny-bytes"})").find("run B is the same")
            != std::string::npos); // tiny-bytes is A's model too
        const std::string rollout
            = parseError(R"({"view": "rollout", "compare": "difference", "compare_model": "reverse"})");
        QVERIFY2(rollout.find("key 'compare'") != std::string::npos
                && rollout.find("drawn by the attention view") != std::string::npos,
            rollout.c_str());
        QVERIFY(parseError(R"({"compare": "side", "compare_attention_params": ["window=2"]})")
                    .find("key 'compare_attention_params'")
            != std::string::npos);
        const std::string params = parseError(
            R"({"compare": "side", "compare_attention": "longformer", "compare_attention_params": ["rounds=2"]})");
        QVERIFY2(params.find("key 'compare_attention_params'") != std::string::npos, params.c_str());
        QVERIFY(parseError(R"({"compare": "beside"})").find("unknown value 'beside'") != std::string::npos);
    }

    void theDifferenceIsTheTwoRunsSubtracted()
    {
        const ViewSpec spec = comparing("difference");
        const ViewInput input = testing::forSpec(spec);
        const ComparisonAnalysis &result = comparisonOf(input);
        const std::vector<float> a = ownProbs(sideSpec(spec, Side::A), 1, 2),
                                 b = ownProbs(sideSpec(spec, Side::B), 1, 2);
        QCOMPARE(result.rows, 9);
        QCOMPARE(result.cols, 9);
        QCOMPARE(result.probsA, a);
        QCOMPARE(result.probsB, b); // run B is the spec of its own, run on its own
        QVERIFY(a != b);
        constexpr float kNegInf = -std::numeric_limits<float>::infinity();
        for (int r = 0; r < 9; ++r) {
            double rowSum = 0;
            for (int c = 0; c < 9; ++c) {
                const size_t i = size_t(r) * 9 + size_t(c);
                QCOMPARE(result.difference[i], a[i] - b[i]);
                QCOMPARE(result.maskedInBoth[i] == kNegInf, c > r); // both runs are causal
                rowSum += result.difference[i];
            }
            QVERIFY(std::abs(rowSum) < 1e-5); // each row of A and of B sums to 1
        }
    }

    // Run A kept on demand (its heads recomputed from queries, keys and log-sum-exp): the same A − B as from its whole
    // matrices, where it said "not computed" before.
    void aDifferenceReadsARunKeptOnDemand()
    {
        const ViewSpec spec = comparing("difference");
        const ViewInput whole = testing::forSpec(spec);
        const SpecRun run = runSpec(spec, whole.program->tracedBytes() - 1);
        QVERIFY(run.trace->contains("layer.1.attn.lse") && !run.trace->contains("layer.1.attn.probs"));
        const ViewInput onDemand = testing::analyzed(makeViewInput(run), spec);
        const ComparisonAnalysis &a = comparisonOf(whole), &b = comparisonOf(onDemand);
        QCOMPARE(b.rows, a.rows);
        QCOMPARE(b.cols, a.cols);
        QCOMPARE(b.probsB, a.probsB);
        QCOMPARE(b.maskedInBoth, a.maskedInBoth);
        for (size_t i = 0; i < a.difference.size(); ++i)
            QVERIFY(std::abs(b.difference[i] - a.difference[i]) < 1e-6);
    }

    // Comparing every head reads a run kept on demand too: its heads recomputed a block of rows at a time and its
    // logits from the last stream give what its whole matrices and logits give.
    void everyHeadIsComparedOnARunKeptOnDemand()
    {
        const ViewSpec spec = comparing("heads");
        const ViewInput whole = testing::forSpec(spec);
        const SpecRun run = runSpec(spec, whole.program->tracedBytes() - 1);
        QVERIFY(run.trace->contains("layer.1.attn.lse") && !run.trace->contains("layer.1.attn.probs"));
        QVERIFY(!run.trace->contains("logits"));
        const ViewInput onDemand = testing::analyzed(makeViewInput(run), spec);
        const HeadsCompared &a = comparisonOf(whole).heads, &b = comparisonOf(onDemand).heads;
        QCOMPARE(b.layers, a.layers);
        QCOMPARE(b.heads, a.heads);
        QCOMPARE(b.distance.size(), a.distance.size());
        for (size_t i = 0; i < a.distance.size(); ++i)
            QVERIFY(std::abs(b.distance[i] - a.distance[i]) < 1e-6);
        QVERIFY(b.nextTokenProblem.empty());
        QCOMPARE(b.nextTokenKl.size(), a.nextTokenKl.size());
        for (size_t t = 0; t < a.nextTokenKl.size(); ++t)
            QVERIFY(std::abs(b.nextTokenKl[t] - a.nextTokenKl[t]) < 1e-5 * std::max(1.0, a.nextTokenKl[t]));
        QCOMPARE(b.sameTopToken, a.sameTopToken);
    }

    void aDifferenceOfTwoShapesSaysSo()
    {
        ViewSpec spec = comparing("difference");
        spec.compareModel.clear();
        spec.compareText = "abc>";
        ViewInput input = makeViewInput(runSpec(spec));
        analyzeNow(input, spec);
        QVERIFY(input.analysis.result == nullptr);
        QVERIFY2(input.analysis.problem.contains("A's attention is 9 × 9 (queries × keys), B's is 4 × 4"),
            qPrintable(input.analysis.problem));
        spec.compare = "side"; // side by side draws two lengths
        QVERIFY(testing::forSpec(spec).analysisAs<ComparisonAnalysis>() != nullptr);
    }

    void eachSideHasItsOwnAnalysis()
    {
        ViewSpec spec;
        spec.view = "rollout";
        spec.model = "reverse";
        spec.text = "abcdef>";
        spec.compare = "side";
        spec.compareAttention = "longformer";
        spec.compareAttentionParams = {"window=2"};
        const ViewInput input = testing::forSpec(spec); // holds the result
        const ComparisonAnalysis &result = comparisonOf(input);
        const auto *a = dynamic_cast<const RolloutAnalysis *>(result.ownA.get());
        const auto *b = dynamic_cast<const RolloutAnalysis *>(result.ownB.get());
        QVERIFY(a && b);
        const ViewInput aloneA = testing::forSpec(sideSpec(spec, Side::A)),
                        aloneB = testing::forSpec(sideSpec(spec, Side::B));
        QVERIFY(a->rollout.isApprox(aloneA.analysisAs<RolloutAnalysis>()->rollout, 1e-12));
        QVERIFY(b->rollout.isApprox(aloneB.analysisAs<RolloutAnalysis>()->rollout, 1e-12));
        QVERIFY(!a->rollout.isApprox(b->rollout, 1e-3)); // the window changes what reaches the last position
    }

    void anotherHeadReusesRunB()
    {
        ViewSpec spec = comparing("side");
        const ViewInput input = makeViewInput(runSpec(spec));
        std::string problem;
        const auto first = runAnalysisNow(analysisRequest(spec, analysisContext(input)), &problem);
        spec.head = 0;
        const auto second = runAnalysisNow(analysisRequest(spec, analysisContext(input)), &problem);
        const auto *one = dynamic_cast<const ComparisonAnalysis *>(first.get());
        const auto *two = dynamic_cast<const ComparisonAnalysis *>(second.get());
        QVERIFY(one && two);
        QCOMPARE(two->run.trace, one->run.trace); // the same run while the first result is held
        QCOMPARE(two->b.head, 0);
        spec.compareText = "hgfedcba>";
        const auto third = runAnalysisNow(analysisRequest(spec, analysisContext(input)), &problem);
        QVERIFY(dynamic_cast<const ComparisonAnalysis *>(third.get())->run.trace != one->run.trace);
    }

    void aClickOnEitherSideMovesBoth()
    {
        ViewSpec spec = comparing("side");
        spec.compareAttention = "longformer";
        spec.compareAttentionParams = {"window=2"};
        ViewSpec edited = sideSpec(spec, Side::B);
        edited.head = 3;
        edited.query = 4;
        edited.attentionParams = {"window=3"}; // B's pattern editor
        ViewSpec linked = comparisonEdit(spec, edited, Side::B);
        QCOMPARE(linked.head, 3);
        QCOMPARE(linked.query, 4);
        QCOMPARE(linked.model, std::string("reverse"));
        QCOMPARE(linked.attention, std::string("full"));
        QVERIFY(linked.attentionParams.empty());
        QCOMPARE(linked.compareModel, std::string("reverse-rope"));
        QCOMPARE(linked.compareAttentionParams, (std::vector<std::string> {"window=3"}));
        edited = sideSpec(spec, Side::A);
        edited.layer = 0;
        linked = comparisonEdit(spec, edited, Side::A);
        QCOMPARE(linked.layer, 0);
        QCOMPARE(linked.compare, std::string("side"));
        QCOMPARE(linked.compareAttentionParams, (std::vector<std::string> {"window=2"}));
    }

    void theViewDrawsBothRunsAndFollowsEitherSide()
    {
        const ViewSpec spec = comparing("side");
        ComparisonView view;
        QVERIFY(shown(view, spec, QSize(1200, 650)));
        auto *a = qobject_cast<AttentionView *>(view.sideA());
        auto *b = qobject_cast<AttentionView *>(view.sideB());
        QVERIFY(a && b && b->isVisible());
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.captionA(), QString("A \u00B7 reverse"));
        QCOMPARE(view.captionB(), QString("B \u00B7 reverse-rope"));
        QCOMPARE(a->input().model->name, std::string("reverse"));
        QCOMPARE(b->input().model->name, std::string("reverse-rope"));
        QCOMPARE(b->spec().head, 2);
        // Both heat maps draw their own run's probabilities of the same layer and head.
        const std::vector<float> probsB = ownProbs(sideSpec(spec, Side::B), 1, 2);
        QTRY_VERIFY(b->plot()->matrixRows() == 9);
        QVERIFY(std::abs(b->plot()->displayedValue(8, 7) - probsB[8 * 9 + 7]) < 1e-6);

        QSignalSpy edits(&view, &View::specEdited);
        ViewSpec clicked = b->spec();
        clicked.head = 1;
        emit b->specEdited(clicked);
        QCOMPARE(edits.count(), 1);
        const auto moved = edits.at(0).at(0).value<ViewSpec>();
        QCOMPARE(moved.head, 1);
        QCOMPARE(moved.model, std::string("reverse"));
        QCOMPARE(moved.compareModel, std::string("reverse-rope"));

        // While B's analysis for the new head runs, B draws the new head from the run on hand.
        ViewInput pending = view.input();
        pending.analysis = {};
        pending.analysis.pending = true;
        view.setInput(pending);
        view.setSpec(moved);
        QVERIFY(b->isVisible());
        QCOMPARE(b->spec().head, 1);
    }

    void everyHeadIsComparedWithTheNextToken()
    {
        const ViewSpec spec = comparing("heads");
        const ViewInput input = testing::forSpec(spec);
        const HeadsCompared &heads = comparisonOf(input).heads;
        const SpecRun a = runSpec(sideSpec(spec, Side::A)), b = runSpec(sideSpec(spec, Side::B));
        QCOMPARE(heads.layers, a.model->config.layers);
        QCOMPARE(heads.heads, a.model->config.heads);
        QCOMPARE(heads.queries, 9);
        for (int layer = 0; layer < heads.layers; ++layer)
            for (int head = 0; head < heads.heads; ++head) {
                const std::vector<float> pa = ownProbs(sideSpec(spec, Side::A), layer, head),
                                         pb = ownProbs(sideSpec(spec, Side::B), layer, head);
                double sum = 0;
                for (int q = 0; q < 9; ++q) {
                    double row = 0;
                    for (int k = 0; k < 9; ++k)
                        row += std::abs(double(pa[size_t(q * 9 + k)]) - double(pb[size_t(q * 9 + k)]));
                    sum += row / 2;
                }
                QVERIFY(std::abs(heads.distance[size_t(layer * heads.heads + head)] - sum / 9) < 1e-6);
            }
        QVERIFY(*std::max_element(heads.distance.begin(), heads.distance.end()) > 0.01f); // two models
        // KL(A ‖ B) of each position's next-token distribution, from each run's own logits
        const Tensor &la = a.trace->tensor("logits"), &lb = b.trace->tensor("logits");
        const int64_t V = la.dim(1);
        QCOMPARE(heads.nextTokenKl.size(), size_t(9));
        QVERIFY(heads.nextTokenProblem.empty());
        for (int t = 0; t < 9; ++t) {
            const auto probabilities = [&](const Tensor &logits) {
                std::vector<double> p(static_cast<size_t>(V));
                double top = -INFINITY, total = 0;
                for (int64_t v = 0; v < V; ++v)
                    top = std::max(top, double(logits.data()[t * V + v]));
                for (int64_t v = 0; v < V; ++v)
                    total += p[size_t(v)] = std::exp(double(logits.data()[t * V + v]) - top);
                for (double &x : p)
                    x /= total;
                return p;
            };
            const std::vector<double> pa = probabilities(la), pb = probabilities(lb);
            double kl = 0;
            for (int64_t v = 0; v < V; ++v)
                kl += pa[size_t(v)] * std::log(pa[size_t(v)] / pb[size_t(v)]);
            QVERIFY2(std::abs(heads.nextTokenKl[size_t(t)] - kl) < 1e-6 * (1 + kl),
                qPrintable(QString("position %1: %2 against %3").arg(t).arg(heads.nextTokenKl[size_t(t)]).arg(kl)));
            QCOMPARE(bool(heads.sameTopToken[size_t(t)]),
                std::max_element(pa.begin(), pa.end()) - pa.begin()
                    == std::max_element(pb.begin(), pb.end()) - pb.begin());
        }

        ViewSpec shorter = spec;
        shorter.compareModel.clear();
        shorter.compareText = "abc>";
        ViewInput other = makeViewInput(runSpec(shorter));
        analyzeNow(other, shorter);
        QVERIFY(other.analysis.result == nullptr);
        QVERIFY2(other.analysis.problem.contains("layer.0.attn.probs is [4, 9, 9] in run A and [4, 4, 4] in run B"),
            qPrintable(other.analysis.problem));
    }

    void everyHeadIsDrawnAndAClickOpensIt()
    {
        const ViewSpec spec = comparing("heads");
        ComparisonView view;
        QVERIFY(shown(view, spec, QSize(1000, 700)));
        HeatmapPlot *plot = view.headsPlot();
        QVERIFY(plot->isVisible() && !view.sideA()->isVisible() && !view.differencePlot()->isVisible());
        const HeadsCompared &heads = view.input().analysisAs<ComparisonAnalysis>()->heads;
        QTRY_VERIFY(plot->matrixRows() == heads.layers);
        QCOMPARE(plot->matrixCols(), heads.heads);
        QVERIFY(std::abs(plot->displayedValue(1, 2) - heads.distance[size_t(heads.heads + 2)]) < 1e-6);
        QVERIFY2(view.summary().contains("Next token: KL(A \u2016 B) averages"), qPrintable(view.summary()));
        QVERIFY2(view.summary().contains("The most changed head is layer"), qPrintable(view.summary()));
        QVERIFY(plot->hoverTextAt(plot->cellCenter(1, 2)).startsWith("layer 1 \u00B7 head 2"));
        QSignalSpy edited(&view, &View::specEdited);
        QTest::mouseClick(plot, Qt::LeftButton, {}, plot->cellCenter(1, 2).toPoint());
        QCOMPARE(edited.size(), 1);
        const ViewSpec opened = edited.first().first().value<ViewSpec>();
        QCOMPARE(opened.compare, std::string("difference"));
        QCOMPARE(opened.layer, 1);
        QCOMPARE(opened.head, 2);
        QCOMPARE(opened.compareModel, spec.compareModel);
    }

    void theDifferenceIsDrawnOnADivergingScale()
    {
        const ViewSpec spec = comparing("difference");
        ComparisonView view;
        QVERIFY(shown(view, spec, QSize(1000, 700)));
        HeatmapPlot *plot = view.differencePlot();
        QVERIFY(plot->isVisible() && !view.sideA()->isVisible());
        QVERIFY(!plot->showingMessage());
        const auto &result = *view.input().analysisAs<ComparisonAnalysis>();
        QTRY_VERIFY(plot->matrixRows() == 9);
        const QCPRange range = plot->colorMap()->dataRange();
        QCOMPARE(range.lower, -range.upper); // 0 is white, in the middle
        QVERIFY(std::abs(plot->displayedValue(5, 3) - result.difference[5 * 9 + 3]) < 1e-6);
        QVERIFY(plot->title().contains("A \u2212 B"));
        const QString hover = plot->hoverTextAt(plot->cellCenter(5, 3));
        QVERIFY2(
            hover.contains(QString("A %1 \u2212 B %2")
                               .arg(formatNumber(result.probsA[5 * 9 + 3]), formatNumber(result.probsB[5 * 9 + 3]))),
            qPrintable(hover));
    }
};

QTEST_MAIN(TestComparison)
#include "tst_comparison.moc"
