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
#include "testbundle.h"

#include <QDir>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace atlas;

class TestSession : public QObject
{
    Q_OBJECT

    static void waitIdle(Session &session) { QTRY_VERIFY_WITH_TIMEOUT(!session.busy(), 20000); }

    // A bound on the wait, not a timing claim: the residual sweep (504 forward passes) takes 34 s under the sanitizers
    // on a slow day of the 2-core CI machine.
    static void waitForAnalysis(Session &session) { QTRY_VERIFY_WITH_TIMEOUT(!session.analysis().pending, 120000); }

    // A session on the built-in tiny model, run to the end, showing `view`.
    static void open(Session &session, const std::string &view)
    {
        ViewSpec spec;
        spec.text = "The cat sat on the mat.";
        spec.view = view;
        session.setSpec(spec);
        session.openModel("tiny-bytes");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr, 20000);
        waitIdle(session);
    }

    // The same analysis computed at once from the session's own trace.
    static std::shared_ptr<const ViewAnalysis> direct(const Session &session)
    {
        std::string problem;
        auto result = runAnalysisNow(analysisRequest(session.spec(), analysisContext(session.viewInput())), &problem);
        if (!result)
            qFatal("%s", problem.c_str());
        return result;
    }

private slots:
    // A saved view that cannot be read (deeply nested, another version's) is dropped from the settings and kept
    // in a file, and the app starts from the defaults and says so; a good one comes back as it was.
    void aBadSavedSpecIsSetAsideNotFatal()
    {
        QTemporaryDir dir;
        QSettings settings(dir.filePath("settings.ini"), QSettings::IniFormat);
        const QString deep = "{\"view\": " + QString(100000, '[') + QString(100000, ']') + "}";
        settings.setValue("session/spec", deep);
        const RestoredSpec restored = restoreSavedSpec(settings, dir.filePath("kept"));
        QCOMPARE(restored.spec.toJson(), ViewSpec().toJson());
        QVERIFY2(restored.problem.contains("nested deeper than 64 levels"), qPrintable(restored.problem));
        QVERIFY(!settings.contains("session/spec"));
        const QStringList kept = QDir(dir.filePath("kept")).entryList({"rejected-session-*.json"});
        QCOMPARE(kept.size(), 1);
        QFile copy(dir.filePath("kept/" + kept.front()));
        QVERIFY(copy.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(copy.readAll()), deep);
        QVERIFY(restored.problem.contains(kept.front()));

        ViewSpec spec;
        spec.view = "mask";
        spec.layer = 1;
        saveSpec(settings, spec);
        const RestoredSpec good = restoreSavedSpec(settings, dir.filePath("kept"));
        QVERIFY(good.problem.isEmpty());
        QCOMPARE(good.spec.toJson(), spec.toJson());
    }

    // A kernel chosen for one model (a Pattern slider sets longformer, window=10000) is not carried over to the
    // next one silently: the new model runs exact attention, and the session says so (issue 28).
    void aKernelIsNotCarriedToTheNextModel()
    {
        Session session;
        open(session, "attention");
        ViewSpec spec = session.spec();
        spec.attention = "longformer";
        spec.attentionParams = {"window=4"};
        session.setSpec(spec);
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() && session.trace()->contains("layer.0.attn.mask"), 20000);
        waitIdle(session);
        QSignalSpy noticed(&session, &Session::noticed);
        session.openModel("reverse");
        QTRY_VERIFY_WITH_TIMEOUT(session.model() && session.model()->name == "reverse", 20000);
        waitIdle(session);
        QCOMPARE(session.spec().attention, std::string("full"));
        QVERIFY(session.spec().attentionParams.empty());
        QVERIFY(session.trace()->contains("layer.0.attn.scores")); // exact attention ran
        QCOMPARE(noticed.count(), 1);
        QVERIFY2(noticed.first().first().toString().contains("longformer kernel chosen for the last model"),
            qPrintable(noticed.first().first().toString()));
    }

    // A directory without a tokenizer (as `new-model` writes them) says so as it opens, and its boxes hold ids; text
    // gets the app's syntax in the message, not the command line's.
    void aModelWithoutATokenizerSaysSoAndRunsIds()
    {
        Session session;
        open(session, "attention");
        QSignalSpy noticed(&session, &Session::noticed);
        QSignalSpy errors(&session, &Session::errorOccurred);
        session.openModel(ATLAS_TEST_DATA "/llama_tiny");
        QTRY_VERIFY_WITH_TIMEOUT(session.model() && session.model()->directory.ends_with("llama_tiny"), 20000);
        waitIdle(session);
        QCOMPARE(noticed.count(), 1);
        QVERIFY2(noticed.first().first().toString().contains("no tokenizer"),
            qPrintable(noticed.first().first().toString()));
        QVERIFY(session.spec().text.empty()); // the last model's sentence is not shown over ids it never read
        QCOMPARE(session.spec().tokens, std::vector<int> {0});
        session.submitBoxes("The cat", {});
        QCOMPARE(errors.count(), 1);
        const QString message = errors.first().first().toString();
        QVERIFY2(message.contains("#0,1,2") && !message.contains("--tokens"), qPrintable(message));
        session.submitBoxes("#3,1,4", {});
        waitIdle(session);
        QCOMPARE(session.input().tokens, (std::vector<int> {3, 1, 4}));
        QCOMPARE(session.spec().tokens, (std::vector<int> {3, 1, 4}));
    }

    // T5 without a tokenizer: both boxes take ids (the CLI's --tokens and --decoder-tokens).
    void anEncoderDecoderWithoutATokenizerTakesIdsInBothBoxes()
    {
        Session session;
        QSignalSpy errors(&session, &Session::errorOccurred);
        session.openModel(ATLAS_TEST_DATA "/t5_tiny");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr, 20000);
        waitIdle(session);
        QCOMPARE(errors.count(), 0);
        session.submitBoxes("#5,6,7", "#0,3");
        waitIdle(session);
        QCOMPARE(errors.count(), 0);
        QCOMPARE(session.input().source, (std::vector<int> {5, 6, 7}));
        QCOMPARE(session.input().tokens, (std::vector<int> {0, 3}));
        QCOMPARE(session.spec().decoderTokens, (std::vector<int> {0, 3}));
    }

    // An input given while a run is under way runs after it (none is dropped), and the spec names it: the box, the
    // chips and the views agree even when the view changed meanwhile.
    void anInputGivenDuringARunRunsAfterIt()
    {
        Session session;
        open(session, "attention");
        QSignalSpy specs(&session, &Session::specChanged);
        session.setText(QString(40, 'a'));
        QVERIFY(session.busy());
        ViewSpec spec = session.spec();
        spec.view = "heads"; // a tab switch while it runs
        session.setSpec(spec);
        session.setText("The dog");
        waitIdle(session);
        QTRY_COMPARE_WITH_TIMEOUT(session.input().tokens.size(), size_t(7), 20000);
        QCOMPARE(session.spec().text, std::string("The dog"));
        QCOMPARE(session.spec().view, std::string("heads"));
    }

    // Each view keeps its own settings (the Logit lens's token is not Patching's target); another model starts from
    // the defaults of those that name one model's tokens or experts.
    void eachViewKeepsItsOwnSettingsUntilAnotherModel()
    {
        Session session;
        open(session, "logit-lens");
        ViewSpec spec = session.spec();
        spec.target = "e";
        session.setSpec(spec);
        spec.view = "patching";
        session.setSpec(spec);
        QCOMPARE(session.spec().target, std::string());
        spec = session.spec();
        spec.target = "x";
        spec.set(views::patching::kCorruptedText, "The dog sat on the mat.");
        session.setSpec(spec);
        spec.view = "logit-lens";
        session.setSpec(spec);
        QCOMPARE(session.spec().target, std::string("e"));
        session.openModel("reverse");
        QTRY_VERIFY_WITH_TIMEOUT(session.model() && session.model()->name == "reverse", 20000);
        waitIdle(session);
        QVERIFY(session.spec().target.empty());
        spec = session.spec();
        spec.view = "patching";
        session.setSpec(spec);
        QVERIFY(session.spec().target.empty() && session.spec().get(views::patching::kCorruptedText).empty());
    }

    // Issue 58: with layer 1 chosen, stepping through layer 0 said "Not computed yet: step to softmax in layer 1".
    // The views follow the stepper into the layer it runs, unless the user chose a layer while stepping.
    void theViewsFollowTheStepperIntoItsLayer()
    {
        Session session;
        ViewSpec spec;
        spec.model = "reverse";
        spec.text = "abc>cba";
        spec.layer = 1;
        session.setSpec(spec);
        session.openModel("reverse");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr, 20000);
        waitIdle(session);
        QCOMPARE(session.spec().layer, 1); // at the end, the layer chosen
        session.rewind();
        waitIdle(session);
        const int softmax0 = session.program()->producerOf("layer.0.attn.probs");
        QVERIFY(softmax0 > 0);
        session.runTo(softmax0 + 1);
        waitIdle(session);
        QCOMPARE(session.spec().layer, 0);
        QVERIFY(session.trace()->contains("layer.0.attn.probs"));
        spec = session.spec();
        spec.layer = 1; // chosen while stepping: kept
        session.setSpec(spec);
        session.step();
        waitIdle(session);
        QCOMPARE(session.spec().layer, 1);
        session.rewind();
        waitIdle(session);
        session.runTo(softmax0 + 1);
        waitIdle(session);
        QCOMPARE(session.spec().layer, 0);
        session.runTo(session.program()->producerOf("layer.1.attn.probs") + 1);
        waitIdle(session);
        QCOMPARE(session.spec().layer, 1);
    }

    // A view that names an op (the architecture diagram) steps the model there; the spec keeps no op, so the same
    // op asked for again after other steps steps there again; the timeline and the graph share one cursor.
    void aSpecNamingAnOpStepsThere()
    {
        Session session;
        open(session, "architecture");
        QCOMPARE(session.cursor(), int(session.program()->ops.size()));
        ViewSpec spec = session.spec();
        spec.op = session.program()->ops[6].name;
        session.setSpec(spec);
        QTRY_COMPARE_WITH_TIMEOUT(session.cursor(), 7, 20000);
        waitIdle(session);
        QVERIFY(session.spec().op.empty());
        QVERIFY(!session.trace()->contains(session.program()->ops[7].outputs.front().name));
        session.runToEnd();
        waitIdle(session);
        session.setSpec(spec);
        QTRY_COMPARE_WITH_TIMEOUT(session.cursor(), 7, 20000);
        waitIdle(session);
        spec = session.spec();
        spec.view = "memory-timeline";
        spec.cursor = 40;
        session.setSpec(spec);
        spec.view = "memory-graph"; // switching tabs keeps the cursor
        session.setSpec(spec);
        QCOMPARE(session.spec().cursor, 40);
    }

    // "Run the model with" another encoding: the same weights load again under it, the attention changes, and a
    // model opened afresh runs with its own.
    void positionsRerunTheSameWeightsUnderAnotherEncoding()
    {
        Session session;
        open(session, "positions");
        const Tensor before = session.trace()->tensor("layer.0.attn.probs");
        QVERIFY(session.trace()->find("pos.encoding"));
        ViewSpec spec = session.spec();
        spec.positions = "alibi";
        session.setSpec(spec);
        QTRY_VERIFY_WITH_TIMEOUT(session.model()->config.positions == PositionKind::Alibi, 20000);
        waitIdle(session);
        QCOMPARE(session.spec().positions, std::string("alibi"));
        QVERIFY(session.trace()->find("layer.0.attn.bias"));
        QVERIFY(!session.trace()->find("pos.encoding"));
        const Tensor after = session.trace()->tensor("layer.0.attn.probs");
        QVERIFY(!std::equal(before.data(), before.data() + before.numel(), after.data()));
        session.openModel("tiny-bytes");
        QTRY_VERIFY_WITH_TIMEOUT(session.model()->config.positions == PositionKind::Learned, 20000);
        waitIdle(session);
        QVERIFY(session.spec().positions.empty());
    }

    // Past the context: a model whose positions are computed (RoPE) runs on, saying it extrapolates; a learned table
    // cannot, and says so.
    void anInputPastTheTrainingLengthRunsWhenPositionsAreComputed()
    {
        Session session;
        ViewSpec spec;
        spec.text = "abcd>dcba";
        session.setSpec(spec);
        session.openModel("reverse-rope");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr, 20000);
        waitIdle(session);
        QSignalSpy notices(&session, &Session::noticed), errors(&session, &Session::errorOccurred);
        const QString twice = "abcdefghijklmnop>ponmlkjihgfedcba"; // 33 tokens, the context is 32
        session.setText(twice);
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() && session.trace()->tensor("logits").dim(0) == 33, 20000);
        waitIdle(session);
        QCOMPARE(errors.count(), 0);
        QVERIFY(notices.count() >= 1);
        QVERIFY2(notices.last().at(0).toString().contains("past the 32 positions reverse-rope was trained for"),
            qPrintable(notices.last().at(0).toString()));
        QCOMPARE(session.model()->config.context, 32); // the model itself is unchanged

        session.openModel("reverse");
        QTRY_VERIFY_WITH_TIMEOUT(session.model()->name == "reverse", 20000);
        waitIdle(session);
        session.setText(twice);
        QTRY_VERIFY_WITH_TIMEOUT(errors.count() >= 1, 20000);
        QVERIFY2(errors.last().at(0).toString().contains("longer than the model's context of 32"),
            qPrintable(errors.last().at(0).toString()));
    }

    void viewsWithoutAnAnalysisGetNone()
    {
        Session session;
        open(session, "attention");
        QVERIFY(!session.analysis().pending);
        QVERIFY(session.analysis().result == nullptr);
        QVERIFY(session.analysis().problem.isEmpty());
    }

    void theComparisonRunsOffTheGuiThreadAndEqualsTheCoreOne()
    {
        Session session;
        open(session, "attention");
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
        const auto reference = direct(session);
        const auto *theirs = dynamic_cast<const KernelComparisonAnalysis *>(reference.get());
        QCOMPARE(mine->entries.size(), theirs->entries.size());
        for (size_t i = 0; i < mine->entries.size(); ++i)
            QCOMPARE(mine->entries[i].meanAbsError, theirs->entries[i].meanAbsError);
        QVERIFY(session.viewInput().analysis.result == session.analysis().result); // what the views are handed
    }

    void aSettledResultIsReusedWhileItsKeyStands()
    {
        Session session;
        open(session, "kernels");
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
        open(session, "memory-timeline");
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
        open(session, "memory-depth");
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
        open(session, "approximation");
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
        open(session, "lsh"); // the model runs full attention
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
        open(session, "pattern");
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

QTEST_GUILESS_MAIN(TestSession)
#include "tst_session.moc"
