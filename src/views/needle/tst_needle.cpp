// A needle in a haystack (needle/haystack.h): the context holds the needle after a sentence end and the question at
// its end; every number equals what a plain run with whole attention matrices gives, whether the test's runs keep
// only each block's input or, where the model cannot keep attention on demand, the whole matrices; and what cannot be
// measured is refused, saying why.
#include "engine/attentiontrace.h"
#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "needle/needle.h"
#include "sanitizertesting.h"
#include "testbundle.h"
#include "trace/names.h"
#include "train/corpus.h"
#include "train/evaluation.h"
#include "train/task.h"
#include "util/error.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace atlas;

namespace {

NeedleTest smallTest(int depths)
{
    NeedleTest test;
    test.haystack = "It is a truth universally acknowledged. She was not in the habit of it! He said so.\n";
    test.needle = views::needle::kNeedle.fallback;
    test.question = views::needle::kNeedleQuestion.fallback;
    test.answer = views::needle::kNeedleAnswer.fallback;
    test.tokens = 120; // austen's context is 128
    test.depths = depths;
    return test;
}

} // namespace

class TestNeedle : public QObject
{
    Q_OBJECT

private slots:
    void placesTheNeedleAfterASentence()
    {
        const auto model = loadModel("austen");
        const auto tokenizer = tokenizerForModel(*model);
        NeedleTest test = smallTest(3);
        test.haystack = "Yes. No! So. Go. Ah!\n";
        test.needle = " The number is 48.";
        test.question = " The number is";
        test.answer = " 48";
        const std::vector<int> needle = tokenizer->encode(test.needle), question = tokenizer->encode(test.question);
        const int room = test.tokens - int(needle.size() + question.size() + 2), reach = room / 20; // 86 and 4
        QCOMPARE(room, 86);
        for (const double depth : {0.0, 0.1, 0.3, 0.5, 0.77, 1.0}) {
            int start = -1, end = -1;
            const std::vector<int> ids = needleContext(*tokenizer, test, depth, &start, &end);
            QCOMPARE(int(ids.size()), test.tokens);
            QCOMPARE(std::vector<int>(ids.begin() + start, ids.begin() + end), needle);
            const auto questionAt = ids.end() - int64_t(question.size()) - 2; // the answer " 48" but its last digit
            QCOMPARE(std::vector<int>(questionAt, questionAt + int64_t(question.size())), question);
            QCOMPARE(int(questionAt - ids.begin()), room + int(needle.size()));
            const int wanted = int(std::lround(depth * room));
            QVERIFY(start <= wanted && start >= wanted - reach);
            if (start > 0) { // after a sentence end or a line: this document has one every 4 characters at most
                const std::string before = tokenizer->decode({ids[size_t(start - 1)]});
                QVERIFY2(before == "." || before == "!" || before == "\n", before.c_str());
            }
        }
    }

