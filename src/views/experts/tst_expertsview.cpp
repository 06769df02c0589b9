// The Experts view (src/views/experts): a Switch model's routing with its capacity and dropped tokens, and a
// Mixtral router's, which has no capacity.
#include "experts/experts.h"
#include "experts/expertsview.h"
#include "testbundle.h"
#include "viewtesting.h"

#include <QSignalSpy>
#include <QSlider>
#include <QTest>

#include <cmath>

using namespace atlas;

class TestExpertsView : public QObject
{
    Q_OBJECT

private slots:
    void expertsViewDrawsTheRouting();
    void expertsViewSaysAMixtralRouterDropsNothing();
};

// The Experts view on tst_moe's top-1 fixture: the routing at the model's own factor (capacity ⌈1 · 12 / 4⌉ = 3, two
// tokens dropped), the slider asking for another factor, and what it says of a dense layer or a dense model.
void TestExpertsView::expertsViewDrawsTheRouting()
{
    ViewSpec spec;
    spec.view = "experts";
    spec.model = ATLAS_TEST_DATA "/moe/switch";
    spec.tokens = {3, 17, 22, 8, 0, 25, 29, 11, 5, 14, 3, 9};
    ExpertsView view;
    view.resize(1280, 720);
    view.setSpec(spec);
    view.setInput(testing::forSpec(spec));
    QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
    QVERIFY2(view.formula().contains("capacity ⌈1 · 12 / 4⌉ = 3") && view.formula().contains("2 of 12 tokens dropped"),
        qPrintable(view.formula()));
    const ExpertRouting &r = view.drawnAnalysis()->routing;
    QCOMPARE(r.capacity, 3);
    QCOMPARE(r.droppedTokens, 2);
    int kept = 0;
    for (const auto &buffer : r.buffer) {
        QVERIFY(int(buffer.size()) <= r.capacity);
        kept += int(buffer.size());
    }
    QCOMPARE(kept, 10);
    QCOMPARE(r.dispatched, kept); // every kept choice is dispatched to its expert's device
    int diagonal = 0;
    for (int d = 0; d < r.devices; ++d)
        diagonal += r.sent[size_t(d)][size_t(d)];
    QCOMPARE(r.crossing, r.dispatched - diagonal);
    QCOMPARE(view.loadPlot()->plottableCount(), 2 * 4); // kept and dropped bars per expert
    QCOMPARE(view.devicesBox()->maximum(), 4);
    QCOMPARE(view.capacitySlider()->value(), 4); // the model's own factor, 1 = 4 steps of 0.25

    QSignalSpy edited(&view, &View::specEdited);
    view.capacitySlider()->setValue(8);
    QCOMPARE(edited.count(), 1);
    QCOMPARE(edited.at(0).at(0).value<ViewSpec>().get(views::experts::kCapacityFactor), 8 * ExpertsView::kFactorStep);
    spec.set(views::experts::kCapacityFactor, 2.0); // room for every token: ⌈2 · 12 / 4⌉ = 6
    view.setSpec(spec);
    view.setInput(testing::forSpec(spec));
    QCOMPARE(view.drawnAnalysis()->routing.capacity, 6);
    QVERIFY(view.drawnAnalysis()->routing.droppedTokens <= 2);

    // The same top-1 model run with top-2 for comparison: each token's second choice queues after every first one.
    view.topKBox()->setValue(2);
    QCOMPARE(edited.count(), 2);
    QCOMPARE(edited.at(1).at(0).value<ViewSpec>().get(views::experts::kExpertTopK), 2);
    spec.set(views::experts::kExpertTopK, 2);
    view.setSpec(spec);
    view.setInput(testing::forSpec(spec));
    const ExpertRouting &two = view.drawnAnalysis()->routing;
    QCOMPARE(two.topK, 2);
    QCOMPARE(two.choice[0].size(), size_t(2));
    int firsts = 0, seconds = 0;
    for (const auto &ranks : two.bufferRank)
        for (int rank : ranks)
            (rank == 0 ? firsts : seconds) += 1;
    QCOMPARE(firsts, 12); // room for every first choice at factor 2: ⌈2 · 12 / 4⌉ = 6 each
    QVERIFY(seconds > 0 && firsts + seconds <= 4 * 6);
    QVERIFY(view.formula().contains("top-2 routing"));

    spec.model = ATLAS_TEST_DATA "/moe/top2";
    spec.set(views::experts::kCapacityFactor, 0);
    spec.set(views::experts::kExpertTopK, 0);
    view.setSpec(spec);
    view.setInput(testing::forSpec(spec));
    QVERIFY2(view.message().contains("layer 0's feed-forward layer is dense; the experts are in layer 1"),
        qPrintable(view.message()));
    spec.model = ATLAS_TEST_DATA "/gpt2_tiny";
    view.setSpec(spec);
    view.setInput(testing::forSpec(spec));
    QVERIFY2(view.message().contains("no mixture-of-experts layers"), qPrintable(view.message()));
}

// Mixtral's router has no capacity: the view says so instead of Switch's formula, drops nothing, keeps every token's
// top-2 with gates that sum to 1, and offers no capacity to set.
void TestExpertsView::expertsViewSaysAMixtralRouterDropsNothing()
{
    ViewSpec spec;
    spec.view = "experts";
    spec.model = ATLAS_TEST_DATA "/mixtral_tiny";
    spec.tokens = {3, 17, 42, 8, 0, 25, 63, 11};
    spec.layer = 1;
    ExpertsView view;
    view.resize(1280, 720);
    view.setSpec(spec);
    view.setInput(testing::forSpec(spec));
    QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
    QVERIFY2(view.formula().startsWith("Mixtral layer 1: 4 experts, top-2 routing with no capacity")
            && !view.formula().contains("⌈"),
        qPrintable(view.formula()));
    const ExpertRouting &r = view.drawnAnalysis()->routing;
    QVERIFY(r.dropless);
    QCOMPARE(r.droppedTokens, 0);
    for (size_t t = 0; t < r.gate.size(); ++t) {
        QCOMPARE(r.choice[t].size(), size_t(2));
        QVERIFY(r.choice[t][0] >= 0 && r.choice[t][1] >= 0);
        QVERIFY(std::fabs(r.gate[t][0] + r.gate[t][1] - 1.0f) < 1e-5f);
    }
    QVERIFY(!view.capacitySlider()->isEnabled());
}

QTEST_MAIN(TestExpertsView)
#include "tst_expertsview.moc"
