// The built-in encoders do what their descriptions (config.json) say: austen-mlm and the models trained from its
// command (typos, PoWER-BERT, Funnel, Sinkhorn) and austen-bert, their held-out accuracy and the heads attending where
// claimed. The decoders' claims are in tst_builtin_models.cpp.
#include "builtinpatternmass.h"
#include "engine/engine.h"
#include "engine/tokenretention.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "sanitizertesting.h"
#include "sinkhorn/sinkhornsort.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "trace/names.h"
#include "train/corpus.h"
#include "train/evaluation.h"

#include <QTest>

#include <cmath>
#include <memory>

using namespace atlas;

class TestBuiltinEncoders : public QObject
{
    Q_OBJECT

private slots:
    // The encoder, as its description states: 80.7 % of the chosen characters named on the held-out tenth; layer 0's
    // heads 0, 2, 3 look beside each [MASK]; 2.1 looks at the previous character and 3.2 at the next one.
    void austenMlmFillsMaskedCharactersLookingBothWays()
    {
        ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
        const Evaluation e = evaluateOnTask(loadModel("austen-mlm"), *Task::create("mlm"), 256);
        QVERIFY2(e.loss <= 0.62, qPrintable(QString::number(e.loss)));
        QVERIFY2(e.tokenAccuracy >= 0.80, qPrintable(QString::number(e.tokenAccuracy)));
        const auto around = testing::builtinPatternMass("austen-mlm", "around the mask");
        for (int h : {0, 2, 3})
            QVERIFY2(around[0][size_t(h)] >= 0.69, qPrintable(QString::number(around[0][size_t(h)])));
        QVERIFY(around[0][1] < 0.2);
        const auto previous = testing::builtinPatternMass("austen-mlm", "previous token"),
                   next = testing::builtinPatternMass("austen-mlm", "next token");
        QVERIFY2(previous[2][1] >= 0.52, qPrintable(QString::number(previous[2][1])));
        QVERIFY2(next[3][2] >= 0.59, qPrintable(QString::number(next[3][2])));
    }

    // Fine-tuning, as docs/models.md and lesson 30 state: austen-mlm-typos answers 90.8 % of the held-out asked letters
    // right, and in the novel's first line with "fortune" spelt "fortane" it answers n at the a (91 %), where
    // austen-mlm, never asked, copies the a it sees (98 %) and names u behind a [MASK] (99 %); and it is wrong where
    // lesson 30 says.
    void austenMlmTyposTagsTheMisspeltLetter()
    {
        ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
        const Evaluation e = evaluateOnTask(loadModel("austen-mlm-typos"), *Task::create("typos"), 256);
        QVERIFY2(e.loss <= 0.23, qPrintable(QString::number(e.loss)));
        QVERIFY2(e.tokenAccuracy >= 0.89, qPrintable(QString::number(e.tokenAccuracy)));
        const std::string text = "It is a truth universally acknowledged, that a single man in possession of a good "
                                 "fortane, must be in want of a wife.";
        const int64_t a = int64_t(text.find("fortane")) + 4;
        QCOMPARE(a, int64_t(86)); // the lesson's position
        const auto outputAt = [](const char *name, const std::string &text, int64_t t, char token) {
            const auto model = loadModel(name);
            Engine engine(model, {tokenizerForModel(*model)->encode(text), {}});
            engine.runToEnd();
            return engine.trace().tensor("next_probs").matrix()(t, int64_t(static_cast<unsigned char>(token)));
        };
        QVERIFY2(outputAt("austen-mlm-typos", text, a, 'n') > 0.8, "the misspelt letter");
        QVERIFY2(outputAt("austen-mlm-typos", text, a - 4, 'n') < 0.3, "the word's first letter");
        QVERIFY2(outputAt("austen-mlm", text, a, 'a') > 0.9, "the pretrained head copies");
        std::string masked = text; // behind a [MASK] the pretrained model names the novel's letter
        masked.replace(size_t(a), 1, "[MASK]");
        QVERIFY2(outputAt("austen-mlm", masked, a, 'u') > 0.9, "the masked letter");
        // Where it goes wrong (the lesson's last step): habet's e missed, the b beside it and unkind's d flagged.
        const std::string habet = "She was not in the habet of taking unkind liberties with her sister.";
        QCOMPARE(habet.substr(21, 2) + habet.substr(40, 1), std::string("bed"));
        QVERIFY2(outputAt("austen-mlm-typos", habet, 22, 'n') < 0.5, "habet's e");
        QVERIFY2(outputAt("austen-mlm-typos", habet, 21, 'n') > 0.9, "habet's b");
        QVERIFY2(outputAt("austen-mlm-typos", habet, 40, 'n') > 0.9, "unkind's d");
    }

