// The memory strategies of a training step (train/strategyrunner.h): checkpointing's gradients are bit-identical
// to plain backprop's for every k; the plain strategy's equal the full trace's, in every family and with the
// feed-forward in chunks; the recorded memory adds up; options a model cannot use are errors that name the option.
// Reversible blocks and their inversion are tst_reversibleblocks'.
#include "commands.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "io/npy.h"
#include "memory/inversionerror.h"
#include "memory/trainingstepmemory.h"
#include "model/model.h"
#include "strategytesting.h"
#include "testbundle.h"
#include "trace/allocationrecorder.h"
#include "trace/names.h"
#include "train/backprop.h"
#include "train/strategyrunner.h"
#include "util/error.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <Eigen/Dense>

#include <cmath>
#include <functional>
#include <random>

using namespace atlas;
using namespace atlas::testing;

namespace {

using atlas::testing::errorFrom;

} // namespace

class TestMemoryStrategies : public QObject
{
    Q_OBJECT

private slots:
    void checkpointGradientsAreBitIdentical_data();
    void checkpointGradientsAreBitIdentical();
    void plainStrategyEqualsTheFullTrace();
    void familyStrategiesEqualTheFullTrace_data();
    void familyStrategiesEqualTheFullTrace();
    void encoderDecoderFormulaCountsWhatPlainKeeps();
    void chunkedFeedForwardMatchesWholeOne();
    void recordedCategoriesSumToTheAllocator();
    void peakActivationAgainstDepth();
    void dumpWritesStrategyGradients();
    void badOptionsNameTheField();
};

void TestMemoryStrategies::checkpointGradientsAreBitIdentical_data()
{
    QTest::addColumn<bool>("reversible");
    QTest::addColumn<int>("ln");
    QTest::addColumn<int>("chunks");
    QTest::newRow("pre-LN") << false << int(LayerNormPlacement::Pre) << 1;
    QTest::newRow("post-LN") << false << int(LayerNormPlacement::Post) << 1;
    QTest::newRow("pre-LN, FFN in 3 chunks") << false << int(LayerNormPlacement::Pre) << 3;
    QTest::newRow("reversible model") << true << int(LayerNormPlacement::Pre) << 1;
}

void TestMemoryStrategies::checkpointGradientsAreBitIdentical()
{
    QFETCH(bool, reversible);
    QFETCH(int, ln);
    QFETCH(int, chunks);
    const int L = 7;
    const auto model = randomModel(smallConfig(L, reversible, LayerNormPlacement(ln)), 3);
    const Sequence s = sequence(12, 32, 5);
    bool empty = false;
    const Gradients plain = run(*model, s, options(MemoryStrategy::Plain, 0, chunks), &empty);
    QVERIFY(empty); // every kept tensor was freed by the backward pass
    for (int k : {0, 1, 2, 3, 4, 7}) { // 0 = ⌈√7⌉ = 3
        const Gradients checkpoint = run(*model, s, options(MemoryStrategy::Checkpoint, k, chunks), &empty);
        const QString why = bitDifference(checkpoint, plain);
        QVERIFY2(why.isEmpty(), qPrintable(QString("k = %1: %2").arg(k).arg(why)));
        QVERIFY(empty);
    }
}

void TestMemoryStrategies::plainStrategyEqualsTheFullTrace()
{
    for (bool reversible : {false, true}) {
        const auto model = randomModel(smallConfig(3, reversible), 11);
        const Sequence s = sequence(10, 32, 2);
        Engine engine(model, s.input);
        engine.runToEnd();
        const Gradients traced = backward(*model, s.input, engine.trace(), s.targets);
        const QString why = bitDifference(run(*model, s, options(MemoryStrategy::Plain)), traced);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
}

// Each family's checkpoint the way `memory --model` runs it: the plain strategy and checkpointing give the traced
// backward pass's gradients bit for bit, and leave nothing behind.
void TestMemoryStrategies::familyStrategiesEqualTheFullTrace_data()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("BERT: post-LN, embedding LayerNorm, masked-LM head") << "bert_tiny";
    QTest::newRow("Llama: GQA, SwiGLU") << "llama_tiny";
    QTest::newRow("Mixtral: routed SwiGLU experts") << "mixtral_tiny";
    QTest::newRow("Qwen3-MoE: QK-norm, routed experts") << "qwen3_moe_tiny";
    QTest::newRow("gpt-oss: sinks, YaRN, stacked clamped experts") << "gpt_oss_tiny";
    QTest::newRow("Qwen3: QK-norm") << "qwen3_tiny";
    QTest::newRow("OLMo 2: norms after the sub-layers") << "olmo2_tiny";
    QTest::newRow("Gemma 2: sandwich norms, soft-caps, alternating window") << "gemma2_tiny";
    QTest::newRow("Gemma 3: (1 + w) QK-norm, local and global RoPE") << "gemma3_tiny";
    QTest::newRow("SmolLM3: NoPE layers") << "smollm3_tiny";
    QTest::newRow("Phi-3: fused projections, LongRoPE's long factors") << "phi3_long_tiny";
    QTest::newRow("GPT-NeoX: parallel residual") << "neox_tiny";
    QTest::newRow("GPT-Neo: local layer") << "neo_tiny";
    QTest::newRow("T5 v1.0: relative buckets, cross-attention") << "t5_tiny";
    QTest::newRow("T5 v1.1: gated GELU, untied head") << "t5v11_tiny";
    QTest::newRow("the project's encoder-decoder") << "seq2seq_tiny";
}

