// The session owns the views' analyses (view/viewanalysis.h): it runs the analysis the spec's view needs off the
// GUI thread, keyed by what it reads, so that a view only draws what it is handed. The newest request wins, a
// settled result is reused while its key stands, and a request that cannot run is a problem, not a job.
#include "ablation/ablation.h"
#include "approximation/approximation.h"
#include "kernels/kernels.h"
#include "model/builtinmodels.h"
#include "patching/patching.h"
#include "pattern/pattern.h"
#include "session/savedspec.h"
#include "session/session.h"
#include "sessiontesting.h"
#include "testbundle.h"

#include <QSignalSpy>
#include <QTest>

using namespace atlas;
using namespace atlas::testing;

class TestSessionAnalyses : public QObject
{
    Q_OBJECT

private slots:
    void viewsWithoutAnAnalysisGetNone()
    {
        Session session;
        openTiny(session, "attention");
        QVERIFY(!session.analysis().pending);
        QVERIFY(session.analysis().result == nullptr);
        QVERIFY(session.analysis().problem.isEmpty());
    }

    void theComparisonRunsOffTheGuiThreadAndEqualsTheCoreOne()
    {
        Session session;
        openTiny(session, "attention");
        QSignalSpy done(&session, &Session::analysisChanged);
        ViewSpec spec = session.spec();
        spec.view = "kernels";
        spec.layer = 1;
        spec.head = 2;
        session.setSpec(spec);
        QVERIFY(session.analysis().pending); // started, not computed on this thread
        QVERIFY(session.analysis().result == nullptr);
        waitForAnalysis(session);
        QCOMPARE(done.count(), 1);
        const auto *mine = dynamic_cast<const KernelComparisonAnalysis *>(session.analysis().result.get());
        QVERIFY(mine != nullptr);
        QCOMPARE(mine->layer, 1);
        QCOMPARE(mine->head, 2);
        const auto reference = directAnalysis(session);
        const auto *theirs = dynamic_cast<const KernelComparisonAnalysis *>(reference.get());
        QCOMPARE(mine->entries.size(), theirs->entries.size());
        for (size_t i = 0; i < mine->entries.size(); ++i)
            QCOMPARE(mine->entries[i].meanAbsError, theirs->entries[i].meanAbsError);
        QVERIFY(session.viewInput().analysis.result == session.analysis().result); // what the views are handed
    }

    void aSettledResultIsReusedWhileItsKeyStands()
    {
        Session session;
        openTiny(session, "kernels");
        waitForAnalysis(session);
        const auto first = session.analysis().result;
        QVERIFY(first != nullptr);
        ViewSpec spec = session.spec();
        spec.colormap = "magma"; // drawing only: the comparison does not read it
        session.setSpec(spec);
        QVERIFY(!session.analysis().pending);
        QCOMPARE(session.analysis().result, first);
        session.step(); // stepping back and forth keeps Q, K, V: the same tensors, the same result
        waitIdle(session);
        QCOMPARE(session.analysis().result, first);
    }

    // The memory timeline and the graph draw one recording: switching between them runs nothing, and the state says
    // whose settings it answers, so that the graph draws it (View::currentAnalysis) rather than wait for it.
    void twoViewsOfOneAnalysisShareItsResult()
    {
        Session session;
        openTiny(session, "memory-timeline");
        waitForAnalysis(session);
        const auto recording = session.analysis().result;
        QVERIFY(recording != nullptr);
        QCOMPARE(session.analysis().settings, analysisSettings(session.spec()));
        ViewSpec spec = session.spec();
        spec.view = "memory-graph";
        session.setSpec(spec);
        QVERIFY(!session.analysis().pending);
        QCOMPARE(session.analysis().result, recording);
        QCOMPARE(session.analysis().settings, analysisSettings(session.spec()));
        spec = session.spec();
        spec.cursor = 5; // the graph's scrub position: drawing only
        session.setSpec(spec);
        QCOMPARE(session.analysis().result, recording);
        spec.checkpointEvery = 2; // a key the recording reads: a new one
        session.setSpec(spec);
        QVERIFY(session.analysis().pending && session.analysis().result == nullptr);
        waitForAnalysis(session);
        QVERIFY(session.analysis().result != nullptr && session.analysis().result != recording);
    }

