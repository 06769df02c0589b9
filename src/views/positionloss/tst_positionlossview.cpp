// The Position loss view (src/views/positionloss): each task curve is the held-out score taken apart by position,
// the text's curve is the run's own next-token loss, and an encoder is refused.
#include "clitesting.h"
#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "positionloss/positionloss.h"
#include "positionloss/positionlossview.h"
#include "sanitizertesting.h"
#include "testbundle.h"
#include "train/corpus.h"
#include "train/evaluation.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace atlas;
using namespace atlas::views::positionloss;

class TestPositionLossView : public QObject
{
    Q_OBJECT

private slots:
    void binsGatherPositionsTwoADoubling()
    {
        std::vector<double> loss(20);
        for (size_t t = 0; t < loss.size(); ++t)
            loss[t] = double(t + 1);
        loss[6] = std::nan(""); // token 7 unscored: its bin's mean is token 6's alone
        const std::vector<PositionBin> bins = binned(loss);
        const std::vector<std::pair<int, int>> expected
            = {{1, 1}, {2, 2}, {3, 3}, {4, 5}, {6, 7}, {8, 11}, {12, 15}, {16, 20}};
        QCOMPARE(bins.size(), expected.size());
        for (size_t b = 0; b < bins.size(); ++b) {
            QCOMPARE(bins[b].first, expected[b].first);
            QCOMPARE(bins[b].last, expected[b].second);
        }
        QCOMPARE(bins[4].loss, 6.0);
        QCOMPARE(bins[5].loss, 9.5);
        QCOMPARE(bins[7].loss, 18.0); // 16 … 20, cut at the curve's end
        loss.resize(24); // 16 … 23, then a tail of one joins it
        QCOMPARE(binned(loss).back().first, 16);
        QCOMPARE(binned(loss).back().last, 24);

        std::vector<double> falling(1024);
        for (size_t t = 0; t < falling.size(); ++t)
            falling[t] = 1.0 / double(t + 1);
        int late = 0, early = 0;
        const double score = inContextScore(falling, &late, &early);
        QCOMPARE(late, 500);
        QCOMPARE(early, 50);
        double atLate = 0, atEarly = 0; // tokens 450 … 550 and 45 … 55
        for (int t = 450; t <= 550; ++t)
            atLate += 1.0 / t / 101;
        for (int t = 45; t <= 55; ++t)
            atEarly += 1.0 / t / 11;
        QVERIFY(std::fabs(score - (atLate - atEarly)) < 1e-12);
        inContextScore(std::vector<double>(128, 1.0), &late, &early);
        QCOMPARE(late, 115);
        QCOMPARE(early, 11);
    }

    // austen-long (1024 characters) beside austen (128) and the text: the task curves are the held-out evaluation
    // split by position, the text's is −log p of each next character from a run of its own.
    void austenLongAgainstAusten()
    {
        ViewSpec spec;
        spec.view = "position-loss";
        spec.model = "austen-long";
        spec.baselineModel = "austen";
        spec.text = corpusHeldOut().substr(0, 300);
        PositionLossView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec, kAnalysesOnLeastWork)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<PositionLossAnalysis>();
        QVERIFY(a && a->curves.size() == 3);
        QCOMPARE(a->curves[0].loss.size(), size_t(1024));
        QCOMPARE(a->curves[1].loss.size(), size_t(128));
        QCOMPARE(a->curves[2].windows, 0);
        QCOMPARE(view.plot()->graphCount(), 3);

        const auto longModel = loadModel("austen-long");
        const int windows = a->curves[0].windows;
        // The windows are scored in groups of their own draws (for the score's error); together they are the
        // held-out loss of all of them: every position of a chars window has a target, so the plain mean is it.
        const int groups = lossGroups(windows);
        double whole = 0;
        for (int g = 0; g < groups; ++g)
            whole += evaluateOnTask(longModel, *Task::create("chars", longModel->config.context), windows / groups,
                         12345 + uint64_t(g))
                         .loss
                / groups;
        double sum = 0;
        for (double l : a->curves[0].loss)
            sum += l;
        QVERIFY2(std::fabs(sum / 1024 - whole) < 1e-5, qPrintable(QString::number(sum / 1024 - whole)));
        QCOMPARE(std::isfinite(a->curves[0].scoreError), groups > 1);

