// The Features view (src/views/features): a dictionary that splits each dimension of austen's stream into its
// positive and negative parts, so that every feature's activation is known from the trace; what the view draws and
// says of it, the token and the feature a click chooses, and what it says without a dictionary or with one that does
// not fit the model, and that a model shipping a dictionary shows it unasked.
#include "engine/engine.h"
#include "features/features.h"
#include "features/featuresview.h"
#include "features/saefile.h"
#include "layouttesting.h"
#include "model/builtinmodels.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>

#include <algorithm>

using namespace atlas;
using namespace atlas::views::features;

namespace {

// Feature i < d reads max(x_i, 0), feature d + i reads max(−x_i, 0); the decoder puts them back: x exactly.
SaeDirectory splitDictionary(int64_t d, const std::string &hook)
{
    SaeDirectory out;
    SparseAutoencoder &s = out.sae;
    s.applyDecoderBiasToInput = false;
    s.wEnc = Tensor({d, 2 * d});
    s.wDec = Tensor({2 * d, d});
    for (int64_t i = 0; i < d; ++i) {
        s.wEnc.data()[i * 2 * d + i] = 1;
        s.wEnc.data()[i * 2 * d + d + i] = -1;
        s.wDec.data()[i * d + i] = 1;
        s.wDec.data()[(d + i) * d + i] = -1;
    }
    s.bEnc = Tensor({2 * d});
    s.bDec = Tensor({d});
    out.site = saeSiteFromHook(hook);
    out.modelName = "austen";
    out.training = {{"held_out", {{"unexplained_variance", 0.0}, {"loss", {{"recovered", 1.0}}}}}};
    return out;
}

} // namespace

class TestFeaturesView : public QObject
{
    Q_OBJECT

private slots:
    void featuresAreTheDictionarysEncodingOfTheTrace()
    {
        QTemporaryDir tmp;
        const std::string dir = (tmp.path() + "/split").toStdString();
        saveSaeDirectory(dir, splitDictionary(128, "blocks.2.hook_resid_mid"));
        ViewSpec spec;
        spec.view = "features";
        spec.model = "austen";
        spec.text = "It is a truth universally acknowledged";
        spec.position = 3;
        spec.set(kSae, dir);
        FeaturesView view;
        view.resize(1280, 720);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<FeaturesAnalysis>();
        QVERIFY(a);
        QCOMPARE(a->width, 256);
        QCOMPARE(a->position, 3);
        QVERIFY(!a->featureChosen);

        Input input;
        input.tokens = view.input().tokenIds;
        Engine run(loadModel("austen"), input);
        run.runToEnd();
        const Tensor &mid = run.trace().tensor("layer.2.mid");
        const auto expected = [&](int t, int feature) {
            const float x = mid.data()[t * 128 + feature % 128];
            return std::max(feature < 128 ? x : -x, 0.0f);
        };
        // every dimension is one of the pair: 128 features active at each token
        QVERIFY(std::all_of(a->active.begin(), a->active.end(), [](int n) { return n == 128; }));
        QCOMPARE(int(a->strongest.size()), 12);
        for (const auto &[feature, value] : a->strongest)
            QCOMPARE(value, expected(3, feature));
        QVERIFY(std::is_sorted(a->strongest.begin(), a->strongest.end(),
            [](const auto &x, const auto &y) { return x.second > y.second; }));
        QCOMPARE(a->feature, a->strongest.front().first);
        for (int t = 0; t < int(a->activation.size()); ++t)
            QCOMPARE(a->activation[size_t(t)], expected(t, a->feature));
        QVERIFY2(view.caption().contains("trained on austen (0.0 % of the variance unexplained, 100.0 % of the loss "
                                         "recovered on held-out text)"),
            qPrintable(view.caption()));
        QVERIFY2(view.caption().contains(QString("Feature #%1 (the strongest at token 3)").arg(a->feature)),
            qPrintable(view.caption()));
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
        testing::maybeSave(view, "features");
        const auto at = [](QCPAxisRect *rect, double x) {
            return QPoint(int(rect->axis(QCPAxis::atBottom)->coordToPixel(x)), rect->center().y());
        };

        QMouseEvent hover(QEvent::MouseMove, QPointF(at(view.plot()->axisRect(0), 0)),
            QPointF(view.plot()->mapToGlobal(at(view.plot()->axisRect(0), 0))), Qt::NoButton, Qt::NoButton,
            Qt::NoModifier);
        QApplication::sendEvent(view.plot(), &hover);
        QVERIFY2(QToolTip::text().startsWith(QString("Token 0 'I': feature #%1 = %2; 128 features active")
                                                 .arg(a->feature)
                                                 .arg(formatNumber(a->activation[0], 4))),
            qPrintable(QToolTip::text()));

        QSignalSpy edited(&view, &View::specEdited);
        QCPAxisRect *tokens = view.plot()->axisRect(0), *features = view.plot()->axisRect(1);
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, at(tokens, 0));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().position, 0);
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, at(features, 2));
        QCOMPARE(edited.count(), 2);
        QCOMPARE(edited.at(1).at(0).value<ViewSpec>().get(kFeature), a->strongest[2].first);

        spec.set(kFeature, 130); // x₂'s negative part
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        const auto *chosen = view.input().analysisAs<FeaturesAnalysis>();
        QVERIFY(chosen && chosen->featureChosen && chosen->feature == 130);
        for (int t = 0; t < int(chosen->activation.size()); ++t)
            QCOMPARE(chosen->activation[size_t(t)], expected(t, 130));
        QVERIFY2(view.caption().contains("Feature #130 (chosen)"), qPrintable(view.caption()));
    }

    void withoutAFittingDictionaryItSaysWhy()
    {
        ViewSpec spec;
        spec.view = "features";
        spec.model = "reverse";
        spec.text = "abc>";
        FeaturesView view;
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("Open a dictionary") && view.message().contains("train-sae --model reverse"),
            qPrintable(view.message()));
        spec.model = "austen"; // it ships one: drawn without asking
        spec.text = "It is";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QVERIFY2(
            view.caption().contains("topk, 512 features over blocks.2.hook_resid_post"), qPrintable(view.caption()));
        spec.set(kSae, testing::dataPath("sae/gemma_scope/params.npz").toStdString());
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("does not say where it reads"), qPrintable(view.message()));
        spec.set(kSaeSite, "blocks.1.hook_resid_post");
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("W_enc is [6, 10], but blocks.1.hook_resid_post of austen has 128"),
            qPrintable(view.message()));
    }
};

QTEST_MAIN(TestFeaturesView)
#include "tst_featuresview.moc"
