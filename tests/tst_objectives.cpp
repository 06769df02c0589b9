// Pretraining objectives (train/objectives.h): BERT's masked LM chooses 15 % and splits them 80/10/10 within binomial
// tolerances over many seeds; T5's span corruption round-trips (filling the sentinels with the targets gives the text
// back) with the noise and span counts of its definition; the prefix LM's and next token's masks and targets.
#include "errortesting.h"
#include "io/atomicfile.h"
#include "model/builtinmodels.h"
#include "testbundle.h"
#include "train/corpus.h"
#include "train/objectives.h"
#include "train/task.h"
#include "train/trainingsetup.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cctype>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

using namespace atlas;
using atlas::testing::errorFrom;

namespace {

std::vector<int> textOf(int length)
{
    std::vector<int> t(static_cast<size_t>(length));
    for (int i = 0; i < length; ++i)
        t[size_t(i)] = 10 + (i * 7) % 90; // ordinary ids 10 … 99
    return t;
}

// |observed − n·p| within five standard deviations of a binomial count.
bool binomialClose(double observed, double n, double p)
{
    return std::abs(observed - n * p) <= 5 * std::sqrt(n * p * (1 - p));
}

} // namespace

class TestObjectives : public QObject
{
    Q_OBJECT

private slots:
    void maskedLmChoosesFifteenPercentSplitEightyTenTen()
    {
        const int T = 200, seeds = 2000, maskId = 103, ordinary = 100;
        const std::vector<int> text = textOf(T);
        double masked = 0, random = 0, unchanged = 0;
        std::vector<int> chosenAt(size_t(T), 0);
        for (int seed = 0; seed < seeds; ++seed) {
            const CorruptedText c = maskedLmObjective(text, maskId, ordinary, uint64_t(seed));
            QCOMPARE(std::accumulate(c.lossMask.begin(), c.lossMask.end(), 0.0f), 30.0f); // round(0.15 · 200)
            for (int t = 0; t < T; ++t) {
                switch (c.fates[size_t(t)]) {
                case CorruptedText::Fate::Kept:
                    QCOMPARE(c.input[size_t(t)], text[size_t(t)]);
                    QCOMPARE(c.targets[size_t(t)], -1);
                    continue;
                case CorruptedText::Fate::Masked:
                    QCOMPARE(c.input[size_t(t)], maskId);
                    ++masked;
                    break;
                case CorruptedText::Fate::Random:
                    QVERIFY(c.input[size_t(t)] >= 0 && c.input[size_t(t)] < ordinary);
                    ++random;
                    break;
                case CorruptedText::Fate::Unchanged:
                    QCOMPARE(c.input[size_t(t)], text[size_t(t)]);
                    ++unchanged;
                    break;
                }
                QCOMPARE(c.targets[size_t(t)], text[size_t(t)]);
                ++chosenAt[size_t(t)];
            }
        }
        const double chosen = 30.0 * seeds;
        QVERIFY2(binomialClose(masked, chosen, 0.8), qPrintable(QString::number(masked / chosen)));
        QVERIFY2(binomialClose(random, chosen, 0.1), qPrintable(QString::number(random / chosen)));
        QVERIFY2(binomialClose(unchanged, chosen, 0.1), qPrintable(QString::number(unchanged / chosen)));
        for (int t = 0; t < T; ++t) // every position equally likely to be chosen
            QVERIFY2(binomialClose(chosenAt[size_t(t)], seeds, 0.15), qPrintable(QString::number(chosenAt[size_t(t)])));
        QCOMPARE(maskedLmObjective({5}, maskId, ordinary, 1).lossMask, std::vector<float> {1.0f}); // at least one
        QVERIFY(
            maskedLmObjective(text, maskId, ordinary, 7).input == maskedLmObjective(text, maskId, ordinary, 7).input);
    }

    // Issue 58: the fills view's "Corrupt as BERT does" took a [MASK] the user typed as the original token there.
    // Special tokens ([CLS], [SEP], a [MASK] already in the text) are never chosen, as BERT's collator chooses none.
    void theMaskedLmChoosesOrdinaryTokensOnly()
    {
        const int maskId = 103, cls = 101, sep = 102, ordinary = 100;
        const std::vector<int> text = {cls, 7, 8, maskId, 9, 10, 11, 12, sep};
        for (int seed = 0; seed < 200; ++seed) {
            const CorruptedText c = maskedLmObjective(text, maskId, ordinary, uint64_t(seed), 0.5);
            for (size_t t : {size_t(0), size_t(3), size_t(8)}) {
                QCOMPARE(c.lossMask[t], 0.0f);
                QCOMPARE(c.input[t], text[t]);
            }
            QCOMPARE(int(std::count(c.lossMask.begin(), c.lossMask.end(), 1.0f)), 3); // half of the 6 ordinary
        }
        QVERIFY_THROWS_EXCEPTION(Error, maskedLmObjective({cls, maskId, sep}, maskId, ordinary, 1));
    }