        Input input;
        for (unsigned char c : spec.text)
            input.tokens.push_back(c);
        Engine engine(longModel, input);
        engine.runToEnd();
        const Tensor &logits = engine.trace().tensor("logits");
        const std::vector<double> &text = a->curves[2].loss;
        QCOMPARE(text.size(), spec.text.size() - 1);
        for (size_t t = 0; t + 1 < spec.text.size(); ++t) {
            const Eigen::VectorXd z = logits.matrix().row(Eigen::Index(t)).cast<double>().transpose();
            const double logSum = z.maxCoeff() + std::log((z.array() - z.maxCoeff()).exp().sum());
            const double expected = logSum - z(input.tokens[t + 1]);
            QVERIFY2(std::fabs(text[t] - expected) < 1e-4 * std::max(1.0, expected), qPrintable(QString::number(t)));
        }
        QVERIFY2(
            view.caption().contains("austen-long, " + QString::number(windows) + " held-out windows (1024 positions)"),
            qPrintable(view.caption()));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
        // Reading helps: the characters after one, two and three read (2.3 nats on the 32 windows first tried) cost far
        // more than those after 768 and more (1.1).
        const std::vector<PositionBin> bins = binned(a->curves[0].loss);
        QCOMPARE(bins.back().first, 768);
        QCOMPARE(bins.back().last, 1024);
        const double firstThree = (bins[0].loss + bins[1].loss + bins[2].loss) / 3;
        QVERIFY2(firstThree > bins.back().loss + 0.8, qPrintable(view.caption()));
    }

    // `position-loss` on the command line: austen's windows and a text, in the table and in the JSON, the text's
    // losses those of a run of it here.
    void theCommandLineGivesTheSameCurves()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath("loss.json");
        const std::string text = "It is a truth universally acknowledged, that a single man";
        const testing::CliResult r = testing::runCli({"position-loss", "--model", "austen", "--windows", "2", "--text",
            QString::fromStdString(text), "--json", json});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("austen on 2 held-out windows of its task, 128 positions"), qPrintable(r.out));
        QVERIFY2(r.out.contains("in-context learning score (token 115 less token 11"), qPrintable(r.out));
        QFile file(json);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonArray curves = QJsonDocument::fromJson(file.readAll()).array();
        QCOMPARE(curves.size(), 2);
        QCOMPARE(curves[0].toObject()["loss"].toArray().size(), 128);
        const QJsonArray textLoss = curves[1].toObject()["loss"].toArray();
        QCOMPARE(textLoss.size(), qsizetype(text.size() - 1));
        Input input;
        for (unsigned char c : text)
            input.tokens.push_back(c);
        Engine engine(loadModel("austen"), input);
        engine.runToEnd();
        const PositionLossCurve here = textLossCurve(
            *loadModel("austen"), input, [&](const std::vector<int> &rows) { return engine.nextTokenProbs(rows); });
        for (qsizetype t = 0; t < textLoss.size(); ++t)
            QVERIFY(std::fabs(textLoss[t].toDouble() - here.loss[size_t(t)]) < 1e-9);

        const testing::CliResult refused = testing::runCli({"position-loss", "--model", "reverse"});
        QVERIFY2(refused.code != 0 && refused.err.contains("give a text"), qPrintable(refused.err));
    }

    void anEncoderIsRefused()
    {
        ViewSpec spec;
        spec.view = "position-loss";
        spec.model = "austen-mlm";
        spec.text = "It is a truth universally acknowledged";
        PositionLossView view;
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("is an encoder, which reads both ways"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestPositionLossView)
#include "tst_positionlossview.moc"
