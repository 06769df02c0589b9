// The Features view (src/views/features): a dictionary that splits each dimension of austen's stream into its
// positive and negative parts, so that every feature's activation is known from the trace; what the view draws and
// says of it, the token and the feature a click chooses, and what it says without a dictionary or with one that does
// not fit the model, and that a model shipping a dictionary shows it unasked; its dashboard of one feature over the
// corpus.
#include "engine/engine.h"
#include "engine/generator.h"
#include "features/featuredashboard.h"
#include "features/features.h"
#include "features/featuresview.h"
#include "features/saefile.h"
#include "features/steering.h"
#include "features/traindictionarydialog.h"
#include "io/atomicfile.h"
#include "layouttesting.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "saetesting.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "train/corpus.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>

#include <algorithm>

using namespace atlas;
using namespace atlas::views::features;

namespace {

// The split dictionary (saetesting.h) at `hook`, as train-sae would have saved it for austen.
SaeDirectory splitDictionary(int64_t d, const std::string &hook)
{
    SaeDirectory out;
    out.sae = testing::splitDictionary(d);
    out.site = saeSiteFromHook(hook);
    out.modelName = "austen";
    out.training = {{"held_out", {{"unexplained_variance", 0.0}, {"loss", {{"recovered", 1.0}}}}}};
    return out;
}

// The view of austen's features on `text`.
ViewSpec austenFeatures(const std::string &text)
{
    ViewSpec spec;
    spec.view = "features";
    spec.model = "austen";
    spec.text = text;
    return spec;
}

// The view at a projector's size, drawing `spec`'s run, on screen.
bool shown(FeaturesView &view, const ViewSpec &spec)
{
    return testing::shown(view, spec, testing::forSpec(spec));
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
        QVERIFY(shown(view, spec));
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

    // The dashboard: feature 5 of the split dictionary over the corpus's first 300 tokens, read from the pass the core
    // keeps (tst_featuredashboard holds the pass to whole runs); what the four panels draw, the caption's counts, the
    // tooltip over an example's token, a click on a nearest feature, and the pass kept for the next page.
    void theDashboardIsTheFeaturesPageOverTheCorpus()
    {
        QTemporaryDir tmp;
        qputenv("ATLAS_CACHE_DIR", (tmp.path() + "/cache").toUtf8());
        const std::string dir = (tmp.path() + "/split").toStdString();
        const SaeDirectory split = splitDictionary(128, "blocks.2.hook_resid_mid");
        saveSaeDirectory(dir, split);
        ViewSpec spec;
        spec.view = "features";
        spec.model = "austen";
        spec.text = "It is a truth";
        spec.set(kSae, dir);
        spec.set(kFeature, 5);
        spec.set(kShow, "dashboard");
        spec.set(kCorpusTokens, 300);
        FeaturesView view;
        QVERIFY(shown(view, spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<FeaturesAnalysis>();
        QVERIFY(a && a->showsDashboard);
        const FeatureDashboard &d = a->dashboard;
        QCOMPARE(d.corpusTokens, int64_t(300));
        QCOMPARE(d.origin, std::string("run now"));

        const auto model = loadModel("austen");
        std::vector<int> tokens = tokenizerForModel(*model)->encode(corpusTraining().substr(0, 1200));
        FeatureCorpusOptions o;
        o.maxTokens = 300;
        const FeatureCorpusStats s = featureCorpusPass(model, split.sae, split.site, tokens, o);
        QCOMPARE(d.active, s.activeCount[5]);
        QCOMPARE(int(d.examples.size()), s.top);
        for (int i = 0; i < s.top; ++i) {
            const FeatureDashboard::Example &e = d.examples[size_t(i)];
            QCOMPARE(e.activation, s.topActivation[size_t(5 * s.top + i)]);
            QCOMPARE(e.at, s.topToken[size_t(5 * s.top + i)]);
            QCOMPARE(e.tokens[size_t(e.centre)], tokens[size_t(e.at)]);
            QCOMPARE(e.values[size_t(e.centre)], e.activation);
        }
        QCOMPARE(d.nearest.front().first, 0); // ±e_i: every other feature at 0, the lowest index first
        QCOMPARE(d.logits.raised.size(), size_t(8));
        QVERIFY2(view.caption().contains(QString("active on %1 of them").arg(d.active)), qPrintable(view.caption()));
        QVERIFY2(view.caption().contains("(run now)"), qPrintable(view.caption()));
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
        testing::maybeSave(view, "features-dashboard");

        // the first example's own token, under the pointer
        QCPAbstractItem *centre = nullptr;
        for (int i = 0; i < view.plot()->itemCount(); ++i)
            if (auto *text = qobject_cast<QCPItemText *>(view.plot()->item(i));
                text && text->pen().style() != Qt::NoPen) {
                centre = text;
                break;
            }
        QVERIFY(centre);
        const QPoint over = static_cast<QCPItemText *>(centre)->position->pixelPosition().toPoint();
        QMouseEvent hover(QEvent::MouseMove, QPointF(over), QPointF(view.plot()->mapToGlobal(over)), Qt::NoButton,
            Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(view.plot(), &hover);
        QVERIFY2(QToolTip::text().startsWith(QString("Corpus token %1 '").arg(d.examples.front().at))
                && QToolTip::text().contains(
                    QString("feature #5 = %1 (example 1)").arg(formatNumber(d.examples.front().activation, 4))),
            qPrintable(QToolTip::text()));

        QSignalSpy edited(&view, &View::specEdited);
        QCPAxisRect *nearest = view.plot()->axisRect(3);
        const QPoint second(nearest->center().x(), int(nearest->axis(QCPAxis::atLeft)->coordToPixel(1)));
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, second);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().get(kFeature), d.nearest[1].first);

        spec.set(kFeature, 130); // the same pass, another page
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        const auto *other = view.input().analysisAs<FeaturesAnalysis>();
        QVERIFY(other && other->showsDashboard);
        QCOMPARE(other->dashboard.origin, std::string("kept from the last pass"));
        QCOMPARE(other->dashboard.active, s.activeCount[130]);

        // The quality page of a dictionary that reconstructs exactly: nothing unexplained, all of the loss recovered,
        // and its dead features the ones the pass saw never fire (a dimension that is never negative, or positive).
        spec.set(kShow, "quality");
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        const auto *q = view.input().analysisAs<FeaturesAnalysis>();
        QVERIFY(q && q->showsQuality);
        const DictionaryQuality &dq = q->dictionaryQuality;
        QCOMPARE(dq.dead, int(std::count(s.activeCount.begin(), s.activeCount.end(), 0)));
        QCOMPARE(dq.corpusTokens, int64_t(300));
        QVERIFY(dq.unexplained < 1e-10);
        QCOMPARE(dq.heldOutL0, 128.0); // one of each pair
        // 1 up to the products' rounding, in whatever order they add up (as tst_saetraining's bound)
        QVERIFY2(dq.hasLosses && std::abs(dq.recovered() - 1) < 1e-5 && dq.meanAblated > dq.clean,
            qPrintable(QString("recovered %1").arg(dq.recovered(), 0, 'g', 12)));
        QVERIFY2(view.caption().contains(QString("%1 of the 256 features never fire").arg(dq.dead))
                && view.caption().contains("100 % of the loss recovered"),
            qPrintable(view.caption()));
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
        view.plot()->replot(); // the queued replot, before the picture
        testing::maybeSave(view, "features-quality");

        // A text file as the corpus: the pass is over its tokens, the captions name it, the box shows it; a file that
        // cannot be read is named.
        const QString novel = tmp.path() + "/chapter.txt";
        writeFileAtomically(novel.toStdString(), corpusHeldOut().substr(0, 900));
        spec.set(kShow, "dashboard");
        spec.set(kCorpusFile, novel.toStdString());
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        const auto *fromFile = view.input().analysisAs<FeaturesAnalysis>();
        QVERIFY(fromFile && fromFile->showsDashboard);
        QCOMPARE(fromFile->dashboard.corpusName, std::string("chapter.txt"));
        QCOMPARE(fromFile->dashboard.origin, std::string("run now"));
        tokens = tokenizerForModel(*model)->encode(corpusHeldOut().substr(0, 900));
        const FeatureCorpusStats fileStats = featureCorpusPass(model, split.sae, split.site, tokens, o);
        QCOMPARE(fromFile->dashboard.active, fileStats.activeCount[130]);
        QVERIFY2(view.caption().contains("tokens of chapter.txt"), qPrintable(view.caption()));
        QCOMPARE(view.corpusSourceBox()->currentText(), QString("chapter.txt"));
        QVERIFY(view.corpusSourceBox()->isVisibleTo(&view));
        spec.set(kCorpusFile, (tmp.path() + "/missing.txt").toStdString());
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("missing.txt"), qPrintable(view.message()));
        qunsetenv("ATLAS_CACHE_DIR");
    }

    // Train… a transcoder: the feed-forward's input and output offered as one choice of site, for which TopK is not
    // offered; trained, it is saved as SAELens's jumprelu_transcoder, writing the feed-forward's output.
    void aTranscoderTrainedInTheAppWritesTheFeedForwardsOutput()
    {
        QStandardPaths::setTestModeEnabled(true);
        QTemporaryDir tmp;
        FeaturesView view;
        QVERIFY(shown(view, austenFeatures("It is a truth")));
        view.trainDictionaryButton()->click();
        auto *dialog = view.findChild<TrainDictionaryDialog *>();
        QVERIFY(dialog);
        const QString dir = tmp.filePath("transcoder");
        dialog->setOptions(QString::fromUtf8("blocks.1.ln2.hook_normalized \u2192 blocks.1.hook_mlp_out (transcoder)"),
            32, 4, 30, 600, dir);
        dialog->trainButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->running(), 120000);
        QVERIFY2(dialog->status().contains("Saved to " + dir), qPrintable(dialog->status()));
        const SaeDirectory saved = loadDictionary(dir.toStdString());
        QCOMPARE(saved.site.hookName(), std::string("blocks.1.ln2.hook_normalized"));
        QVERIFY(saved.writes && saved.writes->hookName() == "blocks.1.hook_mlp_out");
        QVERIFY(saved.sae.architecture == SaeArchitecture::JumpRelu);
        testing::maybeSave(*dialog, "features-train-transcoder");
        dialog->reject();
    }