    void spanCorruptionRoundTrips()
    {
        std::vector<int> sentinels;
        for (int s = 0; s < 40; ++s)
            sentinels.push_back(200 + s);
        double spansDrawn = 0, noiseTokens = 0;
        for (int length = 2; length <= 120; ++length)
            for (int seed = 0; seed < 20; ++seed) {
                const std::vector<int> text = textOf(length);
                const CorruptedText c = spanCorruptionObjective(text, sentinels, uint64_t(seed));
                QCOMPARE(fillSpans(c.input, c.targets, sentinels), text);
                const int noise = std::clamp(int(std::lround(0.15 * length)), 1, length - 1);
                const int spans = int(c.spans.size());
                QCOMPARE(int(c.input.size()), length - noise + spans);
                QCOMPARE(int(c.targets.size()), noise + spans + 1);
                QCOMPARE(c.targets.front(), sentinels[0]);
                QCOMPARE(c.targets.back(), sentinels[size_t(spans)]);
                int covered = 0;
                for (auto [begin, end] : c.spans) {
                    QVERIFY(end > begin);
                    covered += end - begin;
                }
                QCOMPARE(covered, noise);
                QVERIFY(c.spans.front().first > 0); // the text starts with a kept gap
                if (length == 100) {
                    spansDrawn += spans;
                    noiseTokens += noise;
                }
            }
        QCOMPARE(noiseTokens / spansDrawn, 3.0); // 15 noise tokens in 5 spans: T5's mean span length
        QVERIFY_THROWS_EXCEPTION(Error, spanCorruptionObjective(textOf(100), {200, 201}, 1));
    }

    void prefixLmSeesItsPrefixBothWays()
    {
        const std::vector<int> text = textOf(12);
        std::vector<int> seen(12, 0);
        for (int seed = 0; seed < 400; ++seed) {
            const CorruptedText c = prefixLmObjective(text, uint64_t(seed));
            QVERIFY(c.prefix >= 1 && c.prefix <= 11);
            ++seen[size_t(c.prefix)];
            const std::vector<uint8_t> mask = objectiveAttentionMask(c);
            for (int i = 0; i < 12; ++i)
                for (int j = 0; j < 12; ++j)
                    QCOMPARE(bool(mask[size_t(i * 12 + j)]), j <= i || (i < c.prefix && j < c.prefix));
            for (int t = 0; t < 12; ++t) {
                const bool counts = t >= c.prefix - 1 && t < 11;
                QCOMPARE(c.lossMask[size_t(t)], counts ? 1.0f : 0.0f);
                QCOMPARE(c.targets[size_t(t)], counts ? text[size_t(t + 1)] : -1);
            }
        }
        for (int p = 1; p <= 11; ++p)
            QVERIFY2(seen[size_t(p)] > 0, qPrintable(QString::number(p)));
    }

    // BERT's next-sentence prediction: [CLS] A [SEP] B [SEP] with its segments; B is A's successor in half the draws
    // (within binomial tolerance over 2000 seeds), otherwise neither A nor its successor; fewer than 3 sentences
    // refused.
    void nextSentencePairsHalfTheTimeWithTheSuccessor()
    {
        const std::vector<int> text = textOf(40);
        std::vector<bool> ends(40, false);
        for (int end : {7, 15, 24, 31, 39})
            ends[size_t(end)] = true;
        const std::vector<std::pair<int, int>> sentences = sentencesOf(text, ends);
        QCOMPARE(sentences.size(), size_t(5));
        QCOMPARE(sentences[1], (std::pair<int, int> {8, 16}));
        int isNext = 0;
        for (int seed = 0; seed < 2000; ++seed) {
            const CorruptedText c = nextSentenceObjective(text, ends, 500, 501, uint64_t(seed));
            const auto a = std::find(sentences.begin(), sentences.end(), c.sentenceA) - sentences.begin();
            const auto b = std::find(sentences.begin(), sentences.end(), c.sentenceB) - sentences.begin();
            QVERIFY(a < 4 && b < 5); // A has a successor
            QCOMPARE(c.isNext, b == a + 1);
            QVERIFY(b != a);
            isNext += c.isNext;
            const int lengthA = c.sentenceA.second - c.sentenceA.first;
            QCOMPARE(c.input.size(), size_t(lengthA + c.sentenceB.second - c.sentenceB.first + 3));
            QCOMPARE(c.input.front(), 500);
            QCOMPARE(c.input[size_t(lengthA + 1)], 501);
            QCOMPARE(c.input.back(), 501);
            QCOMPARE(c.segments[size_t(lengthA + 1)], 0); // the first [SEP] closes segment 0
            QCOMPARE(c.segments[size_t(lengthA + 2)], 1);
            QCOMPARE(c.targets, std::vector<int> {c.isNext ? 1 : 0});
            QCOMPARE(c.lossMask, std::vector<float> {1.0f});
            QCOMPARE(objectiveAttentionMask(c), std::vector<uint8_t>(c.input.size() * c.input.size(), 1));
        }
        QVERIFY2(binomialClose(isNext, 2000, 0.5), qPrintable(QString::number(isNext)));
        ends.assign(40, false);
        ends[10] = true;
        QVERIFY_THROWS_EXCEPTION(Error, nextSentenceObjective(text, ends, 500, 501, 0)); // two sentences
        QCOMPARE(parseObjective("nsp", "t"), Objective::NextSentence);
    }

