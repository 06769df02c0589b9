// The input panel's box as the window uses it: a refused input leaves it on what ran, a long document from a file runs
// on demand, a run that ends after a tab switch leaves it on the new text, a model without a tokenizer shows ids, '#'
// starts ids only before a list of them, and bad input keeps the app running.
#include "mainwindow.h"
#include "nexttoken/nexttokenview.h"
#include "panels/inputpanel.h"
#include "session/session.h"
#include "testbundle.h"
#include "views/view.h"
#include "windowtesting.h"

#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace atlas;
using namespace atlas::testing;

class TestInputPanel : public QObject
{
    Q_OBJECT

private slots:
    // An input the session refuses leaves the box on the input the views show, not on the refused text (issue 28).
    void aRefusedInputLeavesTheBoxOnWhatRan()
    {
        Session session;
        MainWindow window(&session);
        showOnTinyBytes(session, window);
        QVERIFY(session.program() != nullptr);
        QLineEdit *box = window.findChild<InputPanel *>()->textBox();
        const QString before = box->text();
        const std::vector<int> ran = session.input().tokens;
        QSignalSpy errors(&session, &Session::errorOccurred);
        box->setFocus();
        box->setText("#1,2,999");
        QTest::keyClick(box, Qt::Key_Return);
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, 20000);
        waitUntilSettled(session);
        QCOMPARE(session.input().tokens, ran);
        QCOMPARE(box->text(), before);
    }

    // Issue 62: a document of 3000 bytes opened from a file through a small budget: it runs on demand, the box holds
    // the document as it is (newlines and all, so that Enter runs the same text again), the Next token view reads its
    // last position.
    void aLongTextFileRunsOnDemand()
    {
        Session session;
        MainWindow window(&session);
        showOnTinyBytes(session, window);
        session.setMemoryBudget(size_t(64) << 20);
        QTemporaryDir dir;
        QByteArray text;
        for (int line = 0; text.size() < 3000; ++line)
            text += "Paragraph " + QByteArray::number(line)
                + ": it is a truth universally acknowledged, that a "
                  "single man in possession of a good fortune...\n";
        QFile file(dir.filePath("document.txt"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text);
        file.close();
        QSignalSpy notices(&session, &Session::noticed), errors(&session, &Session::errorOccurred);
        session.openTextFile(file.fileName());
        QTRY_VERIFY_WITH_TIMEOUT(errors.count() > 0 || session.input().tokens.size() == size_t(text.size()), 20000);
        waitUntilSettled(session);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().first().toString()));
        QVERIFY(session.trace()->contains("layer.1.attn.lse") && !session.trace()->contains("next_probs"));
        QVERIFY(notices.count() >= 1);
        QCOMPARE(window.findChild<InputPanel *>()->textBox()->text(), QString::fromUtf8(text));
        window.showViewKind("next-token");
        QTRY_VERIFY_WITH_TIMEOUT(window.findChild<NextTokenView *>() != nullptr, 5000);
        const NextTokenView *view = window.findChild<NextTokenView *>();
        QTRY_VERIFY_WITH_TIMEOUT(!view->bars().empty(), 5000);
        QCOMPARE(view->position(), text.size() - 1);
        saveScreenshot(window, "long-text-next-token");
        window.showViewKind("attention");
        QTest::qWait(200);
        saveScreenshot(window, "long-text-attention");
        // Smaller still: each block keeps its checkpoints, and Sparse FFN has its layer's activations recomputed.
        session.setMemoryBudget(
            Program::build(session.model()->config, session.input(), true, 1, AttentionTrace::OnDemand).tracedBytes()
            - 1);
        session.openTextFile(file.fileName());
        QTRY_VERIFY_WITH_TIMEOUT(errors.count() > 0 || session.program()->checkpointed(), 20000);
        window.showViewKind("sparse-ffn");
        const std::string act = names::layerTensor(session.spec().layer, "mlp.act");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace()->contains(act) && !session.busy(), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(session.analysis().result != nullptr, 20000);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().first().toString()));
        QVERIFY(notices.last().at(0).toString().contains("only each block's checkpoints kept"));
        QTest::qWait(200);
        saveScreenshot(window, "long-text-checkpoints-sparse-ffn");
        // Smaller again: each block keeps only its input, and the Attention view's layer has its queries and keys
        // recomputed.
        session.setMemoryBudget(Program::build(session.model()->config, session.input(), true, 1,
                                    AttentionTrace::OnDemand, BlockKeeping::Checkpoints)
                                    .tracedBytes()
            - 1);
        session.openTextFile(file.fileName());
        QTRY_VERIFY_WITH_TIMEOUT(notices.last().at(0).toString().contains("only each block's input kept"), 20000);
        window.showViewKind("attention");
        const std::string q = readoutInputs(session.model()->config, session.spec().layer).front();
        QTRY_VERIFY_WITH_TIMEOUT(session.trace()->contains(q) && !session.busy(), 20000);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().first().toString()));
        QTest::qWait(300);
        saveScreenshot(window, "long-text-inputs-attention");
    }

    // Issue 58: a long text pasted, Enter, and a tab switched while it runs: the box, the chips and the views end on
    // the new text (the box showed the old sentence while the chips showed the new).
    void switchingViewsDuringARunLeavesTheBoxOnTheNewInput()
    {
        Session session;
        MainWindow window(&session);
        showOnTinyBytes(session, window);
        QLineEdit *box = window.findChild<InputPanel *>()->textBox();
        box->setFocus();
        const QString pasted = QString("A pasted paragraph. ").repeated(3);
        box->setText(pasted);
        QTest::keyClick(box, Qt::Key_Return);
        QVERIFY(session.busy());
        window.showViewKind("heads");
        waitUntilSettled(session);
        QCOMPARE(session.spec().text, pasted.toStdString());
        QCOMPARE(box->text(), pasted);
        QCOMPARE(session.input().tokens.size(), size_t(pasted.size()));
        QCOMPARE(session.spec().view, std::string("heads"));
    }

    // Issue 58: a directory without a tokenizer kept the last model's sentence in the box while it ran token #0. The
    // box shows the ids the model runs and the summary says why; Patching takes ids and noise positions.
    void aModelWithoutATokenizerShowsIdsInTheBox()
    {
        Session session;
        MainWindow window(&session);
        showOnTinyBytes(session, window);
        QLineEdit *box = window.findChild<InputPanel *>()->textBox();
        session.openModel(ATLAS_TEST_DATA "/llama_tiny");
        QTRY_VERIFY_WITH_TIMEOUT(session.model() && session.model()->directory.ends_with("llama_tiny"), 20000);
        waitUntilSettled(session);
        QCOMPARE(box->text(), QString("#0"));
        bool said = false;
        for (QLabel *label : window.findChild<InputPanel *>()->findChildren<QLabel *>())
            said = said || label->text().contains("ids only");
        QVERIFY(said);
        box->setFocus();
        box->setText("#3,1,4,1,5");
        QTest::keyClick(box, Qt::Key_Return);
        waitUntilSettled(session);
        window.showViewKind("patching");
        QTest::qWait(50);
        saveScreenshot(window, "no-tokenizer-patching");
        QCOMPARE(session.input().tokens, (std::vector<int> {3, 1, 4, 1, 5}));
    }

    // A typed text that starts with '#' but is no list of ids is text; "##" writes a leading '#'.
    void theBoxReadsHashesAsTextUnlessTheyStartIds()
    {
        Session session;
        MainWindow window(&session);
        showOnTinyBytes(session, window);
        QLineEdit *box = window.findChild<InputPanel *>()->textBox();
        QSignalSpy errors(&session, &Session::errorOccurred);
        box->setFocus();
        box->setText("#tag cats");
        QTest::keyClick(box, Qt::Key_Return);
        waitUntilSettled(session);
        QCOMPARE(session.spec().text, std::string("#tag cats"));
        box->setFocus();
        box->setText("##12");
        QTest::keyClick(box, Qt::Key_Return);
        waitUntilSettled(session);
        QCOMPARE(session.spec().text, std::string("#12"));
        QCOMPARE(session.input().tokens.size(), size_t(3));
        QCOMPARE(box->text(), QString("##12"));
        QCOMPARE(errors.count(), 0);
    }

    void badInputKeepsTheAppRunning()
    {
        Session session;
        session.openModel("tiny-bytes");
        QTRY_VERIFY_WITH_TIMEOUT(session.program() != nullptr, 20000);
        waitUntilSettled(session);
        const auto tracedBefore = session.trace();
        QSignalSpy errors(&session, &Session::errorOccurred);
        session.setTokens({1, 2, 999});
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, 20000);
        QVERIFY(errors.first().first().toString().contains("outside the vocabulary"));
        QCOMPARE(session.trace(), tracedBefore); // the previous trace is kept
        session.openModel("/nonexistent/model");
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 2, 20000);
        QVERIFY(errors.last().first().toString().contains("/nonexistent/model"));
        QVERIFY(session.hasModel());
    }
};

QTEST_MAIN(TestInputPanel)
#include "tst_inputpanel.moc"
