// The Generate panel: it steers as the Features view's Steer page sets it, the continuation it appends being the
// core's steered continuation (features/steering.h) and the one it shows beside it the model's own under the same
// sampling; without a dictionary it says so and changes nothing; an encoder–decoder cannot be steered; its settings
// are kept between runs.
#include "engine/generator.h"
#include "features/features.h"
#include "features/saefile.h"
#include "features/steering.h"
#include "layouttesting.h"
#include "mainwindow.h"
#include "model/builtinmodels.h"
#include "panels/generationpanel.h"
#include "sessiontesting.h"
#include "testbundle.h"

#include <QCheckBox>
#include <QDockWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

using namespace atlas;
using namespace atlas::testing;
using namespace atlas::views::features;

namespace {

QPushButton *generateButton(GenerationPanel &panel)
{
    for (auto *b : panel.findChildren<QPushButton *>())
        if (b->text() == "Generate")
            return b;
    return nullptr;
}

} // namespace

class TestGenerationPanel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("TransformerAtlasTest");
        QCoreApplication::setApplicationName("tst_generationpanel");
        QSettings().clear();
    }

    void steersAsTheSteerPageSets()
    {
        Session session;
        ViewSpec spec;
        spec.text = "She spoke";
        spec.view = "features";
        spec.set(kShow, "steer");
        spec.set(kFeature, 187);
        spec.set(kSteerStrength, 8.0);
        session.setSpec(spec);
        GenerationPanel panel(&session);
        session.openModel("austen");
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr && session.model()->name == "austen", 20000);
        waitIdle(session);
        QVERIFY(panel.steer()->isEnabled());
        QCOMPARE(panel.steer()->text(), QString::fromUtf8("feature 187 \u00d7 8"));
        const std::vector<int> prompt = session.input().tokens;

        panel.steer()->setChecked(true);
        panel.findChild<QSpinBox *>()->setValue(10); // the first spin box: Tokens
        QSignalSpy done(&session, &Session::generationFinished);
        generateButton(panel)->click();
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 60000);
        waitIdle(session);
        const GenerationReport report = done.at(0).at(0).value<GenerationReport>();

        const auto model = loadModel("austen");
        const SaeDirectory d = loadDictionary(dictionaryPath(*model, "blocks.2.hook_resid_post"));
        const Steering steering {d.site, featureDirection(d.sae, 187), 8.0, {}, -1, 0};
        const std::vector<int> steered = steeredContinuation(model, prompt, steering, 10);
        std::vector<int> appended(
            session.input().tokens.begin() + int64_t(prompt.size()), session.input().tokens.end());
        QVERIFY(appended == steered); // the input now goes on as the steered model went on
        QCOMPARE(report.steering, QString::fromUtf8("feature 187 \u00d7 8 at blocks.2.hook_resid_post"));
        const std::vector<int> plain = Generator(model, prompt).continuation(10);
        QVERIFY(plain != steered);
        QCOMPARE(report.unsteered, QString::fromStdString(session.tokenizer()->decode(plain)));
        QVERIFY2(panel.continuationText().contains("Steered by feature 187"), qPrintable(panel.continuationText()));
        QVERIFY2(panel.continuationText().contains("Without it: "
                     + QString(report.prompt + report.unsteered).replace(QChar('\n'), QString::fromUtf8("\u23ce"))),
            qPrintable(panel.continuationText()));

        panel.resize(360, 640); // a dock's width
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        maybeSave(panel, "generate-steered");

        // The settings are kept: a new panel reads them back.
        GenerationPanel again(&session);
        QVERIFY(again.steer()->isChecked());
        QCOMPARE(again.findChild<QSpinBox *>()->value(), 10);
    }

    // In the window: the Generate dock, raised, shows its Steer box and the steered text without cutting any of it.
    void inTheWindowNothingIsCut()
    {
        Session session;
        MainWindow window(&session);
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        openOn(session, "austen", "She spoke");
        auto *dock = window.findChild<QDockWidget *>("Generate");
        QVERIFY(dock);
        dock->raise();
        auto *panel = window.findChild<GenerationPanel *>();
        QVERIFY(panel && panel->steer()->isVisible());
        panel->steer()->setChecked(true);
        QSignalSpy done(&session, &Session::generationFinished);
        generateButton(*panel)->click();
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 60000);
        waitIdle(session);
        // The input's label grows with the generated tokens and the window lays itself out again after it: under the
        // sanitizers, with another test beside it, 50 ms was once not enough (a label cut by 7 pixels, then whole).
        QStringList problems;
        QTRY_VERIFY2_WITH_TIMEOUT((problems = layoutProblems(window)).isEmpty(), qPrintable(problems.join("; ")), 5000);
        maybeSave(window, "generate-steered-window");
    }

    void withoutADictionaryItSaysSoAndChangesNothing()
    {
        Session session;
        GenerationPanel panel(&session);
        openTiny(session, "attention");
        const std::vector<int> before = session.input().tokens;
        panel.steer()->setChecked(true);
        QSignalSpy failed(&session, &Session::errorOccurred);
        generateButton(panel)->click();
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, 20000);
        waitIdle(session);
        QVERIFY2(failed.at(0).at(0).toString().contains("Steering needs a dictionary"),
            qPrintable(failed.at(0).at(0).toString()));
        QVERIFY(session.input().tokens == before);
    }

    void anEncoderDecoderIsNotSteered()
    {
        Session session;
        GenerationPanel panel(&session);
        session.openModel("seq2seq-sort");
        QTRY_VERIFY_WITH_TIMEOUT(session.model() != nullptr && session.model()->name == "seq2seq-sort", 20000);
        waitIdle(session);
        QVERIFY(!panel.steer()->isEnabled());
    }
};

QTEST_MAIN(TestGenerationPanel)
#include "tst_generationpanel.moc"
