// A model file opened in the window as a user opens one: dropped on it. (Opening by menu and argument goes through
// the same Session::openModel; tst_ggufmodels checks what a GGUF file holds.)
#include "mainwindow.h"
#include "panels/modelinfopanel.h"
#include "session/session.h"
#include "sessiontesting.h"
#include "testbundle.h"

#include <QApplication>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QSignalSpy>
#include <QTest>

using namespace atlas;
using namespace atlas::testing;

class TestOpenModelFiles : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("TransformerAtlasTest");
        QCoreApplication::setApplicationName("tst_openmodelfiles");
    }

    // A .gguf file dropped on the window opens, with its own tokenizer, and the model panel says what the file held.
    void opensADroppedGgufFile()
    {
        Session session;
        ViewSpec spec;
        spec.text = "abcd abba";
        session.setSpec(spec);
        MainWindow window(&session);
        window.resize(1400, 900);
        window.show();
        QSignalSpy traced(&session, &Session::traceChanged);
        QMimeData data;
        data.setUrls({QUrl::fromLocalFile(ATLAS_TEST_DATA "/gguf/models/llama_tiny-q8_0.gguf")});
        QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &drop);
        QTRY_VERIFY_WITH_TIMEOUT(traced.count() > 0, 20000);
        waitIdle(session);
        QCOMPARE(QString::fromStdString(session.model()->name), QString("llama_tiny-q8_0"));
        QCOMPARE(session.input().tokens, (std::vector<int> {62, 63, 62, 1, 0})); // ab cd ab b a: the file's BPE
        auto *panel = window.findChild<ModelInfoPanel *>();
        QVERIFY(panel);
        const QString text = panel->text();
        QVERIFY2(text.contains("GGUF, llama.cpp's llama architecture") && text.contains("stored as Q8_0")
                && text.contains("adjacent pairs") && text.contains("rope_freqs"),
            qPrintable(text));
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(window.grab().save(dir + "/window-gguf.png"));
    }

    // gpt-oss's MXFP4 checkpoint (a folder without a tokenizer: read on token ids) opens with its experts in their
    // blocks, and the panel says so.
    void opensAnMxfp4Checkpoint()
    {
        Session session;
        ViewSpec spec;
        spec.tokens = {3, 17, 42, 8};
        session.setSpec(spec);
        MainWindow window(&session);
        window.resize(1400, 900);
        window.show();
        QSignalSpy traced(&session, &Session::traceChanged);
        session.openModel(ATLAS_TEST_DATA "/gpt_oss_mxfp4_tiny");
        QTRY_VERIFY_WITH_TIMEOUT(traced.count() > 0, 20000);
        waitIdle(session);
        QCOMPARE(QString::fromStdString(session.model()->name), QString("gpt_oss_mxfp4_tiny"));
        const QString text = window.findChild<ModelInfoPanel *>()->text();
        QVERIFY2(text.contains("the experts in their MXFP4 blocks, the rest as float32")
                && text.contains("stored as BF16 with MXFP4 experts"),
            qPrintable(text));
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(window.grab().save(dir + "/window-mxfp4.png"));
    }
};

QTEST_MAIN(TestOpenModelFiles)
#include "tst_openmodelfiles.moc"