    // The "mlm" task: 128 characters of the novel with round(0.15 · 128) = 19 chosen, a bidirectional model whose
    // vocabulary adds [MASK], [CLS], [SEP] and [PAD], and a few optimiser steps that already beat chance by far.
    void theMaskedLmTaskTrainsAnEncoder()
    {
        const auto task = Task::create("mlm");
        std::mt19937_64 rng(5);
        const Example e = task->sample(rng, false);
        QCOMPARE(e.tokens.size(), size_t(128));
        QCOMPARE(std::count_if(e.targets.begin(), e.targets.end(), [](int t) { return t >= 0; }), 19);
        const ModelConfig c = task->modelConfig();
        QVERIFY(!c.causal);
        QCOMPARE(c.specialToken("[MASK]"), 256);
        QCOMPARE(c.ordinaryTokens(), 256);
        TrainingRun run;
        run.task = "mlm";
        run.options.steps = 30;
        run.options.batch = 4;
        run.options.warmupSteps = 5;
        const auto trainer = newTrainer(run);
        QVERIFY(!trainer->model()->config.causal);
        const float before = trainer->evaluate(32).loss;
        for (int i = 0; i < 30; ++i)
            trainer->step();
        const float after = trainer->evaluate(32).loss;
        QVERIFY2(before > 5.0f && after < before - 1.0f, qPrintable(QString("%1 -> %2").arg(before).arg(after)));
    }

    // The "typos" task: up to four asked letters a window, each replaced one time in two, the rest of the window the
    // novel's; fine-tuning starts from austen-mlm's weights, keeps its shape, and refuses a model that cannot read the
    // task's tokens or a shape option beside it.
    void theTyposTaskFineTunesTheMaskedLm()
    {
        const auto task = Task::create("typos");
        std::mt19937_64 rng(3);
        int asked = 0, replaced = 0;
        for (int i = 0; i < 400; ++i) {
            const bool heldOut = i % 2 == 1;
            const Example e = task->sample(rng, heldOut);
            QCOMPARE(e.tokens.size(), size_t(96));
            std::string window(e.tokens.begin(), e.tokens.end());
            int wrong = 0, here = 0;
            for (size_t t = 0; t < e.targets.size(); ++t) {
                if (e.targets[t] < 0)
                    continue;
                QVERIFY(e.targets[t] == 'y' || e.targets[t] == 'n');
                QVERIFY(std::isalpha(static_cast<unsigned char>(e.tokens[t])));
                ++here;
                wrong += e.targets[t] == 'n';
            }
            QVERIFY(here >= 1 && here <= 4);
            asked += here;
            replaced += wrong;
            const std::string &novel = heldOut ? corpusHeldOut() : corpusTraining();
            if (i < 100) // a window with no letter replaced is the novel's; one with a replacement is not
                QCOMPARE(novel.find(window) != std::string::npos, wrong == 0);
        }
        QVERIFY2(binomialClose(replaced, asked, 0.5), qPrintable(QString("%1 of %2").arg(replaced).arg(asked)));

        TrainingRun run;
        run.task = "typos";
        run.from = "austen-mlm";
        run.options.steps = 20;
        run.options.batch = 8;
        run.options.learningRate = 1e-3f;
        run.options.warmupSteps = 2;
        const auto trainer = newTrainer(run);
        const auto pretrained = loadModel("austen-mlm");
        QCOMPARE(trainer->model()->parameterCount(), pretrained->parameterCount());
        const auto startUp = trainer->model()->blocks[2].weight(BlockPart::Up).values();
        const auto pretrainedUp = pretrained->blocks[2].weight(BlockPart::Up).values();
        QVERIFY(std::equal(startUp.begin(), startUp.end(), pretrainedUp.begin(), pretrainedUp.end()));
        QCOMPARE(trainer->model()->config.task, std::string("typos"));
        // austen-mlm names characters, not answers: every asked letter costs many nats, until the head learns 'y'/'n'
        const float before = trainer->evaluate(32).loss;
        for (int i = 0; i < 20; ++i)
            trainer->step();
        const float after = trainer->evaluate(32).loss;
        QVERIFY2(before > 4.0f && after < 1.0f, qPrintable(QString("%1 -> %2").arg(before).arg(after)));

        // A fine-tuning run without a learning rate takes fine-tuning's; one given is kept.
        TrainingRun plain;
        plain.from = "austen-mlm";
        applyFineTuningLearningRate(plain, false);
        QCOMPARE(plain.options.learningRate, TrainOptions::kFineTuningLearningRate);
        plain.options.learningRate = 1e-3f;
        applyFineTuningLearningRate(plain, true);
        QCOMPARE(plain.options.learningRate, 1e-3f);
        plain.from.clear();
        plain.options.learningRate = TrainOptions {}.learningRate;
        applyFineTuningLearningRate(plain, false);
        QCOMPARE(plain.options.learningRate, TrainOptions {}.learningRate);

        const std::vector<std::string> starts = startingModels(*task);
        QVERIFY(std::find(starts.begin(), starts.end(), "austen-mlm") != starts.end());
        QVERIFY(std::find(starts.begin(), starts.end(), "austen") == starts.end()); // causal
        run.from = "austen";
        QCOMPARE(errorFrom([&] { trainingModelConfig(run, false); }),
            QString("from austen: task typos reads the text both ways, and the model is causal"));
        ModelConfig wider = loadModel("austen-mlm")->config;
        wider.vocab = 300;
        QCOMPARE(startingModelProblem(wider, *task),
            std::string("task typos reads a vocabulary of 260 tokens with its own special tokens; the model has 300"));
        run.from = "austen-mlm";
        run.layers = 2;
        QCOMPARE(errorFrom([&] { trainingModelConfig(run, false); }),
            QString("from austen-mlm: the model fixes the shape and layout; leave layers out"));

        // The start model's configuration is kept while its files are unchanged, and read again when they change.
        QTemporaryDir dir;
        const std::filesystem::path copy = std::filesystem::path(dir.path().toStdString()) / "start";
        std::filesystem::copy(resolveModel("austen-mlm"), copy);
        run.layers = 0;
        run.from = copy.string();
        QCOMPARE(trainingModelConfig(run, false).context, loadModel("austen-mlm")->config.context);
        ModelConfig shorter = loadModel("austen-mlm")->config;
        shorter.context = 64;
        writeFileAtomically((copy / "config.json").string(), shorter.toJson());
        QCOMPARE(errorFrom([&] { trainingModelConfig(run, false); }),
            QString::fromStdString("from " + copy.string()
                + ": task typos writes examples of up to 128 tokens, and the model's context is 64"));
    }