    // Train…: a small dictionary trained off the GUI thread, its loss drawn step by step, saved, and opened here; then
    // a run cancelled before its first checkpoint, which saves nothing, and one cancelled after it, which goes on from
    // it when trained again.
    void aDictionaryTrainedInTheAppOpensInTheView()
    {
        QStandardPaths::setTestModeEnabled(true); // the dialog keeps its options: not in the user's settings
        QTemporaryDir tmp;
        FeaturesView view;
        QVERIFY(shown(view, austenFeatures("It is a truth")));
        QSignalSpy edited(&view, &View::specEdited);
        view.trainDictionaryButton()->click();
        auto *dialog = view.findChild<TrainDictionaryDialog *>();
        QVERIFY(dialog && dialog->isVisible());
        const QString dir = tmp.filePath("trained");
        dialog->setOptions("blocks.1.hook_resid_post", 32, 4, 30, 600, dir);
        dialog->trainButton()->click();
        QVERIFY(dialog->running());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->running(), 120000);
        QVERIFY2(dialog->status().contains("Saved to " + dir), qPrintable(dialog->status()));
        QVERIFY2(dialog->status().contains("of the loss"), qPrintable(dialog->status()));
        QCOMPARE(dialog->stepsDrawn(), 30);
        QVERIFY(QFile::exists(dir + "/cfg.json") && QFile::exists(dir + "/sae_weights.safetensors"));
        const SaeDirectory saved = loadDictionary(dir.toStdString());
        QCOMPARE(saved.sae.width(), int64_t(32));
        QCOMPARE(saved.site.hookName(), std::string("blocks.1.hook_resid_post"));
        testing::maybeSave(*dialog, "features-train-dictionary");
        QVERIFY(dialog->openButton()->isEnabled());
        dialog->openButton()->click();
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().get(kSae), dir.toStdString());
        QTRY_VERIFY(!view.findChild<TrainDictionaryDialog *>()); // closed, and deleted

        view.trainDictionaryButton()->click();
        auto *again = view.findChild<TrainDictionaryDialog *>();
        QVERIFY(again);
        const QString other = tmp.filePath("cancelled");
        again->setOptions("blocks.1.hook_resid_post", 32, 4, 1'000'000, 600, other);
        again->trainButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(again->stepsDrawn() > 0, 60000);
        again->trainButton()->click(); // Cancel
        QTRY_VERIFY_WITH_TIMEOUT(!again->running(), 60000);
        QVERIFY2(again->status().contains("Cancelled"), qPrintable(again->status()));
        QVERIFY(!QFile::exists(other + "/cfg.json"));
        QVERIFY(!again->openButton()->isEnabled());

        // A run cancelled after a tenth of its steps keeps its state; trained again, it goes on from there.
        again->goOnBox()->setChecked(true); // whatever an earlier run of the test left in the settings
        const QString kept = tmp.filePath("kept");
        again->setOptions("blocks.1.hook_resid_post", 32, 4, 20'000, 600, kept);
        again->trainButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(kept + "/training_state.safetensors"), 120000);
        again->trainButton()->click(); // Cancel
        QTRY_VERIFY_WITH_TIMEOUT(!again->running(), 60000);
        QVERIFY2(again->status().contains("Cancelled. The dictionary of step")
                && again->status().contains("Train with the same options goes on from there"),
            qPrintable(again->status()));
        const int savedAt = loadSaeDirectory(kept.toStdString()).training["step"].get<int>();
        QVERIFY(savedAt >= 2000 && savedAt % 2000 == 0);
        again->trainButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(again->status().contains("from the state saved at step"), 60000);
        QVERIFY2(again->status().contains(QString("from the state saved at step %1:").arg(savedAt)),
            qPrintable(again->status()));
        again->trainButton()->click(); // Cancel again
        QTRY_VERIFY_WITH_TIMEOUT(!again->running(), 60000);
        // Go on cleared: the same options start afresh.
        again->goOnBox()->setChecked(false);
        again->trainButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(again->status().startsWith("Training"), 60000);
        QVERIFY2(!again->status().contains("from the state saved"), qPrintable(again->status()));
        again->trainButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(!again->running(), 60000);
        again->goOnBox()->setChecked(true);
        again->reject();
    }

    // Steer: the continuations are the core's (features/steering.h) and the unsteered one the generator's greedy
    // continuation, or both sampled from the page's seed; the moved probabilities are the two runs' softmax at the
    // input's end; clamping says so.
    void steeringShowsBothContinuations()
    {
        ViewSpec spec;
        spec.view = "features";
        spec.model = "austen";
        spec.text = "She spoke";
        spec.set(kShow, "steer");
        spec.set(kFeature, 187);
        spec.set(kSteerStrength, 8.0);
        spec.set(kSteerTokens, 12);
        FeaturesView view;
        QVERIFY(shown(view, spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const FeaturesAnalysis *a = view.input().analysisAs<FeaturesAnalysis>();
        QVERIFY(a && a->showsSteering);
        const auto model = loadModel("austen");
        const SaeDirectory d = loadDictionary(dictionaryPath(*model, "blocks.2.hook_resid_post"));
        const std::vector<int> prompt = view.input().tokenIds;
        Steering steering {d.site, featureDirection(d.sae, 187), 8.0, {}, -1, 0};
        QVERIFY(a->steering.steered == steeredContinuation(model, prompt, steering, 12));
        Generator generator(model, prompt);
        std::vector<int> plain;
        for (int i = 0; i < 12; ++i)
            plain.push_back(generator.generate());
        QVERIFY(a->steering.plain == plain);
        QVERIFY(a->steering.plain != a->steering.steered);
        Input input;
        input.tokens = prompt;
        const Tensor logits = steeredLogits(model, input, steering);
        const int64_t V = logits.dim(1), last = logits.dim(0) - 1;
        double sum = 0;
        for (int64_t v = 0; v < V; ++v)
            sum += std::exp(double(logits.data()[last * V + v]));
        const NextTokenShift &first = a->steering.moved.front();
        QVERIFY(std::abs(first.with - std::exp(double(logits.data()[last * V + first.id])) / sum) < 1e-5);
        Engine plainRun(model, input); // without: the model's own run
        plainRun.runToEnd();
        const Tensor &own = plainRun.trace().tensor("logits");
        double ownSum = 0;
        for (int64_t v = 0; v < V; ++v)
            ownSum += std::exp(double(own.data()[last * V + v]));
        QVERIFY(std::abs(first.without - std::exp(double(own.data()[last * V + first.id])) / ownSum) < 1e-5);
        QVERIFY2(view.caption().contains("x + 8 W_dec[f]"), qPrintable(view.caption()));
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
        view.plot()->replot();
        testing::maybeSave(view, "features-steer");

        // Sampled: both continuations draw from one seed, the unsteered one as the generator samples it.
        spec.set(kSteerTemperature, 0.8);
        spec.set(kSteerSeed, 5);
        QVERIFY(shown(view, spec));
        a = view.input().analysisAs<FeaturesAnalysis>();
        QVERIFY(a && a->showsSteering);
        const SamplingOptions sampling {0.8f, 0, 5};
        QVERIFY(a->steering.steered == steeredContinuation(model, prompt, steering, 12, sampling));
        Generator sampler(model, prompt, sampling);
        std::vector<int> sampledPlain;
        for (int i = 0; i < 12; ++i)
            sampledPlain.push_back(sampler.generate());
        QVERIFY(a->steering.plain == sampledPlain);
        QVERIFY(a->steering.plain != plain); // not the greedy one
        QVERIFY2(view.caption().contains("both sample from the same seed"), qPrintable(view.caption()));
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
        view.plot()->replot();
        testing::maybeSave(view, "features-steer-sampled");

        spec.set(kSteerTemperature, 0.0);
        spec.set(kSteerClamp, true);
        spec.set(kSteerStrength, 0.0);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.caption().contains("the feature set to 0"), qPrintable(view.caption()));
    }

    // Steering by a difference of means: the direction is the core's, the continuation steered by it, the aligned
    // features the largest decoder cosines; the controls drop the feature and the clamp; one side alone or a clamp is
    // refused by name.
    void steeringByADifferenceOfMeans()
    {
        ViewSpec spec;
        spec.view = "features";
        spec.model = "austen";
        spec.text = "She spoke";
        spec.set(kShow, "steer");
        spec.set(kSteerMeansA, "She was very happy| They laughed and smiled");
        spec.set(kSteerMeansB, "She was very unhappy |They wept");
        spec.set(kSteerStrength, 2.0);
        spec.set(kSteerTokens, 8);
        FeaturesView view;
        QVERIFY(shown(view, spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<FeaturesAnalysis>();
        QVERIFY(a && a->showsSteering && a->steering.byMeans());
        QCOMPARE(a->steering.meansB, (std::vector<std::string> {"She was very unhappy", "They wept"}));
        const auto model = loadModel("austen");
        const SaeDirectory d = loadDictionary(dictionaryPath(*model, "blocks.2.hook_resid_post"));
        const Tensor v = differenceOfMeans(
            model, d.site, {"She was very happy", "They laughed and smiled"}, {"She was very unhappy", "They wept"});
        const Steering steering {d.site, v, 2.0, {}, -1, 0};
        QVERIFY(a->steering.steered == steeredContinuation(model, view.input().tokenIds, steering, 8));
        const ConstRowVectorMap direction(v.data(), v.numel());
        QVERIFY(std::abs(a->steering.directionNorm - double(direction.norm())) < 1e-4 * double(direction.norm()));
        QCOMPARE(int(a->steering.alignedFeatures.size()), 5);
        double best = -2;
        for (int64_t i = 0; i < d.sae.width(); ++i)
            best = std::max(best,
                double(d.sae.wDec.matrix().row(i).dot(direction))
                    / double(d.sae.wDec.matrix().row(i).norm() * direction.norm()));
        QVERIFY(std::abs(double(a->steering.alignedFeatures.front().second) - best) < 1e-5);
        QVERIFY2(view.caption().contains("The difference of austen's mean rows"), qPrintable(view.caption()));
        QCOMPARE(view.promptsButton()->text(), QString("Prompts 2 \u2212 2\u2026"));
        QVERIFY(view.promptsButton()->isVisibleTo(&view));
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
        view.plot()->replot();
        testing::maybeSave(view, "features-steer-means");

        spec.set(kSteerMeansB, "");
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("steer_means_b"), qPrintable(view.message()));
        spec.set(kSteerMeansB, "They wept");
        spec.set(kSteerClamp, true);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("not clamped"), qPrintable(view.message()));
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
