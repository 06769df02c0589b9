// Training is deterministic for a seed, resumes exactly from a checkpoint, learns, and refuses torn checkpoints.
#include "analysis/lostinthemiddle.h"
#include "engine/engine.h"
#include "io/atomicfile.h"
#include "io/safetensors.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "testbundle.h"
#include "tokenize/sentencepiecetokenizer.h"
#include "train/checkpointdirectory.h"
#include "train/corpus.h"
#include "train/trainer.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <tuple>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <tuple>

using namespace atlas;

class TestTrainer : public QObject
{
    Q_OBJECT

    static std::unique_ptr<Trainer> make(int steps)
    {
        const auto task = Task::create("reverse");
        TrainOptions o;
        o.steps = steps;
        o.batch = 8;
        o.warmupSteps = 5;
        return std::make_unique<Trainer>(std::make_shared<Model>(Model::random(task->modelConfig(), 7)), "reverse", o);
    }

    static bool sameWeights(const Model &a, const Model &b)
    {
        for (const auto &[name, t] : a.parameters())
            if (std::memcmp(t->data(), b.parameters().at(name)->data(), t->bytes()) != 0)
                return false;
        return true;
    }

private slots:
    // Key–value retrieval (lost in the middle): ten distinct keys with a value each, the asked key last, the answer its
    // value; targets only on the answer; each pair asked in turn; held-out questions never trained on.
    void retrievalAsksThePairItIsTold()
    {
        std::mt19937_64 rng(3);
        const size_t pairs = kRetrievalPairs * kRetrievalPairWidth - 1, key = kRetrievalKeyLength,
                     value = kRetrievalValueLength, question = pairs + 2 + key; // up to the asked key
        for (int position = 0; position < kRetrievalPairs; ++position) {
            const Example e = retrievalExample(rng, true, position);
            const std::string text(e.tokens.begin(), e.tokens.end());
            QCOMPARE(text.size(), pairs + 2 + key + value); // the pairs, " ?", the key, the value
            const std::string context = text.substr(0, pairs), asked = text.substr(pairs + 2, key);
            QCOMPARE(text.substr(pairs, 2), std::string(" ?"));
            QCOMPARE(context.substr(size_t(position) * kRetrievalPairWidth, key), asked);
            QCOMPARE(text.substr(question), context.substr(size_t(position) * kRetrievalPairWidth + key, value));
            for (int other = 0; other < kRetrievalPairs; ++other)
                QVERIFY(other == position || context.substr(size_t(other) * kRetrievalPairWidth, key) != asked);
            QVERIFY(isHeldOutQuestion(text.substr(0, question)));
            int targets = 0;
            for (size_t t = 0; t < e.targets.size(); ++t)
                if (e.targets[t] >= 0) {
                    QVERIFY(t >= question - 1); // the asked key predicts the first digit
                    QCOMPARE(e.targets[t], e.tokens[t + 1]);
                    ++targets;
                }
            QCOMPARE(targets, kRetrievalValueLength);
        }
        const Example trained = retrievalExample(rng, false, 0);
        QVERIFY(!isHeldOutQuestion(std::string(trained.tokens.begin(), trained.tokens.end() - kRetrievalValueLength)));
        QVERIFY_THROWS_EXCEPTION(Error, retrievalExample(rng, true, kRetrievalPairs));
        QVERIFY_THROWS_EXCEPTION(Error, retrievalExample(rng, true, 3, 3));
        // A training context holds 2 … 10 pairs and asks kRetrievalTrainingQuestions questions, each answered by its
        // key's value.
        const auto task = Task::create("retrieval");
        std::vector<int> counts(kRetrievalPairs + 1);
        for (int i = 0; i < 400; ++i) {
            const Example many = task->sample(rng, false);
            QVERIFY(int(many.tokens.size()) <= task->modelConfig().context);
            const std::string text(many.tokens.begin(), many.tokens.end()), context = text.substr(0, text.find(" ?"));
            const int n = int(context.size() + 1) / kRetrievalPairWidth;
            QCOMPARE(int(context.size()), n * kRetrievalPairWidth - 1);
            ++counts[size_t(n)];
            int questions = 0, targets = 0;
            for (size_t at = text.find('?'); at != std::string::npos; at = text.find('?', at + 1)) {
                const size_t pair = context.find(text.substr(at + 1, key));
                QCOMPARE(pair % kRetrievalPairWidth, size_t(0));
                QCOMPARE(text.substr(at + 1 + key, value), context.substr(pair + key, value));
                ++questions;
            }
            for (int t : many.targets)
                targets += t >= 0;
            QCOMPARE(questions, kRetrievalTrainingQuestions);
            QCOMPARE(targets, kRetrievalTrainingQuestions * kRetrievalValueLength);
        }
        QCOMPARE(counts[1], 0);
        for (int n = kRetrievalMinTrainingPairs; n <= kRetrievalPairs; ++n)
            QVERIFY(counts[size_t(n)] > 20); // 400 / 9 ≈ 44 each
    }