void TestMemoryStrategies::familyStrategiesEqualTheFullTrace()
{
    QFETCH(QString, model);
    const auto m = std::make_shared<Model>(Model::load((ATLAS_TEST_DATA "/" + model).toStdString()));
    const int vocab = std::min(64, m->config.vocab);
    Sequence s = sequence(12, vocab, 5);
    if (m->config.isEncoderDecoder()) // a source of another length: the cross-attention's S ≠ T
        s.input.source = sequence(9, vocab, 8).input.tokens;
    Engine engine(m, s.input);
    engine.runToEnd();
    const Gradients traced = backward(*m, s.input, engine.trace(), s.targets);
    for (const MemoryOptions &o : {options(MemoryStrategy::Plain), options(MemoryStrategy::Checkpoint, 1)}) {
        bool empty = false;
        const QString why = bitDifference(run(*m, s, o, &empty), traced);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QVERIFY(empty);
    }
    // What plain keeps after its forward pass is what predictedActivationBytes counts, byte for byte, whole and with
    // the feed-forward in chunks (its activations then recomputed, not kept).
    for (const int chunks : {1, 5}) {
        if (chunks > 1 && m->config.hasExperts())
            continue;
        const MemoryOptions plain = options(MemoryStrategy::Plain, 0, chunks);
        StrategyRunner runner(*m, s.input, plain);
        runner.forward();
        int64_t kept = 0;
        for (const auto &e : runner.store().entries())
            kept += int64_t(e.tensor.bytes());
        QCOMPARE(kept, predictedActivationBytes(m->config, 12, plain, int(s.input.source.size())));
    }
    // The feed-forward in 5 chunks (12 tokens: 3 rows each, the last chunk empty) in every layout (Conv1D, nn.Linear,
    // gated): the same gradients but for the order of the sums. Mixtral's, Qwen3-MoE's and gpt-oss's layers are all
    // experts: no chunks there.
    if (m->config.hasExperts())
        return;
    for (const MemoryOptions &o : {options(MemoryStrategy::Plain, 0, 5), options(MemoryStrategy::Checkpoint, 1, 5)}) {
        std::string worst;
        const Gradients chunked = run(*m, s, o);
        const double rel = gradientDifference(chunked, traced, &worst, 1e-3);
        QVERIFY2(rel <= 1e-4, qPrintable(QString("%1 in %2").arg(rel).arg(QString::fromStdString(worst))));
        QVERIFY(std::fabs(chunked.loss - traced.loss) <= 1e-5 * std::fabs(traced.loss));
    }
}

// The textbook count of an encoder–decoder's saved tensors (memorystrategy.h: E encoder blocks on S tokens, L decoder
// blocks with their cross-attention, the encoder's tail, the head) is what the plain strategy keeps after its forward
// pass, byte for byte, on a model of standard shapes.
void TestMemoryStrategies::encoderDecoderFormulaCountsWhatPlainKeeps()
{
    const Model m = Model::load(ATLAS_TEST_DATA "/seq2seq_tiny");
    Sequence s = sequence(7, m.config.vocab, 3);
    s.input.source = sequence(11, m.config.vocab, 4).input.tokens;
    StrategyRunner runner(m, s.input, options(MemoryStrategy::Plain));
    runner.forward();
    int64_t kept = 0;
    for (const auto &e : runner.store().entries())
        kept += int64_t(e.tensor.bytes());
    QCOMPARE(kept, predictedActivationBytes(m.config, 7, options(MemoryStrategy::Plain), 11));
    QVERIFY(predictedActivationBytes(m.config, 7, options(MemoryStrategy::Checkpoint, 1), 11) < kept);
}