    // PoWER-BERT's re-training, as docs/models.md states: austen-mlm-power, trained with the schedule 0.7, 0.49,
    // 0.343, names 77.6 % of the chosen characters under it (77.2 % with every token) and 72.7 % when the same counts
    // are kept at random; austen-mlm, trained with every token, falls from 80.7 % to 51 % under the same schedule.
    void austenMlmPowerWorksWithFewerTokens()
    {
        ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
        const auto underSchedule = [](const std::string &name, TokenRetention::Rank rank) {
            const auto model = loadModel(name);
            return evaluateAdjusted(model, *Task::create("mlm"), 256, 12345, [&](Input &in, const Example &ex) {
                in.retention = TokenRetention::geometric(0.7f, model->config.layers);
                in.retention.rank = rank;
                in.retention.seed = 7;
                for (size_t t = 0; t < ex.targets.size(); ++t)
                    if (ex.targets[t] >= 0)
                        in.retention.protect.push_back(int(t));
            });
        };
        const Evaluation whole = evaluateOnTask(loadModel("austen-mlm-power"), *Task::create("mlm"), 256);
        const Evaluation reduced = underSchedule("austen-mlm-power", TokenRetention::Rank::Significance);
        const Evaluation random = underSchedule("austen-mlm-power", TokenRetention::Rank::Random);
        const Evaluation plain = underSchedule("austen-mlm", TokenRetention::Rank::Significance);
        QVERIFY2(whole.tokenAccuracy >= 0.77, qPrintable(QString::number(whole.tokenAccuracy)));
        QVERIFY2(reduced.tokenAccuracy >= 0.77, qPrintable(QString::number(reduced.tokenAccuracy)));
        QVERIFY2(random.tokenAccuracy <= 0.74, qPrintable(QString::number(random.tokenAccuracy)));
        QVERIFY2(plain.tokenAccuracy <= 0.52, qPrintable(QString::number(plain.tokenAccuracy)));
    }

    // Funnel-Transformer's pooling, as docs/models.md states: austen-mlm-funnel names 79.6 % of the chosen characters
    // with 68.8 % of austen-mlm's token-positions; its layers run on 128, 64, 32 and 128 of them.
    void austenMlmFunnelPools()
    {
        ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
        const auto model = loadModel("austen-mlm-funnel");
        QCOMPARE(model->config.funnel.blocks, (std::vector<int> {1, 1, 1}));
        QCOMPARE(model->config.funnel.workShare(model->config.context), 0.6875);
        const Evaluation e = evaluateOnTask(model, *Task::create("mlm"), 256);
        QVERIFY2(e.tokenAccuracy >= 0.79 && e.tokenAccuracy < 0.80, qPrintable(QString::number(e.tokenAccuracy)));
        // On its sample (lesson 22's sentence) the full-length layers read each [MASK]'s neighbours: layer 0's heads 0
        // and 1 all of its attention on the next and the previous character, the decoder's head 2 58 % on the next.
        const std::vector<int> tokens = tokenizerForModel(*model)->encode(model->config.sample);
        Engine engine(model, {tokens, {}});
        engine.runToEnd();
        const auto meanAtMasks = [&](int layer, int head, int offset) {
            const ConstMatrixMap p
                = engine.trace().tensor("layer." + std::to_string(layer) + ".attn.probs").slice(head);
            double sum = 0;
            int count = 0;
            for (int t = 0; t < int(tokens.size()); ++t)
                if (tokens[size_t(t)] == model->config.specialToken("[MASK]")) {
                    sum += p(t, t + offset);
                    ++count;
                }
            return sum / std::max(count, 1);
        };
        QVERIFY(meanAtMasks(0, 0, 1) > 0.95 && meanAtMasks(0, 1, -1) > 0.95);
        QVERIFY2(meanAtMasks(3, 2, 1) > 0.5 && meanAtMasks(3, 2, 1) < 0.66,
            qPrintable(QString::number(meanAtMasks(3, 2, 1))));
    }