    // retrieval-ends asks the first two and the last two pairs of a training context half of the time (a context of
    // more than four pairs); its held-out examples ask every pair equally often.
    void retrievalEndsAsksTheEndsMoreOften()
    {
        const auto task = Task::create("retrieval-ends");
        std::mt19937_64 rng(5);
        // The asked pair's place from the start and from the end of its context, and the context's pairs.
        const auto asked = [](const Example &e) {
            const std::string text(e.tokens.begin(), e.tokens.end());
            const std::string context = text.substr(0, text.find(" ?"));
            const std::string key = text.substr(text.find('?') + 1, kRetrievalKeyLength);
            const int pairs = int(context.size() + 1) / kRetrievalPairWidth,
                      p = int(context.find(key)) / kRetrievalPairWidth;
            return std::tuple {p, pairs - 1 - p, pairs};
        };
        const int n = 8000;
        int trainedEnds = 0, trainedLong = 0;
        std::vector<int> heldOut(kRetrievalPairs);
        for (int i = 0; i < n; ++i) {
            const auto [p, fromEnd, pairs] = asked(task->sample(rng, false));
            if (pairs > 4) {
                ++trainedLong;
                trainedEnds += p < 2 || fromEnd < 2;
            }
            ++heldOut[size_t(std::get<0>(asked(task->sample(rng, true))))];
        }
        // Half of the questions go to the ends, and the other half fall there 4 / pairs of the time: 0.5 + 0.5 ·
        // E[4/n].
        double share = 0;
        for (int pairs = 5; pairs <= kRetrievalPairs; ++pairs)
            share += (0.5 + 0.5 * 4.0 / pairs) / (kRetrievalPairs - 4);
        QVERIFY(std::abs(trainedEnds / double(trainedLong) - share) < 0.03);
        for (int p = 0; p < kRetrievalPairs; ++p)
            QVERIFY(std::abs(heldOut[size_t(p)] / double(n) - 0.1) < 0.015);
    }