    void nextTokenAndTheMasksOfTheEncoderObjectives()
    {
        const CorruptedText next = nextTokenObjective({1, 2, 3});
        QCOMPARE(next.targets, (std::vector<int> {2, 3, -1}));
        QCOMPARE(objectiveAttentionMask(next), (std::vector<uint8_t> {1, 0, 0, 1, 1, 0, 1, 1, 1}));
        const CorruptedText mlm = maskedLmObjective({1, 2, 3}, 9, 5, 3);
        QCOMPARE(objectiveAttentionMask(mlm), std::vector<uint8_t>(9, 1)); // an encoder sees both ways
        QCOMPARE(parseObjective("span", "--objective"), Objective::SpanCorruption);
        try {
            parseObjective("bert", "--objective");
            QFAIL("accepted 'bert'");
        } catch (const Error &e) {
            QVERIFY(std::string(e.what()).find("next, mlm, span, prefix or nsp") != std::string::npos);
        }
        QVERIFY_THROWS_EXCEPTION(Error, nextTokenObjective({4}));
    }

    // A task's targets read back from its examples' tokens are the targets it samples (the last position, which the
    // characters task gives the character after the window, aside): what the Gradients view's loss counts.
    void aTasksTargetsAreReadBackFromItsText()
    {
        for (const char *name :
            {"reverse", "sort", "copy", "parens", "retrieval", "retrieval-ends", "chars", "words"}) {
            const auto task = Task::create(name);
            std::mt19937_64 rng(7);
            for (int i = 0; i < 200; ++i) {
                const Example e = task->sample(rng, i % 3 == 0);
                std::vector<int> expected = e.targets;
                expected.back() = -1;
                QVERIFY2(task->targetsOf(e.tokens) == expected, name);
            }
        }
        // the masked LM's chosen characters are not in its text: each position reconstructs itself
        const auto mlm = Task::create("mlm");
        QCOMPARE(mlm->targetsOf({1, 2, 3}), (std::vector<int> {1, 2, 3}));
        QCOMPARE(Task::create("reverse")->targetsOf({'a', 'b'}), (std::vector<int> {-1, -1}));
    }
};

QTEST_GUILESS_MAIN(TestObjectives)
#include "tst_objectives.moc"