void TestMemoryStrategies::chunkedFeedForwardMatchesWholeOne()
{
    const auto model = randomModel(smallConfig(2, false), 4);
    const Sequence s = sequence(13, 32, 8);
    Engine whole(model, s.input);
    whole.runToEnd();
    Input input = s.input;
    const Program chunked = Program::build(model->config, input, true, 4);
    QCOMPARE(chunked.producerOf("layer.0.mlp.up"), -1); // the (T,F) intermediate is never a tensor of its own
    QVERIFY(chunked.indexOf("layer.1.mlp") >= 0);
    Trace trace;
    for (const Op &op : chunked.ops) {
        std::vector<Tensor> out = op.run(*model, input, trace);
        for (size_t i = 0; i < out.size(); ++i)
            trace.put(op.outputs[i].name, op.outputs[i].formula, 0, std::move(out[i]));
    }
    const Tensor &a = trace.tensor("logits"), &b = whole.trace().tensor("logits");
    const double scale = Eigen::Map<const Eigen::ArrayXf>(b.data(), b.numel()).abs().maxCoeff();
    QVERIFY(
        (Eigen::Map<const Eigen::ArrayXf>(a.data(), a.numel()) - Eigen::Map<const Eigen::ArrayXf>(b.data(), b.numel()))
            .abs()
            .maxCoeff()
        <= 1e-5 * scale);
    const double rel = gradientDifference(
        run(*model, s, options(MemoryStrategy::Plain, 0, 4)), run(*model, s, options(MemoryStrategy::Plain)));
    QVERIFY2(rel <= 1e-4, qPrintable(QString::number(rel)));
}

namespace {

// Counts what the allocator hands out and takes back, independently of the recorder (which passes every event
// on to the listener it found installed).
struct AllocationCounter : AllocationListener
{
    int64_t allocatedBytes = 0, freedBytes = 0;
    void allocated(const void *, size_t bytes) override { allocatedBytes += int64_t(bytes); }
    void freed(const void *, size_t bytes) override { freedBytes += int64_t(bytes); }
};

std::vector<TrainingSequence> oneSequence(const Sequence &s)
{
    return {{s.input, s.targets}};
}

} // namespace

// The categories of a recorded step add up to the allocator's own totals, and each strategy's categories are
// what it claims: plain recomputes nothing, checkpoint and reversible do.
void TestMemoryStrategies::recordedCategoriesSumToTheAllocator()
{
    for (MemoryStrategy strategy : {MemoryStrategy::Plain, MemoryStrategy::Checkpoint, MemoryStrategy::Reversible}) {
        auto model = randomModel(smallConfig(4, true), 2);
        const Sequence s = sequence(10, 32, 6);
        AdamW optimizer;
        timeTrainingStep(*model, oneSequence(s), options(strategy), optimizer); // moments exist: adopted next
        AllocationCounter counter;
        allocationListener() = &counter;
        const TrainingStepMemory m = measureTrainingStep(*model, oneSequence(s), options(strategy), optimizer);
        allocationListener() = nullptr;
        const MemoryRecording &r = m.recording;
        int64_t allocated = 0, freed = 0, adopted = 0;
        for (int c = 0; c < kMemoryCategories; ++c) {
            allocated += r.allocated[size_t(c)];
            freed += r.freed[size_t(c)];
        }
        for (const auto &[name, p] : model->parameters())
            adopted += int64_t(p->bytes());
        adopted *= 3; // parameters and AdamW's two moments
        QCOMPARE(r.allocated[size_t(MemoryCategory::Parameters)] + r.allocated[size_t(MemoryCategory::OptimizerState)],
            adopted);
        QCOMPARE(allocated - adopted, counter.allocatedBytes);
        QCOMPARE(r.allocatorBytes, counter.allocatedBytes);
        QCOMPARE(freed, counter.freedBytes);
        QCOMPARE(r.untrackedFreeBytes, 0);
        QVERIFY(counter.allocatedBytes > 0);
        // Everything the step allocated was freed again: at the end only the parameters and moments are live.
        QCOMPARE(r.events.back().live, adopted);
        const CategoryBytes end = r.liveAt(int(r.events.size()) - 1);
        QCOMPARE(end[size_t(MemoryCategory::StoredActivations)], 0);
        QCOMPARE(end[size_t(MemoryCategory::Gradients)], 0);
        const int64_t recomputed = r.allocated[size_t(MemoryCategory::RecomputedActivations)];
        QVERIFY((recomputed == 0) == (strategy == MemoryStrategy::Plain));
        QVERIFY(r.allocated[size_t(MemoryCategory::StoredActivations)] > 0);
        QVERIFY(m.peakActivationBytes > 0 && m.peakActivationBytes < m.peakBytes);
        // live is the running sum of the events
        int64_t live = 0;
        for (const MemoryEvent &e : r.events) {
            live += e.bytes;
            QCOMPARE(e.live, live);
        }
    }
}

