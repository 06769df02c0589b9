// The Circuit view (src/views/circuit): the copy model's induction circuit found by EAP, the faithfulness curve and its
// slider, an edge patched exactly on a click, a node opened in its view, the graph as JSON, and the models it
// refuses.
#include "circuit/circuit.h"
#include "circuit/circuitplot.h"
#include "circuit/circuitview.h"
#include "layouttesting.h"
#include "testbundle.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <nlohmann/json.hpp>
#include <qcustomplot.h>

#include <QSignalSpy>
#include <QSlider>
#include <QTest>

using namespace atlas;
using namespace atlas::views::circuit;

namespace {

// copy's induction: after "hfjdlwqp|hfjd" it writes l, and with the first copy's l changed to o it writes o.
ViewSpec copySpec()
{
    ViewSpec spec;
    spec.view = "circuit";
    spec.model = "copy";
    spec.text = "hfjdlwqp|hfjd";
    spec.set(corruptionkeys::kCorruptedText, "hfjdowqp|hfjd");
    spec.target = "l";
    spec.set(corruptionkeys::kContrast, "o");
    spec.set(kKeepEdges, 8);
    return spec;
}

} // namespace

class TestCircuitView : public QObject
{
    Q_OBJECT

private slots:
    void theInductionCircuitIsFoundAndKept()
    {
        ViewSpec spec = copySpec();
        CircuitView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec), {1200, 720}));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<CircuitViewAnalysis>();
        QVERIFY(a);
        const std::shared_ptr<const CircuitScores> scores = a->scores; // kept: the view's next input replaces a
        const CircuitScores &s = *scores;
        QCOMPARE(int(s.graph.edges.size()), 110);
        // The largest edge leaves head 3 of layer 0, the head whose output alone restores the answer (Patching view).
        QCOMPARE(s.graph.senders[size_t(s.graph.edges[size_t(s.order[0])].sender)].name(), std::string("a0.3"));
        QCOMPARE(s.stops.front(), 0);
        QCOMPARE(s.stops.back(), 110);
        QCOMPARE(s.kept.front(), s.corrupted);
        QVERIFY(std::abs(s.recovered(s.kept.back()) - 1) < 1e-4);
        QCOMPARE(view.keepSlider()->maximum(), int(s.stops.size()) - 1);
        QCOMPARE(s.stops[size_t(view.keepSlider()->value())], 8);
        QVERIFY2(view.keptText().startsWith("8 of 110 edges: the circuit recovers"), qPrintable(view.keptText()));
        QVERIFY2(view.caption().contains("EAP: one backward pass from the corrupted run"), qPrintable(view.caption()));
        testing::maybeSave(view, "circuit-copy");

        // The slider moves along the curve's stops.
        QSignalSpy edited(&view, &View::specEdited);
        view.keepSlider()->setValue(view.keepSlider()->value() + 1);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(kKeepEdges), s.stops[size_t(view.keepSlider()->value())]);

        // A click on the largest edge chooses it; with it chosen, the caption gives its exact patch.
        const int top = s.order[0];
        QTest::mouseClick(view.graph(), Qt::LeftButton, {}, view.graph()->edgeMidpoint(top).toPoint());
        QCOMPARE(edited.count(), 2);
        const ViewSpec chosen = edited.last().at(0).value<ViewSpec>();
        QCOMPARE(chosen.get(kEdge), edgeKey(s.graph, top));
        view.setSpec(chosen);
        view.setInput(testing::forSpec(chosen));
        const auto *b = view.input().analysisAs<CircuitViewAnalysis>();
        QVERIFY(b && b->edge == top);
        QVERIFY(std::isfinite(b->edgeMetric) && std::isfinite(b->pathMetric));
        QVERIFY2(view.caption().contains("patched alone exactly"), qPrintable(view.caption()));
        testing::maybeSave(view, "circuit-copy-edge");

        // A click on a head opens it in the Attention view.
        const int head = s.graph.findSender(CircuitNode::Kind::Head, 0, 3);
        QVERIFY(view.graph()->width() > 400 && view.graph()->height() > 300);
        QTest::mouseClick(view.graph(), Qt::LeftButton, {}, view.graph()->nodeRect(head).center().toPoint());
        const ViewSpec opened = edited.last().at(0).value<ViewSpec>();
        QCOMPARE(opened.view, std::string("attention"));
        QCOMPARE(opened.layer, 0);
        QCOMPARE(opened.head, 3);
        // A feed-forward in the Sparse FFN view at its layer, the logits in the Next token view at the position.
        const int mlp = s.graph.findSender(CircuitNode::Kind::Mlp, 1, -1);
        QTest::mouseClick(view.graph(), Qt::LeftButton, {}, view.graph()->nodeRect(mlp).center().toPoint());
        QCOMPARE(edited.last().at(0).value<ViewSpec>().view, std::string("sparse-ffn"));
        QCOMPARE(edited.last().at(0).value<ViewSpec>().layer, 1);
        QTest::mouseClick(view.graph(), Qt::LeftButton, {}, view.graph()->nodeRect(-2).center().toPoint());
        QCOMPARE(edited.last().at(0).value<ViewSpec>().view, std::string("next-token"));
        QCOMPARE(edited.last().at(0).value<ViewSpec>().position, 12);

        // The JSON export: every edge, the kept circuit marked.
        const nlohmann::json j = nlohmann::json::parse(view.graphJson());
        QCOMPARE(int(j["edges"].size()), 110);
        int kept = 0;
        for (const auto &e : j["edges"])
            kept += e["kept"].get<bool>();
        QCOMPARE(kept, 8);
        QCOMPARE(int(j["faithfulness"].size()), int(s.stops.size()));
    }

    void modelsWithoutOneStreamAndMissingInputsAreExplained()
    {
        ViewSpec spec = copySpec();
        spec.model = "austen-bert";
        spec.text = "abc";
        spec.set(corruptionkeys::kCorruptedText, "abd");
        spec.target = "a";
        CircuitView view;
        view.resize(1000, 600);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("is not one"), qPrintable(view.message()));
        spec = copySpec();
        spec.set(corruptionkeys::kCorruptedText, "");
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("Corrupted box"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestCircuitView)
#include "tst_circuitview.moc"