    // Accuracy and attention by asked position, checked on one held-out context per position against the model run
    // here, the pairs found in the text rather than by their width.
    void retrievalByPositionMeasuresEachPair()
    {
        ModelConfig c = Task::create("retrieval")->modelConfig();
        c.task = "retrieval";
        const auto model = std::make_shared<const Model>(Model::random(c, 11));
        const RetrievalByPosition r = retrievalByPosition(model, 1);
        QCOMPARE(int(r.exact.size()), kRetrievalPairs);
        QCOMPARE(int(r.attention.size()), c.layers);
        for (int p = 0; p < kRetrievalPairs; ++p) {
            std::mt19937_64 rng(12345 + uint64_t(p)); // the analysis's seed for position p
            const Example e = retrievalExample(rng, true, p);
            Engine engine(model, inputOf(e));
            engine.runToEnd();
            const std::string text(e.tokens.begin(), e.tokens.end());
            const int answer = int(text.find('?')) + kRetrievalKeyLength; // the asked key
            const Tensor &probs = engine.trace().tensor("next_probs");
            int right = 0;
            for (int t = answer; t + 1 < int(text.size()); ++t) {
                const float *row = probs.data() + int64_t(t) * probs.dim(1);
                right += std::max_element(row, row + probs.dim(1)) - row == e.tokens[size_t(t) + 1];
            }
            QCOMPARE(r.digits[size_t(p)], float(right) / kRetrievalValueLength);
            QCOMPARE(r.exact[size_t(p)], right == kRetrievalValueLength ? 1.0f : 0.0f);
            for (int l = 0; l < c.layers; ++l) {
                const Tensor &a = engine.trace().tensor("layer." + std::to_string(l) + ".attn.probs");
                size_t start = 0;
                float total = 0;
                for (int q = 0; q < kRetrievalPairs; ++q) { // pair q: its key to the space after (not the last's)
                    const size_t end = text.find(' ', start);
                    double mass = 0;
                    for (int64_t h = 0; h < a.dim(0); ++h)
                        for (size_t k = start; k < end + (q + 1 < kRetrievalPairs ? 1 : 0); ++k)
                            mass += a.slice(h)(answer, int64_t(k)) / double(a.dim(0));
                    QVERIFY(std::abs(r.attention[size_t(l)][size_t(p)][size_t(q)] - mass) < 1e-5);
                    total += float(mass);
                    start = end + 1;
                }
                QVERIFY(total > 0 && total < 1); // the rest lies on the question
            }
        }
        QVERIFY(std::abs(r.middle() - (r.exact[3] + r.exact[4] + r.exact[5] + r.exact[6]) / 4) < 1e-6);
        ModelConfig other = c;
        other.task = "reverse";
        QVERIFY_THROWS_EXCEPTION(Error, retrievalByPosition(std::make_shared<const Model>(Model::random(other, 1)), 1));
    }

    void sameSeedSameBits()
    {
        auto a = make(12), b = make(12);
        for (int i = 0; i < 12; ++i)
            QCOMPARE(a->step().loss, b->step().loss);
        QVERIFY(sameWeights(*a->model(), *b->model()));
    }

    void resumeContinuesExactly()
    {
        QTemporaryDir dir;
        auto straight = make(12), first = make(12);
        for (int i = 0; i < 12; ++i)
            straight->step();
        for (int i = 0; i < 5; ++i)
            first->step();
        first->save(dir.path().toStdString());
        auto resumed = Trainer::resume(dir.path().toStdString());
        QCOMPARE(resumed->stepCount(), 5);
        while (resumed->stepCount() < 12)
            resumed->step();
        QVERIFY(sameWeights(*straight->model(), *resumed->model()));
        QVERIFY(Model::load(dir.path().toStdString()).parameterCount() > 0); // a model directory the app opens
    }

    void lossFallsAndHeldOutImproves()
    {
        auto t = make(150);
        const float before = t->evaluate(64).loss;
        float firstLoss = t->step().loss, lastLoss = 0;
        while (t->stepCount() < 150)
            lastLoss = t->step().loss;
        QVERIFY(lastLoss < firstLoss * 0.6f);
        QVERIFY(t->evaluate(64).loss < before * 0.6f);
    }

