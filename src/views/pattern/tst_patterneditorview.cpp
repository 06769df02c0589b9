// The pattern editor: token clicks make a token global, sliders change the pattern to what attentionPattern
// computes, the readout shows the core's numbers, and 16384 tokens draw at block level. The test plays the
// session: every edit the view makes comes back with its pattern analysed (tst_session checks that the session
// does so off the GUI thread).
#include "attention/attentionpattern.h"
#include "pattern/pattern.h"
#include "pattern/patterneditorview.h"
#include "testbundle.h"
#include "util/sanitizers.h"
#include "views/heatmapplot.h"
#include "views/tokenchipstrip.h"
#include "viewtesting.h"

#include <QComboBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTest>

#include <qcustomplot.h>

#include <cmath>

#include <sys/resource.h>

using namespace atlas;

namespace {

ViewInput inputOf(int T, bool causal, std::vector<int> padding = {})
{
    ViewInput input;
    for (int t = 0; t < T; ++t)
        input.tokens << QString("t%1").arg(t);
    input.causal = causal;
    input.padding = std::move(padding);
    return input;
}

// Shows `spec` with its pattern analysed, and answers every later edit the same way, as the session does.
void show(PatternEditorView &view, const ViewInput &input, const ViewSpec &spec)
{
    view.setInput(testing::analyzed(input, spec));
    view.setSpec(spec);
    QObject::disconnect(&view, &View::specEdited, nullptr, nullptr);
    QObject::connect(
        &view, &View::specEdited, &view,
        [&view, input](const ViewSpec &edited) {
            view.setInput(testing::analyzed(input, edited));
            view.setSpec(edited);
        },
        Qt::QueuedConnection);
}

ViewSpec patternSpec(const std::string &kind, std::vector<std::string> params)
{
    ViewSpec spec;
    spec.view = "pattern";
    spec.attention = kind;
    spec.attentionParams = std::move(params);
    return spec;
}

// "1,234,567", written out independently of the view.
QString grouped(int64_t n)
{
    const QString digits = QString::number(n);
    QString out;
    for (int i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

long peakRssMiB()
{
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

// Saves the view when ATLAS_PATTERN_PNG_DIR is set (for looking at it; the tests never need it).
void maybeSavePattern(PatternEditorView &view, const QString &name)
{
    const QString dir = qEnvironmentVariable("ATLAS_PATTERN_PNG_DIR");
    if (!dir.isEmpty())
        view.grab().save(dir + "/" + name);
}

} // namespace

class TestPatternEditorView : public QObject
{
    Q_OBJECT

private slots:
    void clickingATokenMakesItsRowAndColumnAllowed()
    {
        PatternEditorView view;
        view.resize(1200, 800);
        show(view, inputOf(24, false), patternSpec("longformer", {"window=2"}));
        QVERIFY(view.summary());
        QVERIFY(!view.summary()->allowed(7, 20)); // far outside the window
        // A yes/no mask: the masked style and a two-entry legend, not a 0–1 colour bar.
        QVERIFY(view.plot()->maskMode());
        QVERIFY(std::isnan(view.plot()->displayedValue(7, 20)) || view.plot()->displayedValue(7, 20) < 0);
        const auto legend = view.plot()->colorScale()->axis()->ticker().dynamicCast<QCPAxisTickerText>();
        QVERIFY(legend);
        QCOMPARE(legend->ticks().values(), QList<QString>({"masked", "attended"}));
        QSignalSpy edited(&view, &View::specEdited);
        TokenChipStrip *strip = view.tokenStrip();
        QTest::mouseClick(strip, Qt::LeftButton, {}, strip->chipRect(7).center());
        QCOMPARE(edited.count(), 1);
        QTRY_VERIFY(!view.computing());
        const ViewSpec spec = edited.takeFirst().at(0).value<ViewSpec>();
        QCOMPARE(spec.attention, std::string("longformer"));
        QVERIFY(std::find(spec.attentionParams.begin(), spec.attentionParams.end(), "global=7")
            != spec.attentionParams.end());
        QVERIFY(strip->isHighlighted(7));
        for (int t = 0; t < 24; ++t) {
            QVERIFY(view.summary()->allowed(7, t));
            QVERIFY(view.summary()->allowed(t, 7));
        }
        QCOMPARE(view.globalEdit()->text(), QString("7"));
        QTest::mouseClick(strip, Qt::LeftButton, {}, strip->chipRect(7).center()); // and back
        QTRY_VERIFY(!view.computing());
        QVERIFY(!view.summary()->allowed(7, 20));
        QVERIFY(!strip->isHighlighted(7));
    }

    // A layer with a sliding window of its own (gemma2_tiny's layers 0 and 2: 3 keys) shows that window, as the
    // Longformer kernel writes it, and says so; its global layer 1 gets the usual suggestion.
    void aWindowedLayerShowsItsOwnWindow()
    {
        ViewSpec spec;
        spec.view = "pattern";
        spec.model = ATLAS_TEST_DATA "/gemma2_tiny";
        spec.tokens = {3, 17, 42, 8, 0, 25, 63, 11};
        spec.layer = 0;
        PatternEditorView view;
        view.resize(1100, 700);
        const ViewInput input = testing::forSpec(spec);
        show(view, input, spec);
        QVERIFY(view.summary());
        for (int j = 0; j < 8; ++j)
            QCOMPARE(view.summary()->allowed(7, j), j > 4); // i − 3 < j ≤ i
        QVERIFY2(view.readoutText().contains("Layer 0's own pattern") && view.readoutText().contains("3 keys"),
            qPrintable(view.readoutText()));
        spec.layer = 1;
        show(view, testing::forSpec(spec), spec);
        QVERIFY(!view.readoutText().contains("own pattern"));
    }

    void tokensAreNotClickableForOtherKinds()
    {
        PatternEditorView view;
        show(view, inputOf(16, true), patternSpec("strided", {"stride=4"}));
        QSignalSpy edited(&view, &View::specEdited);
        QTest::mouseClick(view.tokenStrip(), Qt::LeftButton, {}, view.tokenStrip()->chipRect(3).center());
        QCOMPARE(edited.count(), 0);
        QVERIFY(view.slider("stride")->isVisibleTo(&view));
        QVERIFY(!view.slider("window")->isVisibleTo(&view));
        QVERIFY(!view.globalEdit()->isVisibleTo(&view));
    }

    void windowSliderGivesTheCoresDensity()
    {
        PatternEditorView view;
        view.resize(1200, 800);
        const std::vector<int> padding = {2};
        show(view, inputOf(40, true, padding), patternSpec("longformer", {"window=4", "global=0"}));
        const double before = view.summary()->allowedFraction();
        QSignalSpy edited(&view, &View::specEdited);
        view.slider("window")->setValue(12);
        QCOMPARE(view.spinBox("window")->value(), 12);
        QCOMPARE(edited.count(), 1);
        QTRY_VERIFY(!view.computing());
        const auto expected = attention::attentionPattern(
            attention::parseAttentionKernelSpec("longformer", {"window=12", "global=0"}), 40, true, padding, 40);
        QCOMPARE(view.summary()->allowedFraction(), expected.allowedFraction());
        QVERIFY(view.summary()->allowedFraction() > before);
        QCOMPARE(view.summary()->density, expected.density);
        const ViewSpec spec = edited.takeFirst().at(0).value<ViewSpec>();
        QVERIFY(std::find(spec.attentionParams.begin(), spec.attentionParams.end(), "window=12")
            != spec.attentionParams.end());
    }

    void readoutShowsTheCoresNumbers()
    {
        PatternEditorView view;
        show(view, inputOf(100, false),
            patternSpec("bigbird", {"block=4", "window_blocks=3", "global_blocks=1", "random_blocks=2"}));
        const auto p = attention::attentionPattern(view.editedSpec(), 100, false, {}, 100);
        const QString text = view.readoutText();
        QVERIFY2(text.contains(QString::number(100.0 * p.allowedFraction(), 'f', 2) + " %"), qPrintable(text));
        QVERIFY2(text.contains(grouped(p.allowedPairs) + " of " + grouped(p.fullPairs)), qPrintable(text));
        QVERIFY2(text.contains(grouped(p.computedPairs) + " scores"), qPrintable(text));
        QVERIFY2(text.contains(grouped(p.computedPairs - p.allowedPairs) + " of them masked"), qPrintable(text));
        QCOMPARE(view.summary()->computedPairs, p.computedPairs);
        QCOMPARE(view.headWidth(), 64); // no trace: GPT-2's d_head
        QCOMPARE(view.summary()->operations(64), p.computedPairs * 128);
        QVERIFY(text.contains(QString::fromStdString(attention::patternFormula(view.editedSpec(), false))));
    }

    void choosingAKindSuggestsParametersAndEditsTheSpec()
    {
        PatternEditorView view;
        show(view, inputOf(64, true), patternSpec("full", {}));
        QSignalSpy edited(&view, &View::specEdited);
        QCOMPARE(edited.count(), 0); // showing a suggestion is not an edit
        view.kindBox()->setCurrentText("fixed");
        emit view.kindBox()->activated(view.kindBox()->currentIndex());
        QCOMPARE(edited.count(), 1);
        const ViewSpec spec = edited.takeFirst().at(0).value<ViewSpec>();
        QTRY_VERIFY(!view.computing());
        QCOMPARE(spec.attention, std::string("fixed"));
        QCOMPARE(spec.attentionParams, (std::vector<std::string> {"stride=8", "summary=1"})); // √64
        QVERIFY(view.slider("summary")->isVisibleTo(&view));
        show(view, inputOf(64, true), patternSpec("longformer", {"global=80"})); // outside the 64 tokens
        QVERIFY(view.message().contains("global position 80"));
        QVERIFY(view.plot()->showingMessage());
    }

    void longInputDrawsBlocks()
    {
        const int T = 16384;
        [[maybe_unused]] const long before = peakRssMiB(); // read only without AddressSanitizer
        PatternEditorView view;
        view.resize(1200, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        show(view, inputOf(T, true), patternSpec("longformer", {"window=512", "global=0,4000"}));
        QVERIFY(!view.computing());
        QVERIFY(view.summary());
        QCOMPARE(view.summary()->cells, PatternAnalysis::kGridCells);
        QCOMPARE(view.plot()->matrixRows(), PatternAnalysis::kGridCells);
        QVERIFY(!view.plot()->maskMode()); // blocks: a share of each block, on a colour bar
        const auto expected = attention::attentionPattern(view.editedSpec(), T, true, {}, PatternAnalysis::kGridCells);
        QCOMPARE(view.summary()->allowedPairs, expected.allowedPairs);
        QVERIFY(view.readoutText().contains(grouped(expected.allowedPairs)));
        QVERIFY(!view.plot()->hoverTextAt(view.plot()->cellCenter(100, 3)).isEmpty());
        // Block level: the tick labels are the blocks' first positions, without a "#index" in front.
        const auto ticker = view.plot()->xAxis->ticker().dynamicCast<QCPAxisTickerText>();
        QVERIFY(ticker && ticker->ticks().size() > 1);
        QCOMPARE(ticker->ticks().first(), QStringLiteral("0"));
        QCOMPARE(ticker->ticks().last(), QString::number(view.summary()->cellEdges[size_t(ticker->ticks().lastKey())]));
        maybeSavePattern(view, "pattern-longformer-16384.png");
        view.kindBox()->setCurrentText("bigbird");
        emit view.kindBox()->activated(view.kindBox()->currentIndex());
        QVERIFY(view.computing()); // the longformer pattern stays on screen until bigbird's arrives
        QVERIFY(view.readoutText().contains("computing"));
        QTRY_VERIFY_WITH_TIMEOUT(!view.computing() && view.summary()->allowedPairs != expected.allowedPairs, 10000);
        maybeSavePattern(view, "pattern-bigbird-16384.png");
#ifndef ATLAS_ADDRESS_SANITIZER // AddressSanitizer's shadow memory and quarantine are not the view's
        QVERIFY2(peakRssMiB() - before < 150, qPrintable(QString("peak RSS grew %1 MiB").arg(peakRssMiB() - before)));
#endif
    }
};

QTEST_MAIN(TestPatternEditorView)
#include "tst_patterneditorview.moc"