    // Back to a view shown a moment ago whose analysis took long (a memory sweep): its result is the one computed
    // then, at once. A quick one (the kernel comparison of a few tokens) is computed again instead of kept.
    void aRecentLongResultComesBackAtOnce()
    {
        Session session;
        openTiny(session, "memory-depth");
        ViewSpec spec = session.spec();
        spec.depth = 2;
        session.setSpec(spec);
        waitForAnalysis(session);
        const auto sweep = session.analysis().result;
        QVERIFY(sweep != nullptr && sweep->milliseconds >= RecentAnalyses::kWorthMs);
        spec.view = "kernels";
        session.setSpec(spec);
        waitForAnalysis(session);
        const auto kernels = session.analysis().result;
        QVERIFY(kernels != nullptr && kernels->milliseconds < RecentAnalyses::kWorthMs);
        spec.view = "memory-depth";
        session.setSpec(spec);
        QVERIFY(!session.analysis().pending);
        QCOMPARE(session.analysis().result, sweep);
        spec.view = "kernels";
        session.setSpec(spec);
        QVERIFY(session.analysis().pending);
        waitForAnalysis(session);
        QVERIFY(session.analysis().result != nullptr && session.analysis().result != kernels);
    }

    // Another positional encoding keeps the weights (Model::withPositions shares them) but is another model: the
    // analyses that rerun the model ask for a new result instead of taking the one computed for its weights.
    void anAnalysisKeyNamesTheModelNotOnlyItsWeights()
    {
        const auto rope = loadModel("reverse-rope");
        const auto alibi = std::make_shared<const Model>(rope->withPositions(PositionKind::Alibi, "positions"));
        QCOMPARE(alibi->wte.data(), rope->wte.data());
        for (const char *view : {"ablation", "memory-timeline"}) {
            ViewSpec spec;
            spec.view = view;
            spec.set(views::ablation::kAblateHeads, "0.1");
            const auto key = [&](const std::shared_ptr<const Model> &model) {
                AnalysisContext c;
                c.model = model;
                c.tokenIds = {1, 2, 3, 4};
                c.tokens = 4;
                c.layers = model->config.layers;
                const AnalysisRequest r = analysisRequest(spec, c);
                return r.problem.empty() ? r.key : "problem: " + r.problem;
            };
            QVERIFY2(!key(rope).starts_with("problem"), key(rope).c_str());
            QVERIFY2(key(rope) != key(alibi), view);
        }
    }

    void theNewestRequestWins()
    {
        Session session;
        openTiny(session, "approximation");
        ViewSpec spec = session.spec();
        spec.set(views::approximation::kApproximation, "performer");
        for (int head = 0; head < 4; ++head) { // faster than the sweeps finish
            spec.head = head;
            session.setSpec(spec);
        }
        waitForAnalysis(session);
        const auto *sweep = dynamic_cast<const ApproximationAnalysis *>(session.analysis().result.get());
        QVERIFY(sweep != nullptr);
        QCOMPARE(sweep->head, 3);
        QCOMPARE(sweep->sweep.kernel, std::string("performer"));
        QTest::qWait(100); // a late result of an older request must not replace it
        QCOMPARE(dynamic_cast<const ApproximationAnalysis *>(session.analysis().result.get())->head, 3);
    }

    // A long analysis reports its progress to the views and stops when asked: the cancelled result is never adopted,
    // and the same spec does not start it again until something changes.
    void aLongAnalysisShowsProgressAndCancels()
    {
        Session session;
        ViewSpec spec;
        spec.view = "patching";
        spec.model = "austen"; // the settings are austen's: another model opened afresh starts without them
        const std::string text
            = "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
              "must be in want of a wife. Howeve";
        spec.text = text + "r";
        spec.set(views::patching::kCorruptedText, text + "x");
        spec.target = "#32";
        spec.set(views::patching::kPatch, "residual");
        int largest = 0; // the most progress a view was told of while the sweep ran
        connect(&session, &Session::analysisChanged, this, [&session, &largest] {
            if (session.analysis().pending)
                largest = std::max(largest, session.analysis().total);
        });
        session.setSpec(spec);
        session.openModel("austen");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr, 20000);
        waitIdle(session);
        waitForAnalysis(session);
        const auto *done = dynamic_cast<const PatchingAnalysis *>(session.analysis().result.get());
        QVERIFY2(done != nullptr, qPrintable(session.analysis().problem));
        const int patches = 4 * int(text.size() + 1);
        QCOMPARE(done->result.patches, patches);
        if (done->milliseconds > 400) // ticks come every 150 ms: a sweep this long reported its total
            QCOMPARE(largest, patches);
        else
            qWarning("the sweep took %d ms: too short to see its progress", int(done->milliseconds));

