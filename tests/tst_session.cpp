// The session: a saved view that cannot be read, kernels and positions across models, input without a tokenizer, an
// input given during a run, each view's own settings, and the views following the stepper. Its analyses are
// tst_sessionanalyses's.
#include "ablation/ablation.h"
#include "approximation/approximation.h"
#include "io/limits.h"
#include "kernels/kernels.h"
#include "model/builtinmodels.h"
#include "patching/patching.h"
#include "pattern/pattern.h"
#include "session/savedspec.h"
#include "session/session.h"
#include "sessiontesting.h"
#include "testbundle.h"

#include <QDir>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace atlas;
using namespace atlas::testing;

class TestSession : public QObject
{
    Q_OBJECT

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

        // A document as long as File ▸ Open Text File reads, every line ending escaped, comes back whole.
        spec.text.clear();
        while (spec.text.size() < limits::kInputTextBytes - 64)
            spec.text += "It is a truth universally acknowledged.\n";
        saveSpec(settings, spec);
        const RestoredSpec longText = restoreSavedSpec(settings, dir.filePath("kept"));
        QVERIFY2(longText.problem.isEmpty(), qPrintable(longText.problem));
        QCOMPARE(longText.spec.text, spec.text);
    }

    // A kernel chosen for one model (a Pattern slider sets longformer, window=10000) is not carried over to the
    // next one silently: the new model runs exact attention, and the session says so (issue 28).
    void aKernelIsNotCarriedToTheNextModel()
    {
        Session session;
        openTiny(session, "attention");
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
        // exact attention ran (the new model's run may commit after the session was first seen idle)
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() && session.trace()->contains("layer.0.attn.scores"), 20000);
        QCOMPARE(noticed.count(), 1);
        QVERIFY2(noticed.first().first().toString().contains("longformer kernel chosen for the last model"),
            qPrintable(noticed.first().first().toString()));
    }

    // A directory without a tokenizer (as `new-model` writes them) says so as it opens, and its boxes hold ids; text
    // gets the app's syntax in the message, not the command line's.
    void aModelWithoutATokenizerSaysSoAndRunsIds()
    {
        Session session;
        openTiny(session, "attention");
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
        openTiny(session, "attention");
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
        openTiny(session, "logit-lens");
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
        openTiny(session, "architecture");
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
        openTiny(session, "positions");
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
    // An input whose whole attention matrices are over the budget runs with its attention kept on demand, and the
    // session says so with both figures.
    void anInputOverTheBudgetKeepsAttentionOnDemandAndSaysSo()
    {
        Session session;
        ViewSpec spec;
        spec.text = "abcdefghijklmno>onmlkjihgfedcba"; // 31 tokens
        session.setSpec(spec);
        session.openModel("reverse-rope");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr, 20000);
        waitIdle(session);
        QVERIFY(session.trace()->contains("layer.0.attn.probs"));
        session.setMemoryBudget(session.program()->tracedBytes() - 1);
        QSignalSpy notices(&session, &Session::noticed), errors(&session, &Session::errorOccurred);
        session.setText("abcdefghijklmnop>ponmlkjihgfedcb"); // one token more than the budget was set for
        QTRY_VERIFY_WITH_TIMEOUT(
            errors.count() > 0 || (session.trace() && session.trace()->contains("layer.0.attn.lse")), 20000);
        waitIdle(session);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().first().toString()));
        QVERIFY(!session.trace()->contains("layer.0.attn.probs"));
        QVERIFY(notices.count() >= 1);
        QVERIFY2(notices.last().at(0).toString().contains("32 tokens: attention and logits kept on demand"),
            qPrintable(notices.last().at(0).toString()));
    }

    // Over the budget even with attention on demand, each block keeps its checkpoints: the session says so, and the
    // tensors the view on screen reads that were freed are computed again on the worker, the layer's own and no other.
    void aRunKeepingCheckpointsRecomputesWhatTheViewReads()
    {
        Session session;
        openTiny(session, "sparse-ffn");
        const std::string text = "The cat sat on the mat.";
        const Tensor whole = session.trace()->tensor("layer.1.mlp.act");
        Input input = session.input();
        session.setMemoryBudget(
            Program::build(session.model()->config, input, true, 1, AttentionTrace::OnDemand).tracedBytes() - 1);
        QSignalSpy notices(&session, &Session::noticed), errors(&session, &Session::errorOccurred);
        ViewSpec spec = session.spec();
        spec.layer = 1;
        session.setSpec(spec);
        session.setText(QString::fromStdString(text).replace("mat", "hat"));
        QTRY_VERIFY_WITH_TIMEOUT(errors.count() > 0 || (session.program() && session.program()->checkpointed()), 20000);
        waitIdle(session);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().first().toString()));
        QVERIFY(notices.count() >= 1);
        QVERIFY2(notices.last().at(0).toString().contains("only each block's checkpoints kept"),
            qPrintable(notices.last().at(0).toString()));
        QVERIFY(session.trace()->contains("layer.1.mlp.act"));
        QVERIFY(!session.trace()->contains("layer.0.mlp.act") && !session.trace()->contains("layer.1.ln_2"));
        waitForAnalysis(session);
        QVERIFY2(session.analysis().result, qPrintable(session.analysis().problem));
        // the same text as before: the recomputed activations are the whole run's (to the rounding of attention
        // computed a tile at a time)
        session.setText(QString::fromStdString(text));
        QTRY_VERIFY_WITH_TIMEOUT(session.input().tokens == input.tokens, 20000);
        waitIdle(session);
        const Tensor &recomputed = session.trace()->tensor("layer.1.mlp.act");
        QCOMPARE(recomputed.shape(), whole.shape());
        for (int64_t i = 0; i < whole.numel(); ++i)
            QVERIFY(std::abs(recomputed.data()[i] - whole.data()[i]) <= 1e-5f * (1 + std::abs(whole.data()[i])));
        spec = session.spec();
        spec.layer = 0;
        session.setSpec(spec);
        waitIdle(session);
        QVERIFY(session.trace()->contains("layer.0.mlp.act") && !session.trace()->contains("layer.1.mlp.act"));
        // the Tensor view's tensor, whatever it names
        spec.view = "tensor";
        spec.tensor = "layer.1.attn.v";
        session.setSpec(spec);
        waitIdle(session);
        QVERIFY(session.trace()->contains("layer.1.attn.v") && !session.trace()->contains("layer.0.mlp.act"));
    }

    // Over the budget even with each block's checkpoints, a block keeps only its input: the Attention view's layer has
    // its scored queries and keys computed again on the worker, and its heads read from them are the whole run's.
    void aRunKeepingBlockInputsRecomputesTheShownLayersQueriesAndKeys()
    {
        Session session;
        openTiny(session, "attention");
        const Tensor whole = session.trace()->tensor("layer.1.attn.probs");
        session.setMemoryBudget(Program::build(session.model()->config, session.input(), true, 1,
                                    AttentionTrace::OnDemand, BlockKeeping::Checkpoints)
                                    .tracedBytes()
            - 1);
        QSignalSpy notices(&session, &Session::noticed), errors(&session, &Session::errorOccurred);
        ViewSpec spec = session.spec();
        spec.layer = 1;
        session.setSpec(spec);
        session.setText("The cat sat on the mat!");
        QTRY_VERIFY_WITH_TIMEOUT(errors.count() > 0 || (session.program() && session.program()->checkpointed()), 20000);
        session.setText("The cat sat on the mat.");
        QTRY_VERIFY_WITH_TIMEOUT(errors.count() > 0 || !session.trace()->contains("layer.1.attn.probs"), 20000);
        waitIdle(session);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().first().toString()));
        QVERIFY2(notices.last().at(0).toString().contains("only each block's input kept"),
            qPrintable(notices.last().at(0).toString()));
        const ModelConfig &c = session.model()->config;
        for (const std::string &name : readoutInputs(c, 1))
            QVERIFY2(session.trace()->contains(name), name.c_str());
        for (const std::string &name : readoutInputs(c, 0))
            QVERIFY2(!session.trace()->contains(name), name.c_str());
        QVERIFY(!session.trace()->contains("layer.1.mid"));
        const auto readout = AttentionReadout::find(*session.model(), {}, *session.trace(), 1);
        QVERIFY(readout);
        for (int64_t h = 0; h < readout->heads(); ++h) {
            const Tensor probs = readout->head(ops::ScoreStage::Probs, h);
            for (int64_t i = 0; i < probs.numel(); ++i)
                QVERIFY(std::abs(probs.data()[i] - whole.data()[h * probs.numel() + i]) <= 1e-5f);
        }

        // With nothing else to do, the layer beside the one shown has its queries and keys made on the worker, quietly
        // (no progress bar); a step to it shows those very tensors, and the layer left becomes the one made ahead.
        QCOMPARE(session.prefetched(), readoutInputs(c, 0));
        QSignalSpy busy(&session, &Session::busyChanged);
        const float *early = session.prefetchedTensor(readoutInputs(c, 0).front())->data();
        spec.layer = 0;
        session.setSpec(spec);
        waitIdle(session); // the step's job, then the quiet one for layer 1
        QCOMPARE(session.trace()->tensor(readoutInputs(c, 0).front()).data(), early);
        QCOMPARE(session.prefetched(), readoutInputs(c, 1));
        QCOMPARE(busy.count(), 3); // true, false for the step; false alone for the quiet job
        QCOMPARE(busy.at(0).at(0).toBool(), true);
        QCOMPARE(busy.at(2).at(0).toBool(), false);
        // What the user asks while the quiet job runs (Step Back here, asked as it starts) is not dropped: it runs
        // right after it.
        const int cursor = session.cursor();
        bool asked = false, quietWhenAsked = false;
        const QMetaObject::Connection once = connect(&session, &Session::busyChanged, &session, [&](bool on) {
            if (!on && !asked) {
                asked = true; // the step's job is done; the quiet one starts before the window's next event
                QTimer::singleShot(0, &session, [&] {
                    quietWhenAsked = session.busy();
                    session.back();
                });
            }
        });
        spec.layer = 1;
        session.setSpec(spec);
        QTRY_VERIFY_WITH_TIMEOUT(session.cursor() == cursor - 1, 20000);
        QVERIFY(quietWhenAsked);
        disconnect(once);
        session.runToEnd();
        waitIdle(session);

        // Past the budget, a view that reads every layer's queries and keys again (All heads) is refused with the
        // figures and nothing is computed; one layer's still fit and are.
        session.setMemoryBudget(session.trace()->bytes()); // what the run keeps, plus one layer's
        spec.view = "heads";
        session.setSpec(spec);
        waitIdle(session);
        waitForAnalysis(session);
        const std::string refusal = session.analysis().problem.toStdString();
        QVERIFY2(refusal.starts_with(
                     "Not computed: this view reads " + std::to_string(2 * c.layers) + " tensors computed again (")
                && refusal.find(" trace budget. Raise it (Run ▸ Trace Memory Budget)") != std::string::npos,
            refusal.c_str());
        QVERIFY(!session.analysis().result);
        for (const std::string &name : readoutInputs(c, 0))
            QVERIFY2(!session.trace()->contains(name), name.c_str());
        spec.view = "attention";
        spec.layer = 0;
        session.setSpec(spec);
        waitIdle(session);
        waitForAnalysis(session);
        for (const std::string &name : readoutInputs(c, 0))
            QVERIFY2(session.trace()->contains(name), name.c_str());
        QVERIFY2(session.analysis().problem.isEmpty(), qPrintable(session.analysis().problem));
        QVERIFY(AttentionReadout::find(*session.model(), {}, *session.trace(), 0));
    }

    // File ▸ Open Text File: a document read and tokenized on the worker, then run as typed text is; its byte-order
    // mark dropped and its newlines kept. A file that is not UTF-8 text is refused naming it, and the input stays.
    void aTextFileIsReadAsTheInput()
    {
        Session session;
        session.openModel("tiny-bytes");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr, 20000);
        waitIdle(session);
        QTemporaryDir dir;
        std::string text;
        for (int line = 0; text.size() < 700; ++line)
            text += "Line " + std::to_string(line) + ": it was a truth universally acknowledged.\n";
        QFile file(dir.filePath("document.txt"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("\xEF\xBB\xBF" + QByteArray::fromStdString(text));
        file.close();
        QSignalSpy errors(&session, &Session::errorOccurred);
        session.openTextFile(file.fileName());
        QTRY_VERIFY_WITH_TIMEOUT(errors.count() > 0 || session.input().tokens.size() > 100, 20000);
        waitIdle(session);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().first().toString()));
        QCOMPARE(session.spec().text, text);
        QCOMPARE(session.input().tokens, session.tokenizer()->encodeWithSpecialTokens(text));
        QCOMPARE(session.trace()->tensor("logits").dim(0), int64_t(session.input().tokens.size()));

        // A long paste is tokenized on the worker too, and a file asked for while a run is under way waits for it
        // (runs kept on demand under a small budget: these are thousands of tokens).
        session.setMemoryBudget(size_t(64) << 20);
        waitIdle(session);
        std::string pasted;
        while (pasted.size() <= Session::kTokenizeHereBytes)
            pasted += "A long paste, tokenized off the window's thread. ";
        session.setText(QString::fromStdString(pasted));
        QVERIFY(session.busy());
        session.openTextFile(file.fileName());
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy() && session.spec().text == text, 20000);
        QCOMPARE(session.input().tokens, session.tokenizer()->encodeWithSpecialTokens(text));
        session.setText(QString::fromStdString(pasted));
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy() && session.spec().text == pasted, 20000);
        QCOMPARE(session.input().tokens, session.tokenizer()->encodeWithSpecialTokens(pasted));
        QVERIFY(errors.isEmpty());
        session.openTextFile(file.fileName());
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy() && session.spec().text == text, 20000);

        QFile bad(dir.filePath("latin1.txt"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("caf\xe9\n");
        bad.close();
        for (const QString &path : {bad.fileName(), dir.path()}) {
            errors.clear();
            session.openTextFile(path);
            QTRY_VERIFY_WITH_TIMEOUT(errors.count() > 0, 20000);
            waitIdle(session);
            const QString why = errors.first().first().toString();
            QVERIFY2(why.startsWith(path + ": ")
                    && (why.contains("not UTF-8 text: a malformed byte at offset 3 (line 1)")
                        || why.contains("is a directory")),
                qPrintable(why));
            QCOMPARE(session.spec().text, text);
        }
    }

    // A long paste's tokenization shows its progress, named, and Cancel stops it there: nothing runs and the input
    // stays. (austen-q8_0's tokenizer is the GGUF file's own, read by the Hugging Face pipeline, which reports.)
    void cancelStopsALongTextWhileItIsTokenized()
    {
        Session session;
        const std::string text = "It is a truth universally acknowledged.";
        openOn(session, "austen-q8_0", text);
        const std::vector<int> before = session.input().tokens;
        std::string pasted;
        while (pasted.size() < (size_t(4) << 20))
            pasted += "A long paste, tokenized off the window's thread; Cancel stops it. ";
        QSignalSpy progress(&session, &Session::progressChanged), notices(&session, &Session::noticed),
            errors(&session, &Session::errorOccurred);
        session.setText(QString::fromStdString(pasted));
        QVERIFY(session.busy());
        session.cancel();
        waitIdle(session);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().first().toString()));
        QVERIFY(!progress.isEmpty());
        QCOMPARE(progress.first().at(2).toString(), QStringLiteral("Tokenizing"));
        QVERIFY(progress.last().at(0).toInt() < 1000);
        QVERIFY(!notices.isEmpty());
        QVERIFY2(notices.last().at(0).toString().startsWith("Cancelled while the text was tokenized"),
            qPrintable(notices.last().at(0).toString()));
        QCOMPARE(session.input().tokens, before);
        QCOMPARE(session.spec().text, text);
    }

    void anInputPastTheTrainingLengthRunsWhenPositionsAreComputed()
    {
        Session session;
        openOn(session, "reverse-rope", "abcd>dcba");
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
};

QTEST_GUILESS_MAIN(TestSession)
#include "tst_session.moc"