// Peak activation bytes of one step against depth: plain grows linearly, checkpointing (k = ⌈√L⌉) about as √L,
// reversible stays flat.
void TestMemoryStrategies::peakActivationAgainstDepth()
{
    const std::vector<int> depths = {4, 16};
    std::map<MemoryStrategy, std::vector<double>> peak;
    for (int L : depths)
        for (MemoryStrategy strategy :
            {MemoryStrategy::Plain, MemoryStrategy::Checkpoint, MemoryStrategy::Reversible}) {
            ModelConfig c = smallConfig(L, true);
            c.context = 64;
            auto model = randomModel(c, 1, 1.0f);
            const Sequence s = sequence(64, 32, 1);
            AdamW optimizer;
            peak[strategy].push_back(
                double(measureTrainingStep(*model, oneSequence(s), options(strategy), optimizer).peakActivationBytes));
        }
    const double plain = peak[MemoryStrategy::Plain][1] / peak[MemoryStrategy::Plain][0];
    const double checkpoint = peak[MemoryStrategy::Checkpoint][1] / peak[MemoryStrategy::Checkpoint][0];
    const double reversible = peak[MemoryStrategy::Reversible][1] / peak[MemoryStrategy::Reversible][0];
    qInfo("peak activation bytes from 4 to 16 blocks: plain x%.2f, checkpoint x%.2f, reversible x%.2f", plain,
        checkpoint, reversible);
    QVERIFY(plain > 3.0 && plain < 4.2); // 4x the blocks, plus the head's fixed share
    QVERIFY(checkpoint > 1.4 && checkpoint < 2.6); // √(16/4) = 2
    QVERIFY(reversible < 1.1);
    QVERIFY(peak[MemoryStrategy::Checkpoint][1] < 0.5 * peak[MemoryStrategy::Plain][1]);
    QVERIFY(peak[MemoryStrategy::Reversible][1] < peak[MemoryStrategy::Checkpoint][1]);
}