    // Sparse Sinkhorn attention, as docs/models.md states: austen-mlm-sinkhorn, each query scoring 16 of 128 keys,
    // names 67.9 % of the chosen characters on 256 held-out windows, and 66.2 % with its sort switched off (each block
    // reading only itself). On its sample, layer 0's heads put 28-43 % of their weight on the sorted half, later
    // layers' 2-17 %.
    void austenMlmSinkhornSorts()
    {
        ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
        const auto model = loadModel("austen-mlm-sinkhorn");
        QCOMPARE(model->config.sinkhorn.block, 8);
        QCOMPARE(model->config.sinkhorn.workShare(model->config.context), 0.125);
        const Evaluation e = evaluateOnTask(model, *Task::create("mlm"), 256);
        const HeldOutScore off = sortSwitchedOffScore(model, 256);
        QVERIFY2(e.tokenAccuracy >= 0.675 && e.tokenAccuracy < 0.685, qPrintable(QString::number(e.tokenAccuracy)));
        QVERIFY2(off.evaluation.tokenAccuracy >= 0.655 && off.evaluation.tokenAccuracy < 0.67,
            qPrintable(QString::number(off.evaluation.tokenAccuracy)));
        const std::vector<int> tokens = tokenizerForModel(*model)->encode(model->config.sample);
        for (int layer = 0; layer < model->config.layers; ++layer)
            for (int head = 0; head < model->config.heads; ++head) {
                const double share = sinkhornPicture(model, tokens, layer, head).sortedShare;
                QVERIFY2(layer == 0 ? share > 0.27 && share < 0.44 : share > 0.01 && share < 0.18,
                    qPrintable(QString("layer %1 head %2: %3").arg(layer).arg(head).arg(share)));
            }
    }

    // The BERT-layout encoder, as its description states: BertForMaskedLM's layout with relative_key positions, 76.3 %
    // of the chosen characters named; layer 0's heads 2 and 3 look beside each [MASK], 2.3 at the previous character
    // and every head of layer 3 at the next one.
    void austenBertIsABertThatFillsMaskedCharacters()
    {
        const auto model = loadModel("austen-bert");
        QVERIFY(model->config.family == Family::Bert);
        QVERIFY(model->config.positions == PositionKind::Shaw && model->config.relativeKeySign == -1);
        QCOMPARE(QString::fromStdString(model->config.toJson()).count("\"relative_key\""), 1);
        ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
        const Evaluation e = evaluateOnTask(model, *Task::create("mlm"), 256);
        QVERIFY2(e.loss <= 0.78, qPrintable(QString::number(e.loss)));
        QVERIFY2(e.tokenAccuracy >= 0.76, qPrintable(QString::number(e.tokenAccuracy)));
        const auto around = testing::builtinPatternMass("austen-bert", "around the mask");
        for (int h : {2, 3})
            QVERIFY2(around[0][size_t(h)] >= 0.96, qPrintable(QString::number(around[0][size_t(h)])));
        const auto previous = testing::builtinPatternMass("austen-bert", "previous token"),
                   next = testing::builtinPatternMass("austen-bert", "next token");
        QVERIFY2(previous[2][3] >= 0.74, qPrintable(QString::number(previous[2][3])));
        for (double m : next[3])
            QVERIFY2(m >= 0.50, qPrintable(QString::number(m)));
    }
};

QTEST_GUILESS_MAIN(TestBuiltinEncoders)
#include "tst_builtin_encoders.moc"
