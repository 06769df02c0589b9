// The Gradients by depth view (src/views/gradients): a curve per model, trained and at initialisation, on each
// panel; the caption's growth is the analysis's; an encoder–decoder is refused; the controls choose the fresh weights.
#include "gradients/gradients.h"
#include "gradients/gradientsview.h"
#include "layouttesting.h"
#include "testbundle.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QSpinBox>
#include <QTest>

using namespace atlas;

class TestGradientsView : public QObject
{
    Q_OBJECT

private slots:
    void drawsBothModelsTrainedAndInitialised()
    {
        ViewSpec spec;
        spec.view = "gradients";
        spec.model = "austen-bert";
        spec.baselineModel = "austen-mlm";
        spec.text = "It is a truth universally acknowledged, that a single man";
        GradientsView view;
        view.resize(1280, 720);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<GradientsAnalysis>();
        QVERIFY(a && a->runs.size() == 4);
        QCOMPARE(a->runs[0].model, std::string("austen-bert"));
        QVERIFY(!a->runs[0].initialised && a->runs[1].initialised);
        QCOMPARE(a->runs[2].model, std::string("austen-mlm"));
        QCOMPARE(a->runs[0].placement, LayerNormPlacement::Post);
        QCOMPARE(a->runs[2].placement, LayerNormPlacement::Pre);
        QCOMPARE(view.plot()->graphCount(), 8); // 4 runs on 2 panels
        const double growth = a->runs[1].feedForward.back() / a->runs[1].feedForward.front();
        QVERIFY2(view.caption().contains(formatNumber(growth, 3)), qPrintable(view.caption()));
        QVERIFY(view.title().contains("austen-bert (post-LN) against austen-mlm (pre-LN)"));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        spec.model = "seq2seq-sort";
        spec.baselineModel.clear();
        spec.text = "dsfacdd";
        spec.decoderText = ">acdddfs";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("encoder-decoder"), qPrintable(view.message()));
    }

    // The two controls over the plot edit init and fresh_blocks; the fresh curves then have that many blocks, drawn
    // Xavier-uniform, and the caption says so.
    void theControlsSetTheFreshWeights()
    {
        ViewSpec spec;
        spec.view = "gradients";
        spec.model = "austen-mlm";
        spec.text = "It is a truth universally acknowledged";
        GradientsView view;
        view.resize(1280, 720);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        auto *init = view.findChild<QComboBox *>();
        auto *blocks = view.findChild<QSpinBox *>();
        QVERIFY(init && blocks);
        QCOMPARE(blocks->value(), 0);
        QCOMPARE(blocks->text(), QStringLiteral("the model's"));
        ViewSpec edited;
        connect(&view, &View::specEdited, this, [&](const ViewSpec &s) { edited = s; });
        init->setCurrentIndex(init->findData(QStringLiteral("xavier")));
        emit init->activated(init->currentIndex());
        QCOMPARE(edited.get(views::gradients::kInit), std::string("xavier"));
        blocks->setValue(6);
        QCOMPARE(edited.get(views::gradients::kFreshBlocks), 6);
        view.setSpec(edited);
        view.setInput(testing::forSpec(edited));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<GradientsAnalysis>();
        QVERIFY(a && a->runs.size() == 2);
        QCOMPARE(int(a->runs[0].feedForward.size()), 4);
        QCOMPARE(int(a->runs[1].feedForward.size()), 6);
        QCOMPARE(a->runs[1].init, WeightInit::Xavier);
        QVERIFY2(
            view.caption().contains("with 6 blocks") && view.caption().contains("Xavier"), qPrintable(view.caption()));
        QCOMPARE(init->currentData().toString(), QStringLiteral("xavier"));
        QCOMPARE(blocks->value(), 6);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        testing::maybeSave(view, "gradients-controls");
    }
};

QTEST_MAIN(TestGradientsView)
#include "tst_gradientsview.moc"