// dump --grads --memory-strategy writes the strategy's gradients: checkpoint's are the plain ones, bit for bit.
void TestMemoryStrategies::dumpWritesStrategyGradients()
{
    QTemporaryDir plainDir, checkpointDir;
    const CommandArgs common = {
        "--model", ATLAS_TEST_DATA "/gpt2_tiny", "--tokens", "3,17,42,8,17", "--targets", "17,42,8,17,-1", "--grads"};
    CommandArgs a = common, b = common;
    a.insert(a.end(), {"--out", plainDir.path().toStdString()});
    b.insert(b.end(),
        {"--out", checkpointDir.path().toStdString(), "--memory-strategy", "checkpoint", "--checkpoint-every", "1"});
    QCOMPARE(dumpCommand(a), 0);
    QCOMPARE(dumpCommand(b), 0);
    for (const QString name : {"grad.h.0.attn.c_attn.weight", "grad.h.1.mlp.c_fc.weight", "grad.wte.weight"}) {
        const Tensor x = readNpy(plainDir.filePath(name + ".npy").toStdString());
        const Tensor y = readNpy(checkpointDir.filePath(name + ".npy").toStdString());
        QVERIFY(x.shape() == y.shape() && std::equal(x.data(), x.data() + x.numel(), y.data()));
    }
    QFile f(checkpointDir.filePath("manifest.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(QJsonDocument::fromJson(f.readAll()).object()["memory_strategy"].toString(), QString("checkpoint"));
    // on a reversible model, --memory-strategy reversible writes the gradients from rebuilt inputs: float32 rounding
    // away from the stored-activation ones
    QTemporaryDir revPlain, revRebuilt;
    const CommandArgs rev = {"--model", "reverse-rev", "--text", "abc>cb", "--targets", "98,99,62,99,98,-1", "--grads"};
    CommandArgs p = rev, q = rev;
    p.insert(p.end(), {"--out", revPlain.path().toStdString()});
    q.insert(q.end(), {"--out", revRebuilt.path().toStdString(), "--memory-strategy", "reversible"});
    QCOMPARE(dumpCommand(p), 0);
    QCOMPARE(dumpCommand(q), 0);
    for (const QString name : {"grad.h.0.attn.c_attn.weight", "grad.h.1.mlp.c_fc.weight", "grad.wte.weight"}) {
        const Tensor x = readNpy(revPlain.filePath(name + ".npy").toStdString());
        const Tensor y = readNpy(revRebuilt.filePath(name + ".npy").toStdString());
        QCOMPARE(x.shape(), y.shape());
        float maxRef = 0, maxDiff = 0;
        for (int64_t i = 0; i < x.numel(); ++i) {
            maxRef = std::max(maxRef, std::fabs(x.data()[i]));
            maxDiff = std::max(maxDiff, std::fabs(x.data()[i] - y.data()[i]));
        }
        QVERIFY2(maxRef > 0 && maxDiff <= 1e-4f * maxRef, qPrintable(name));
    }
    // a standard model cannot run the reversible strategy
    CommandArgs c = common;
    c.insert(c.end(), {"--out", checkpointDir.path().toStdString(), "--memory-strategy", "reversible"});
    const QString error = errorFrom([&] { dumpCommand(c); });
    QVERIFY2(error.contains("--memory-strategy reversible") && error.contains("standard blocks"), qPrintable(error));
}

void TestMemoryStrategies::badOptionsNameTheField()
{
    const auto standard = randomModel(smallConfig(4, false), 1);
    const Sequence s = sequence(8, 32, 1);
    auto make = [&](const Model &m, MemoryOptions o) { return errorFrom([&] { StrategyRunner(m, s.input, o); }); };
    QString e = make(*standard, options(MemoryStrategy::Reversible));
    QVERIFY2(e.contains("--memory-strategy reversible") && e.contains("train --reversible"), qPrintable(e));
    e = make(*standard, options(MemoryStrategy::Checkpoint, 5));
    QVERIFY2(e.contains("--checkpoint-every 5") && e.contains("1..4"), qPrintable(e));
    e = make(*standard, options(MemoryStrategy::Checkpoint, -1));
    QVERIFY2(e.contains("--checkpoint-every -1"), qPrintable(e));
    e = make(*standard, options(MemoryStrategy::Plain, 0, 9));
    QVERIFY2(e.contains("--ffn-chunks 9") && e.contains("8 tokens"), qPrintable(e));
    e = make(*standard, options(MemoryStrategy::Plain, 0, 0));
    QVERIFY2(e.contains("--ffn-chunks 0"), qPrintable(e));
    QVERIFY(make(*standard, options(MemoryStrategy::Checkpoint, 4)).isEmpty());
    e = errorFrom([] { parseMemoryStrategy("recompute"); });
    QVERIFY2(e.contains("--memory-strategy") && e.contains("'recompute'"), qPrintable(e));
    MemoryOptionFields fields;
    fields.strategy = "memory_strategy";
    e = errorFrom([&] { validateMemoryOptions(options(MemoryStrategy::Reversible), standard->config, 0, fields); });
    QVERIFY2(e.startsWith("memory_strategy"), qPrintable(e));
    e = errorFrom([&] { measureInversionError(*standard, s.input, s.targets, StreamPrecision::Float32); });
    QVERIFY2(e.contains("reversible model") && e.contains("standard blocks"), qPrintable(e));
    // Chunks apply to dense feed-forwards: a model whose every layer is experts is refused by name.
    const Model mixtral = Model::load(ATLAS_TEST_DATA "/mixtral_tiny");
    e = errorFrom([&] { StrategyRunner(mixtral, s.input, options(MemoryStrategy::Plain, 0, 2)); });
    QVERIFY2(e.startsWith("--ffn-chunks 2") && e.contains("mixture of experts"), qPrintable(e));
    const Model seq2seq = Model::load(ATLAS_TEST_DATA "/seq2seq_tiny"); // an encoder-decoder in GPT-2's layout
    Sequence pair = sequence(8, seq2seq.config.vocab, 2);
    pair.input.source = sequence(6, seq2seq.config.vocab, 3).input.tokens;
    const double rel = gradientDifference(
        run(seq2seq, pair, options(MemoryStrategy::Plain, 0, 3)), run(seq2seq, pair, options(MemoryStrategy::Plain)));
    QVERIFY2(rel <= 1e-4, qPrintable(QString::number(rel)));
}

QTEST_GUILESS_MAIN(TestMemoryStrategies)
#include "tst_memorystrategies.moc"