        spec.target = "#11"; // another sweep, cancelled at once
        session.setSpec(spec);
        QVERIFY(session.analysis().pending);
        session.cancelAnalysis();
        QVERIFY(!session.analysis().pending);
        QVERIFY(session.analysis().problem.startsWith("Cancelled"));
        QTest::qWait(300);
        session.setSpec(spec); // the same spec: not run again
        QVERIFY(session.analysis().problem.startsWith("Cancelled"));
        QVERIFY(session.analysis().result == nullptr);
    }

    // Issue 58: leaving Patching or Head ablation mid-run restarted them from zero. A run left behind goes on, and
    // its tab comes back to its result; a run of the same view made stale by a new setting is cancelled.
    void aRunLeftBehindFinishesAndIsThereWhenItsTabComesBack()
    {
        Session session;
        ViewSpec spec;
        spec.view = "patching";
        spec.model = "austen";
        spec.text = "It is a truth universally acknowledged, that a single man";
        spec.set(views::patching::kCorruptedText,
            "It is a truth universally acknowledged, that a single mat"); // the last position
        spec.target = "#32";
        session.setSpec(spec);
        session.openModel("austen");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr, 20000);
        waitIdle(session);
        QVERIFY(session.analysis().pending);
        spec = session.spec();
        spec.view = "attention"; // away mid-run
        session.setSpec(spec);
        QCOMPARE(session.analysesUnderWay(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(session.analysesUnderWay(), 0, 120000); // it went on, and finished
        spec.view = "patching";
        session.setSpec(spec);
        QVERIFY(!session.analysis().pending); // its result, at once
        QVERIFY(dynamic_cast<const PatchingAnalysis *>(session.analysis().result.get()) != nullptr);
        // A new setting of the same view cancels the stale run: one run, the newest.
        spec.set(views::patching::kContrast, "#101");
        session.setSpec(spec);
        spec.set(views::patching::kContrast, "#116");
        session.setSpec(spec);
        QTRY_VERIFY_WITH_TIMEOUT(session.analysesUnderWay() <= 1, 20000);
        waitForAnalysis(session);
        const auto *last = dynamic_cast<const PatchingAnalysis *>(session.analysis().result.get());
        QVERIFY2(last != nullptr, qPrintable(session.analysis().problem));
        QCOMPARE(last->contrast, 116);
    }

    // The memory sweeps and the head ablation report their progress (the views show a bar and Cancel), to the end.
    void theSweepsAndTheAblationReportProgress()
    {
        Session session;
        ViewSpec opened;
        opened.model = "reverse"; // a task to score: the ablation's importance table
        opened.text = "abcd>dcba";
        session.setSpec(opened);
        session.openModel("reverse");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr, 20000);
        waitIdle(session);
        for (const std::string view : {"memory-depth", "memory-tradeoff", "ablation"}) {
            ViewSpec spec = session.spec();
            spec.view = view;
            spec.depth = 2;
            const AnalysisRequest request = analysisRequest(spec, analysisContext(session.viewInput()));
            QVERIFY2(request.progress != nullptr, view.c_str());
            std::string problem;
            QVERIFY2(runAnalysisNow(request, &problem) != nullptr, problem.c_str());
            QVERIFY2(request.progress->total > 0 && request.progress->done == request.progress->total, view.c_str());
        }
    }

    void aRequestThatCannotRunIsAProblem()
    {
        Session session;
        openTiny(session, "lsh"); // the model runs full attention
        QVERIFY(!session.analysis().pending);
        QCOMPARE(session.analysis().problem, QString("This layer runs full attention: choose Attention ▸ lsh"));
        session.rewind();
        waitIdle(session);
        ViewSpec spec = session.spec();
        spec.view = "kernels";
        session.setSpec(spec);
        QVERIFY(session.analysis().problem.startsWith("Not computed yet: step to split heads in layer 0"));
    }

    void thePatternIsComputedForEveryEdit()
    {
        Session session;
        openTiny(session, "pattern");
        waitForAnalysis(session);
        const auto *suggested = dynamic_cast<const PatternAnalysis *>(session.analysis().result.get());
        QVERIFY(suggested && suggested->suggested); // the model runs full attention: a suggestion for T
        ViewSpec spec = session.spec();
        spec.attention = "strided";
        spec.attentionParams = {"stride=3"};
        session.setSpec(spec);
        waitIdle(session);
        waitForAnalysis(session);
        const auto *edited = dynamic_cast<const PatternAnalysis *>(session.analysis().result.get());
        QVERIFY(edited && !edited->suggested);
        QCOMPARE(attention::describeAttentionKernel(edited->spec), std::string("strided (stride=3)"));
        QCOMPARE(session.program()->attentionOf(0).kind, std::string("strided")); // the model reran with it
    }
};

QTEST_GUILESS_MAIN(TestSessionAnalyses)
#include "tst_sessionanalyses.moc"
