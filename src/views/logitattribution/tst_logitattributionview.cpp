// The Logit attribution view (src/views/logitattribution) as a researcher reads it: the grid holds the analysis's
// parts and they sum to the model's own logit; an empty target is the model's top token; the largest writers are
// listed; a click on a head opens it in the Attention view; a second token splits the logit difference; a model whose
// logit has no direct parts (BERT's masked-LM head) is refused with the reason.
#include "layouttesting.h"
#include "logitattribution/logitattribution.h"
#include "logitattribution/logitattributionview.h"
#include "testbundle.h"
#include "views/heatmapplot.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace atlas;

namespace {

ViewSpec attributionSpec(const std::string &model, const std::string &text)
{
    ViewSpec spec;
    spec.view = "logit-attribution";
    spec.model = model;
    spec.text = text;
    return spec;
}

} // namespace

class TestLogitAttributionView : public QObject
{
    Q_OBJECT

private slots:
    void theGridSplitsTheModelsTopLogit()
    {
        const ViewSpec spec = attributionSpec("reverse-llama", "abcdefgh>hgfedcb");
        const ViewInput input = testing::forSpec(spec);
        LogitAttributionView view;
        QVERIFY(testing::shown(view, spec, input, {1200, 700}));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = input.analysisAs<LogitAttributionAnalysis>();
        QVERIFY(a);
        const LogitAttribution &parts = a->parts;
        const Tensor &probs = input.trace->tensor("next_probs");
        const int V = int(probs.dim(1)), T = int(input.tokens.size());
        const float *p = probs.data() + size_t(T - 1) * size_t(V);
        QCOMPARE(parts.target, int(std::max_element(p, p + V) - p)); // no target: the model's own top token
        QCOMPARE(parts.position, T - 1);
        const int cols = parts.heads + 1; // the feed-forward; no bias column, as Llama's projections have none
        QCOMPARE(view.plot()->matrixRows(), parts.layers);
        QCOMPARE(view.plot()->matrixCols(), cols);
        double drawn = parts.embedding + parts.normShift;
        for (int l = 0; l < parts.layers; ++l)
            for (int c = 0; c < cols; ++c)
                drawn += view.plot()->displayedValue(l, c);
        QVERIFY2(std::abs(drawn - parts.modelLogit) < 1e-3,
            qPrintable(QString("%1 vs %2").arg(drawn).arg(parts.modelLogit)));
        QVERIFY(std::abs(view.plot()->displayedValue(1, 2) - parts.selfHead(1, 2)) < 1e-6);
        QVERIFY(view.caption().contains("Check"));
        QVERIFY(view.caption().contains("gap"));
        QVERIFY(view.topWriters().startsWith("Largest writers"));
        QTRY_VERIFY(!view.cellText(0, 0).isEmpty());
        QVERIFY(view.plot()->hoverTextAt(view.plot()->cellCenter(1, 2)).contains("click to open"));
        QVERIFY(!view.plot()->hoverTextAt(view.plot()->cellCenter(1, cols - 1)).contains("click to open"));
        testing::maybeSave(view, "logit-attribution");

        QSignalSpy edited(&view, &View::specEdited);
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, view.plot()->cellCenter(1, 2).toPoint());
        QCOMPARE(edited.count(), 1);
        const ViewSpec opened = edited.takeFirst().at(0).value<ViewSpec>();
        QCOMPARE(QString::fromStdString(opened.view), QString("attention"));
        QCOMPARE(opened.layer, 1);
        QCOMPARE(opened.head, 2);
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, view.plot()->cellCenter(1, cols - 1).toPoint());
        QCOMPARE(edited.count(), 0); // the feed-forward opens nothing
    }

    void aSecondTokenSplitsTheDifference()
    {
        ViewSpec spec = attributionSpec("austen", "It is a truth universally acknowledged");
        spec.target = "a";
        spec.set(views::logitattribution::kAgainst, "e");
        const ViewInput input = testing::forSpec(spec);
        LogitAttributionView view;
        view.resize(1200, 700);
        view.setSpec(spec);
        view.setInput(input);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = input.analysisAs<LogitAttributionAnalysis>();
        QVERIFY(a && a->parts.contrast >= 0);
        const Tensor &logits = input.trace->tensor("logits");
        const int V = int(logits.dim(1)), t = a->parts.position;
        const double difference = double(logits.data()[size_t(t) * size_t(V) + size_t(a->parts.target)])
            - logits.data()[size_t(t) * size_t(V) + size_t(a->parts.contrast)];
        QVERIFY(std::abs(a->parts.modelLogit - difference) < 1e-5);
        QVERIFY(std::abs(a->parts.sum - difference) < 1e-3);
        QVERIFY(view.plot()->title().contains("logit('a') − logit('e')"));
        QVERIFY(view.caption().contains("centring")); // austen's final norm is a LayerNorm
    }

    void aHeadThatTransformsTheStreamIsRefused()
    {
        const ViewSpec spec = attributionSpec("austen-bert", "It is a truth [MASK] acknowledged");
        LogitAttributionView view;
        view.resize(1200, 700);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("masked-LM head"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestLogitAttributionView)
#include "tst_logitattributionview.moc"