    void equalsWholeMatrices_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("tokens");
        QTest::newRow("austen: attention on demand, block inputs kept") << "austen" << 120;
        QTest::newRow("copy-span: adaptive spans, whole matrices") << "copy-span" << 40;
    }

    // Each depth's numbers against a run of the same ids keeping whole matrices: next_probs and attn.probs read
    // directly. `austen`'s runs keep only each block's input, so its shares come from queries and keys recomputed
    // layer by layer; `copy-span`'s spans cannot be kept on demand, so its runs keep the whole matrices.
    void equalsWholeMatrices()
    {
        QFETCH(QString, model);
        QFETCH(int, tokens);
        const auto m = loadModel(model.toStdString());
        const auto tokenizer = tokenizerForModel(*m);
        NeedleTest test = smallTest(4);
        test.tokens = tokens;
        if (tokens < 100) { // copy-span's context of 40
            test.needle = " n=4.";
            test.question = " n=";
            test.answer = "4";
        }
        Input first;
        int start = 0, end = 0;
        first.tokens = needleContext(*tokenizer, test, 0, &start, &end);
        QCOMPARE(onDemandObstacle(m->config, first).empty(), model == "austen");
        const NeedleResult r = needleInAHaystack(m, *tokenizer, test, size_t(1) << 30);
        QCOMPARE(int(r.depths.size()), 4);
        QCOMPARE(r.answer, tokenizer->encode(test.answer));
        QCOMPARE(r.questionPosition, test.tokens - int(r.answer.size()));
        for (const NeedleAtDepth &d : r.depths) {
            Input input;
            input.tokens = needleContext(*tokenizer, test, d.depth, &start, &end);
            QCOMPARE(start, d.needleStart);
            QCOMPARE(end, d.needleEnd);
            EngineOptions whole;
            whole.attention = EngineOptions::Attention::Whole;
            Engine engine(m, input, whole);
            engine.runToEnd();
            const Tensor &probs = engine.trace().find("next_probs")->tensor;
            double answer = 1;
            bool greedy = true;
            for (size_t i = 0; i < r.answer.size(); ++i) {
                const float *row = probs.data() + (r.questionPosition + int64_t(i)) * probs.dim(1);
                answer *= row[r.answer[i]];
                greedy = greedy && std::max_element(row, row + probs.dim(1)) - row == r.answer[i];
            }
            QVERIFY2(std::fabs(d.answerProbability - answer) <= 1e-5 * answer,
                qPrintable(QString("%1 against %2").arg(d.answerProbability).arg(answer)));
            QCOMPARE(d.greedy, greedy);
            for (int l = 0; l < m->config.layers; ++l) {
                const Tensor &p = engine.trace().find(names::layerTensor(l, "attn.probs"))->tensor;
                double share = 0;
                for (int64_t h = 0; h < p.dim(0); ++h)
                    for (int k = d.needleStart; k < d.needleEnd; ++k)
                        share += p.data()[(h * p.dim(1) + r.questionPosition) * p.dim(2) + k];
                share /= double(p.dim(0));
                QVERIFY2(std::fabs(d.attention[size_t(l)] - share) <= 1e-5,
                    qPrintable(QString("layer %1: %2 against %3").arg(l).arg(d.attention[size_t(l)]).arg(share)));
            }
        }
    }

    // Kamradt's grid is the test at each length, evenly spaced up to the context: every number equals the test run at
    // that length alone, and the progress counts every pass.
    void runsTheGridLengthByLength()
    {
        const auto model = loadModel("austen");
        const auto tokenizer = tokenizerForModel(*model);
        NeedleTest test = smallTest(3);
        test.needle = " The code is 48.";
        test.question = " The code is";
        test.answer = " 48";
        test.lengths = 3;
        QCOMPARE(needleLengths(test), std::vector<int>({40, 80, 120}));
        AnalysisProgress progress;
        const std::vector<NeedleResult> runs = needleGrid(model, *tokenizer, test, size_t(1) << 30, &progress);
        QCOMPARE(runs.size(), size_t(3));
        QCOMPARE(progress.total.load(), 9);
        QCOMPARE(progress.done.load(), 9);
        for (const NeedleResult &r : runs) {
            NeedleTest one = test;
            one.tokens = r.tokens;
            one.lengths = 1;
            const NeedleResult alone = needleInAHaystack(model, *tokenizer, one, size_t(1) << 30);
            QCOMPARE(r.questionPosition, alone.questionPosition);
            QCOMPARE(r.depths.size(), alone.depths.size());
            for (size_t d = 0; d < r.depths.size(); ++d) {
                QCOMPARE(r.depths[d].needleStart, alone.depths[d].needleStart);
                QCOMPARE(r.depths[d].answerProbability, alone.depths[d].answerProbability);
                QCOMPARE(r.depths[d].attention, alone.depths[d].attention);
            }
        }
        test.lengths = 1;
        QCOMPARE(needleLengths(test), std::vector<int>({120}));
    }

    void refusesWhatItCannotMeasure()
    {
        const auto austen = loadModel("austen");
        const auto tokenizer = tokenizerForModel(*austen);
        const auto refused
            = [&](const std::shared_ptr<const Model> &model, const NeedleTest &test, const QString &expected) {
                  try {
                      needleInAHaystack(model, *tokenizerForModel(*model), test, size_t(1) << 30);
                      QFAIL(qPrintable("accepted: " + expected));
                  } catch (const Error &e) {
                      QVERIFY2(QString(e.what()).contains(expected), e.what());
                  }
              };
        NeedleTest test = smallTest(3);
        test.tokens = 200;
        refused(austen, test, "a context of 200 tokens is past austen's context of 128 tokens");
        test.tokens = 60;
        refused(austen, test,
            "a context of 60 tokens cannot hold the needle (27 tokens), the question (48) and "
            "the answer (5)");
        test = smallTest(1);
        refused(
            austen, test, "the test takes 2 to 101 depths (from the start to the end, one forward pass each), not 1");
        test.depths = 102;
        refused(
            austen, test, "the test takes 2 to 101 depths (from the start to the end, one forward pass each), not 102");
        test = smallTest(3);
        test.answer = "";
        refused(austen, test, "the answer has no tokens");
        refused(loadModel("austen-mlm"), smallTest(3), "austen-mlm is an encoder");
        // a grid: 1 to 16 lengths, and its shortest context must hold the needle and the question, checked before the
        // first pass
        const auto refusedGrid = [&](const NeedleTest &grid, const QString &expected) {
            AnalysisProgress progress;
            try {
                needleGrid(austen, *tokenizer, grid, size_t(1) << 30, &progress);
                QFAIL(qPrintable("accepted: " + expected));
            } catch (const Error &e) {
                QVERIFY2(QString(e.what()).contains(expected), e.what());
            }
            QCOMPARE(progress.done.load(), 0);
        };
        test = smallTest(3);
        test.lengths = 17;
        refusedGrid(test, "the grid takes 1 to 16 context lengths (each a row of depths), not 17");
        test.lengths = 0;
        refusedGrid(test, "the grid takes 1 to 16 context lengths (each a row of depths), not 0");
        test.lengths = 2; // 60 and 120 tokens: the needle and question take 80
        refusedGrid(test, "a context of 60 tokens cannot hold the needle");
    }

    // austen-long (docs/models.md, "A long context"; lesson 23): 1024 characters in Gemma 2's layout, layers 0 and 2
    // windowed to the last 512 keys. A needle more than 512 characters before the question gets none of those layers'
    // attention, some of layers 1 and 3; it names 64.5 % of held-out characters; and a character model that never
    // learned to look a fact up does not name the answer at any depth.
    void austenLongReadsFarOnlyInItsGlobalLayers()
    {
        ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
        const auto model = loadModel("austen-long");
        QCOMPARE(model->config.context, 1024);
        QVERIFY(model->config.windowed(0) && !model->config.windowed(1) && model->config.windowed(2));
        QCOMPARE(model->config.slidingWindow, 512);
        const Evaluation e = evaluateOnTask(model, *Task::create("chars", model->config.context), 256);
        QVERIFY2(e.tokenAccuracy >= 0.63 && e.loss <= 1.17,
            qPrintable(QString("%1 nats, %2").arg(e.loss).arg(e.tokenAccuracy)));
        NeedleTest test;
        test.haystack = corpusHeldOut();
        test.needle = " The secret word is Pemberley.";
        test.question = " What is the secret word? The secret word is";
        test.answer = " Pemberley";
        test.tokens = 1024;
        test.depths = 11;
        const NeedleResult r = needleInAHaystack(model, *tokenizerForModel(*model), test, size_t(1) << 30);
        for (const NeedleAtDepth &d : r.depths) {
            QVERIFY2(d.answerProbability < 1e-3, qPrintable(QString::number(d.answerProbability)));
            if (r.questionPosition - d.needleEnd >= 512) {
                QCOMPARE(d.attention[0], 0.0f);
                QCOMPARE(d.attention[2], 0.0f);
                QVERIFY(d.attention[1] > 0 && d.attention[3] > 0);
            }
        }
        QVERIFY(r.questionPosition - r.depths[4].needleEnd >= 512); // 40 % deep: beyond the window
    }
};

QTEST_GUILESS_MAIN(TestNeedle)
#include "tst_needle.moc"