    void tornCheckpointIsRefused()
    {
        QTemporaryDir dir;
        auto t = make(12);
        t->step();
        t->save(dir.path().toStdString());
        t->step();
        // Overwrite only the checkpoint's model, as a torn copy of a checkpoint would leave it.
        const std::string current = CheckpointDirectory(dir.path().toStdString()).current();
        QVERIFY(current != dir.path().toStdString());
        t->model()->save(current, {{"step", "2"}});
        try {
            Trainer::resume(dir.path().toStdString());
            QFAIL("a torn checkpoint was accepted");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("another step"), e.what());
        }
    }

    // A save interrupted at any point (here: its files half written, never committed) leaves the previous
    // checkpoint current and resumable; the next save removes the orphans and the older checkpoint.
    void interruptedSaveKeepsTheLastGoodCheckpoint()
    {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        auto t = make(12);
        t->step();
        t->save(path);
        t->step();
        const CheckpointDirectory checkpoints(path);
        const std::string staged = checkpoints.stage();
        t->model()->save(staged, {{"step", "2"}}); // the crash comes before optimizer.safetensors and trainer.json
        writeFileAtomically(path + "/.model.safetensors.tmp-AbCdEf", "a temporary file a kill left behind");
        QCOMPARE(Trainer::resume(path)->stepCount(), 1);
        QCOMPARE(Model::load(path).parameterCount(), t->model()->parameterCount());

        CheckpointDirectory(path).removeStale(); // what `train` does when it starts
        QVERIFY(!std::filesystem::exists(staged));
        QVERIFY(!std::filesystem::exists(path + "/.model.safetensors.tmp-AbCdEf"));
        t->save(path);
        QCOMPARE(Trainer::resume(path)->stepCount(), 2);
        int sets = 0;
        for (const auto &entry : std::filesystem::directory_iterator(path + "/checkpoints")) {
            QVERIFY2(entry.path().filename().string().starts_with("step-000002-"), entry.path().c_str());
            ++sets;
        }
        QCOMPARE(sets, 1);
        QVERIFY(sameWeights(Model::load(path), *t->model())); // the top-level model follows the checkpoint
    }

    // The words task reads Pride and Prejudice through its own SentencePiece tokenizer: its examples are stretches of
    // the corpus's training part (held-out ones of its last tenth), and a model trained on it is saved with that
    // tokenizer beside it, so the app reads its text with the same pieces.
    void theWordsTaskReadsWordsAndSavesItsTokenizer()
    {
        const auto task = Task::create("words");
        const ModelConfig c = task->modelConfig();
        const SentencePieceTokenizer pieces(task->tokenizerFile());
        QCOMPARE(c.vocab, pieces.vocabSize());
        QCOMPARE(c.tokenizer, std::string("gpt2")); // the directory's own
        // nmt_nfkc turns the corpus's line breaks into spaces: compare the texts with whitespace collapsed
        const auto collapsed = [](const std::string &text) {
            std::string out;
            for (char ch : text)
                if (!std::isspace(static_cast<unsigned char>(ch)) || (!out.empty() && out.back() != ' '))
                    out += std::isspace(static_cast<unsigned char>(ch)) ? ' ' : ch;
            return out;
        };
        const std::string training = collapsed(corpusTraining()), heldOut = collapsed(corpusHeldOut());
        // In one training window in two a passage of 8 to 64 tokens comes again further on (for induction); held-out
        // windows never. A window repeats when some 8 tokens stand in it twice, which plain text of 128 words
        // seldom does.
        const auto repeats = [](const std::vector<int> &t) {
            for (size_t i = 0; i + 8 <= t.size(); ++i)
                for (size_t j = i + 8; j + 8 <= t.size(); ++j)
                    if (std::equal(t.begin() + long(i), t.begin() + long(i + 8), t.begin() + long(j)))
                        return true;
            return false;
        };
        std::mt19937_64 rng(3);
        int repeated[2] = {0, 0};
        for (int i = 0; i < 200; ++i) {
            const bool held = i % 2;
            const Example e = task->sample(rng, held);
            QCOMPARE(e.tokens.size(), size_t(128));
            QVERIFY(std::equal(e.targets.begin(), e.targets.end() - 1, e.tokens.begin() + 1));
            if (repeats(e.tokens)) {
                ++repeated[held];
                continue;
            }
            const std::string text = collapsed(pieces.decode(e.tokens));
            QVERIFY2(text.size() > 300, text.c_str()); // about a word a token
            QVERIFY2((held ? heldOut : training).find(text) != std::string::npos, text.c_str());
            QVERIFY2((held ? training : heldOut).find(text) == std::string::npos, text.c_str());
        }
        QVERIFY2(repeated[0] >= 30 && repeated[0] <= 70, qPrintable(QString::number(repeated[0])));
        QVERIFY2(repeated[1] <= 2, qPrintable(QString::number(repeated[1])));
        TrainOptions o;
        o.steps = 2;
        o.batch = 2;
        Trainer t(std::make_shared<Model>(Model::random(c, 1)), "words", o);
        t.step();
        QTemporaryDir dir;
        t.save(dir.path().toStdString());
        // the checkpoint and the run's directory (what --model DIR opens) both hold it
        for (const std::string &saved :
            {CheckpointDirectory(dir.path().toStdString()).current(), dir.path().toStdString()}) {
            QCOMPARE(readFile(saved + "/tokenizer.model"), readFile(task->tokenizerFile()));
            const auto tokenizer = tokenizerForModel(*loadModel(saved));
            QCOMPARE(tokenizer->kind(), std::string("SentencePiece"));
            QCOMPARE(tokenizer->encode("Mr. Darcy"), pieces.encode("Mr. Darcy"));
            QCOMPARE(tokenizer->decode(pieces.encode("Mr. Darcy")), std::string("Mr. Darcy"));
        }
        // a second save replaces the run's copy and removes the first checkpoint, tokenizer and all
        t.step();
        t.save(dir.path().toStdString());
        QCOMPARE(std::distance(std::filesystem::directory_iterator(dir.path().toStdString() + "/checkpoints"),
                     std::filesystem::directory_iterator {}),
            1);
        // The run resumes with the tokenizer it started with, and refuses to go on with another one or with none.
        QCOMPARE(Trainer::resume(dir.path().toStdString())->stepCount(), 2);
        const std::string kept = CheckpointDirectory(dir.path().toStdString()).current() + "/tokenizer.model";
        writeFileAtomically(kept, "another tokenizer");
        try {
            Trainer::resume(dir.path().toStdString());
            QFAIL("resumed with another tokenizer");
        } catch (const Error &e) {
            QVERIFY2(std::string(e.what()).find(kept + ": not the tokenizer the task 'words' reads now")
                    != std::string::npos,
                e.what());
        }
        std::filesystem::remove(kept);
        try {
            Trainer::resume(dir.path().toStdString());
            QFAIL("resumed without its tokenizer");
        } catch (const Error &e) {
            QVERIFY2(std::string(e.what()).find(kept + ": missing") != std::string::npos, e.what());
        }
    }

    // A training run never replaces what it did not write: a directory holding a model but no run's state is
    // refused at every save (the command line's and the app's), and stays byte for byte.
    void saveRefusesAModelItDidNotTrain()
    {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        writeFileAtomically(path + "/config.json", R"({"model_type": "llama"})");
        writeFileAtomically(path + "/model.safetensors", "downloaded weights");
        auto t = make(12);
        t->step();
        try {
            t->save(path);
            QFAIL("saved over a downloaded model");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("holds config.json but no training run's state"), e.what());
        }
        QCOMPARE(readFile(path + "/model.safetensors"), std::string("downloaded weights"));
        QVERIFY(!std::filesystem::exists(path + "/checkpoints"));
    }

    // Only checkpoints this program wrote are removed as stale: a directory named like one but holding a user's
    // file, or a marked one a user added a file to, stays with its content.
    void staleCheckpointsAreRemovedOnlyWithTheMark()
    {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        auto t = make(12);
        t->step();
        t->save(path);
        const std::string users = path + "/checkpoints/step-000009-QQQQQQ";
        std::filesystem::create_directories(users);
        writeFileAtomically(users + "/notes.txt", "mine");
        const CheckpointDirectory checkpoints(path);
        const std::string added = checkpoints.stage(), orphan = checkpoints.stage();
        writeFileAtomically(added + "/notes.txt", "mine too");
        t->model()->save(orphan, {});
        checkpoints.removeStale();
        QVERIFY(!std::filesystem::exists(orphan));
        t->step();
        t->save(path); // a save's own clean-up
        QCOMPARE(readFile(users + "/notes.txt"), std::string("mine"));
        QCOMPARE(readFile(added + "/notes.txt"), std::string("mine too"));
        QCOMPARE(Trainer::resume(path)->stepCount(), 2);
    }

    // checkpoint.json may only name a checkpoint inside its own checkpoints/ directory.
    void pointerOutsideTheCheckpointsIsRefused()
    {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        auto t = make(12);
        t->step();
        t->save(path);
        for (const char *target : {"../..", "/etc", "checkpoints/../..", "checkpoints"}) {
            writeFileAtomically(path + "/checkpoint.json", std::string(R"({"checkpoint": ")") + target + "\"}");
            try {
                Trainer::resume(path);
                QFAIL(target);
            } catch (const Error &e) {
                QVERIFY2(QString(e.what()).contains("checkpoint.json: key 'checkpoint'"), e.what());
            }
        }
    }

    // Every field of trainer.json and every moment is checked against the model; the error names it.
    void corruptStateIsRefused_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("negative optimizer steps") << "optimizer_steps"
                                                  << "-5"
                                                  << "'optimizer_steps'";
        QTest::newRow("optimizer steps off by one") << "optimizer_steps"
                                                    << "2"
                                                    << "'optimizer_steps'";
        QTest::newRow("rng garbage") << "rng"
                                     << R"("garbage")"
                                     << "'rng'";
        QTest::newRow("huge batch") << "batch"
                                    << "2000000000"
                                    << "'batch'";
        QTest::newRow("steps 1e30") << "steps"
                                    << "1e30"
                                    << "'steps'";
        QTest::newRow("step past steps") << "step"
                                         << "13"
                                         << "'step'";
        QTest::newRow("negative learning rate") << "learning_rate"
                                                << "-1"
                                                << "'learning_rate'";
        QTest::newRow("seed a string") << "seed"
                                       << R"("1")"
                                       << "'seed'";
        QTest::newRow("unknown task") << "task"
                                      << R"("juggle")"
                                      << "unknown task";
        QTest::newRow("too large for a double") << "weight_decay"
                                                << "1e500"
                                                << "'weight_decay'";
    }

    void corruptStateIsRefused()
    {
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        auto t = make(12);
        t->step();
        t->save(path);
        const std::string state = CheckpointDirectory(path).current() + "/trainer.json";
        std::string text = readFile(state);
        const std::string needle = "\"" + key.toStdString() + "\": ";
        const size_t at = text.find(needle);
        QVERIFY(at != std::string::npos);
        const size_t end = text.find_first_of(",\n}", text.find_first_not_of(' ', at + needle.size()) + 1);
        const size_t valueAt = at + needle.size();
        // the rng value is a long string: replace up to its closing quote
        const size_t valueEnd = text[valueAt] == '"' ? text.find('"', valueAt + 1) + 1 : end;
        text.replace(valueAt, valueEnd - valueAt, value.toStdString());
        writeFileAtomically(state, text);
        try {
            Trainer::resume(path);
            QFAIL(qPrintable("accepted " + key + ": " + value));
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains(expected), e.what());
            QVERIFY2(QString(e.what()).contains("trainer.json"), e.what());
        }
    }

    void corruptMomentsAreRefused_data()
    {
        QTest::addColumn<QString>("change");
        QTest::newRow("missing") << "missing";
        QTest::newRow("transposed") << "transposed";
        QTest::newRow("nan") << "nan";
        QTest::newRow("extra") << "extra";
    }

    void corruptMomentsAreRefused()
    {
        QFETCH(QString, change);
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        auto t = make(12);
        t->step();
        t->save(path);
        const std::string file = CheckpointDirectory(path).current() + "/optimizer.safetensors";
        std::map<std::string, Tensor> state;
        {
            const SafetensorsFile f(file);
            for (const auto &[name, entry] : f.entries())
                state[name] = f.tensor(name);
        }
        const std::string victim = "m.h.0.attn.c_attn.weight"; // [d, 3d]: its transpose has another shape
        QVERIFY(state.count(victim));
        if (change == "missing")
            state.erase(victim);
        else if (change == "transposed")
            state[victim] = Tensor({state[victim].dim(1), state[victim].dim(0)});
        else if (change == "nan")
            state[victim].data()[3] = std::nanf("");
        else
            state["v.no.such.parameter"] = Tensor({2});
        std::map<std::string, const Tensor *> refs;
        for (const auto &[name, tensor] : state)
            refs[name] = &tensor;
        writeSafetensors(file, refs, {{"step", "1"}});
        try {
            Trainer::resume(path);
            QFAIL(qPrintable("accepted a " + change + " moment"));
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("optimizer.safetensors"), e.what());
            QVERIFY2(QString(e.what()).contains(change == "extra" ? "v.no.such.parameter" : victim.c_str()), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestTrainer)
#include "tst_trainer.moc"
