// A checkpointed trace (engine/recompute.h): each block keeps its residual stream, what its sub-layers add, the scored
// queries and keys and the small tensors; every other tensor is freed once read and computed again on request, equal
// to what the forward made. Checked on every family that keeps its attention on demand.
#include "engine/attentiontrace.h"
#include "engine/engine.h"
#include "engine/outputhead.h"
#include "engine/recompute.h"
#include "errortesting.h"
#include "model/builtinmodels.h"
#include "model/model.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "view/specrun.h"
#include "view/viewspec.h"

#include <QTest>

#include <cmath>
#include <memory>
#include <optional>

using namespace atlas;
using namespace atlas::testing;

namespace {

constexpr const char *kModels[]
    = {"gpt2_tiny", "llama_tiny", "qwen2_swa_tiny", "qwen3_tiny", "olmo2_tiny", "gemma2_tiny", "gemma3_tiny",
        "smollm3_tiny", "phi3_tiny", "qwen3_moe_tiny", "mixtral_tiny", "gpt_oss_tiny", "neox_tiny", "bert_tiny"};

std::shared_ptr<const Model> load(const char *name)
{
    return std::make_shared<const Model>(Model::load(dataPath(name).toStdString()));
}

// Twelve tokens every fixture's vocabulary holds.
Input twelveTokens()
{
    return Input {{3, 17, 42, 8, 0, 25, 9, 11, 30, 5, 2, 14}, {}};
}

EngineOptions options(EngineOptions::Checkpoints checkpoints)
{
    EngineOptions o;
    o.attention = EngineOptions::Attention::OnDemand;
    o.checkpoints = checkpoints;
    return o;
}

// Empty when max |got − want| ≤ 1e-6 · max |want| (a product's threads may split it otherwise), else what differs.
QString closeTo(const Tensor &got, const Tensor &want)
{
    if (got.shape() != want.shape())
        return QString::fromStdString("shape " + got.shapeString() + ", expected " + want.shapeString());
    double scale = 0, worst = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
        scale = std::max(scale, double(std::fabs(want.data()[i])));
        worst = std::max(worst, double(std::fabs(got.data()[i] - want.data()[i])));
    }
    return worst <= 1e-6 * scale ? QString() : QString("max |diff| %1 against max |value| %2").arg(worst).arg(scale);
}

} // namespace

class TestRecompute : public QObject
{
    Q_OBJECT

private slots:
    // Kept tensors are the on-demand run's bit for bit; a freed one is absent and recomputed as the forward made it.
    void everyFreedTensorIsRecomputedAsTheForwardMadeIt()
    {
        for (const char *name : kModels) {
            const auto model = load(name);
            const Input input = twelveTokens();
            if (!onDemandObstacle(model->config, input).empty())
                continue;
            Engine onDemand(model, input, options(EngineOptions::Checkpoints::Never));
            QVERIFY(onDemand.runToEnd());
            for (const auto keep : {EngineOptions::Checkpoints::Always, EngineOptions::Checkpoints::InputOnly}) {
                Engine checkpointed(model, input, options(keep));
                QVERIFY(checkpointed.runToEnd());
                QVERIFY2(checkpointed.checkpointed() && !onDemand.checkpointed(), name);
                int freed = 0;
                for (const Op &op : checkpointed.program().ops)
                    for (const OpOutput &o : op.outputs) {
                        const Tensor &want = onDemand.trace().tensor(o.name);
                        const QString where = QString("%1 %2: ").arg(name, QString::fromStdString(o.name));
                        if (o.kept) {
                            QVERIFY2(checkpointed.trace().contains(o.name), qPrintable(where + "not kept"));
                            QVERIFY2(
                                sameBits(checkpointed.trace().tensor(o.name), want), qPrintable(where + "differs"));
                            continue;
                        }
                        ++freed;
                        QVERIFY2(!checkpointed.trace().contains(o.name), qPrintable(where + "kept"));
                        QVERIFY2(
                            isRecomputable(checkpointed.program(), checkpointed.trace(), o.name), qPrintable(where));
                        const QString why = closeTo(checkpointed.recompute(o.name), want);
                        QVERIFY2(why.isEmpty(), qPrintable(where + why));
                    }
                QVERIFY2(freed > 0, name);
                QVERIFY2(checkpointed.trace().bytes() < onDemand.trace().bytes(), name);
                const std::vector<int> rows = {0, 11};
                QVERIFY2(sameBits(checkpointed.nextTokenProbs(rows), onDemand.nextTokenProbs(rows)), name);
            }
        }
    }

    // What a block keeps: its residual stream, the scored queries and keys, attn.lse; its norms and feed-forward
    // activations are freed, and the trace never holds more than the program's estimate.
    void aBlockKeepsItsStreamQueriesAndKeys()
    {
        const auto model = load("llama_tiny");
        Engine engine(model, twelveTokens(), options(EngineOptions::Checkpoints::Always));
        size_t most = 0;
        while (!engine.atEnd()) {
            engine.step();
            most = std::max(most, engine.trace().bytes());
        }
        QVERIFY2(most <= engine.estimatedTraceBytes(),
            qPrintable(QString("held %1 bytes, estimated %2").arg(most).arg(engine.estimatedTraceBytes())));
        for (const char *kept : {"layer.0.mid", "layer.0.out", "layer.0.attn.out", "layer.0.mlp.down",
                 "layer.0.attn.q_rot", "layer.0.attn.k_rot", "layer.0.attn.lse", "ln_f"})
            QVERIFY2(engine.trace().contains(kept), kept);
        for (const char *freed :
            {"layer.0.ln_1", "layer.0.attn.q", "layer.0.attn.v", "layer.0.attn.context", "layer.0.mlp.act"})
            QVERIFY2(!engine.trace().contains(freed), freed);
        // not computed yet is not recomputable
        engine.runTo(engine.program().producerOf("layer.1.mlp.act"));
        QVERIFY(!isRecomputable(engine.program(), engine.trace(), "layer.1.mlp.act"));
        QVERIFY(errorFrom([&] { engine.recompute("layer.1.mlp.act"); }).contains("not computed yet"));
        QVERIFY(isRecomputable(engine.program(), engine.trace(), "layer.0.mlp.act"));
    }

    // Keeping only its input, a block holds its output (the next block's input) and the narrow attn.lse; a layer's
    // scored queries and keys come back from one recompute, and its heads are read from them as the forward's.
    void aBlockKeepsOnlyItsInputAndItsHeadsAreReadAgain()
    {
        for (const char *name : {"llama_tiny", "qwen3_tiny", "gemma2_tiny"}) {
            const auto model = load(name);
            Engine onDemand(model, twelveTokens(), options(EngineOptions::Checkpoints::Never));
            Engine engine(model, twelveTokens(), options(EngineOptions::Checkpoints::InputOnly));
            size_t most = 0;
            QVERIFY(onDemand.runToEnd());
            while (!engine.atEnd()) {
                engine.step();
                most = std::max(most, engine.trace().bytes());
            }
            QVERIFY2(most <= engine.estimatedTraceBytes(),
                qPrintable(
                    QString("%1: held %2 bytes, estimated %3").arg(name).arg(most).arg(engine.estimatedTraceBytes())));
            const std::vector<std::string> read = readoutInputs(model->config, 1);
            for (const std::string &kept :
                {std::string("layer.0.out"), std::string("layer.1.attn.lse"), std::string("ln_f")})
                QVERIFY2(engine.trace().contains(kept), kept.c_str());
            for (const std::string &freed : {std::string("layer.0.mid"), std::string("layer.0.attn.out"),
                     std::string("layer.0.mlp.down"), read[0], read[1]})
                QVERIFY2(!engine.trace().contains(freed), freed.c_str());
            QVERIFY(!AttentionReadout::find(*model, {}, engine.trace(), 1));
            const ModelConfig &c = model->config;
            QCOMPARE(outputBytes(engine.program(), read), size_t(2 * c.heads * 12 * c.headDim()) * sizeof(float));
            Trace withInputs = engine.trace();
            std::vector<Tensor> made = engine.recompute(read);
            for (size_t i = 0; i < read.size(); ++i)
                putRecomputed(withInputs, engine.program(), read[i], std::move(made[i]));
            const auto readout = AttentionReadout::find(*model, {}, withInputs, 1);
            const auto wanted = AttentionReadout::find(*model, {}, onDemand.trace(), 1);
            QVERIFY2(readout && wanted, name);
            for (int64_t h = 0; h < readout->heads(); ++h) {
                const QString why
                    = closeTo(readout->head(ops::ScoreStage::Probs, h), wanted->head(ops::ScoreStage::Probs, h));
                QVERIFY2(why.isEmpty(), qPrintable(QString("%1 head %2: %3").arg(name).arg(h).arg(why)));
            }
        }
    }

    // LayerAttention reads a layer the same way whether its run kept it whole or on demand: on demand, any rows of a
    // head are the bits of the readout's whole head (the forward's 64-row blocks, here across two of them), and whole,
    // the trace's own slice.
    void aLayersAttentionIsReadWholeOrOnDemandAlike()
    {
        const auto model = load("llama_tiny");
        Input input;
        for (int t = 0; t < 128; ++t)
            input.tokens.push_back((t * 7) % 64);
        Engine onDemand(model, input, options(EngineOptions::Checkpoints::Never));
        EngineOptions whole;
        whole.attention = EngineOptions::Attention::Whole;
        Engine wholeRun(model, input, whole);
        QVERIFY(onDemand.runToEnd() && wholeRun.runToEnd());
        const names::AttentionSite site;
        const auto readout = AttentionReadout::find(*model, {}, onDemand.trace(), 1);
        const std::optional<LayerAttention> recomputed
            = LayerAttention::find(model.get(), {}, onDemand.trace(), site, 1);
        const std::optional<LayerAttention> traced = LayerAttention::find(nullptr, {}, wholeRun.trace(), site, 1);
        QVERIFY(readout && recomputed && traced);
        QVERIFY(!LayerAttention::find(nullptr, {}, onDemand.trace(), site, 1)); // no model to recompute with
        QCOMPARE(recomputed->heads(), traced->heads());
        QCOMPARE(recomputed->queries(), 128);
        std::vector<float> buffer;
        for (const ops::ScoreStage stage : {ops::ScoreStage::Probs, ops::ScoreStage::Masked}) {
            QVERIFY(recomputed->has(stage) && traced->has(stage));
            const Tensor head = readout->head(stage, 2);
            const float *rows = recomputed->rows(stage, 2, 50, 90, buffer);
            for (int64_t i = 0; i < 40 * 128; ++i)
                QCOMPARE(rows[i], head.data()[50 * 128 + i]);
            const Tensor &kept = wholeRun.trace().tensor(
                stage == ops::ScoreStage::Probs ? "layer.1.attn.probs" : "layer.1.attn.masked");
            QCOMPARE(traced->rows(stage, 2, 50, 90, buffer), kept.data() + (2 * 128 + 50) * 128);
        }
        QVERIFY_THROWS_EXCEPTION(Error, recomputed->rows(ops::ScoreStage::Scores, 0, 0, 1, buffer));
    }

    // Running past a feed-forward, a run keeping block inputs computes it a few hundred rows at a time: the same
    // stream as the whole op's (to the rounding of a product's kernel, which may differ for a short last chunk), and
    // none of its [T, F] activations whole at any time; a step at a time, each op runs and its activations are there
    // to see.
    void aFeedForwardRunPastIsComputedInRowsAsTheWholeOp()
    {
        const auto model = loadModel("tiny-bytes");
        Input input;
        for (int t = 0; t < 1100; ++t) // three chunks of rows, the last one short
            input.tokens.push_back(32 + (t * 7) % 90);
        Engine onDemand(model, input, options(EngineOptions::Checkpoints::Never));
        Engine engine(model, input, options(EngineOptions::Checkpoints::InputOnly));
        QVERIFY(onDemand.runToEnd());
        std::string whole; // a [T, F] tensor the trace held between two ops
        QVERIFY(engine.runToEnd([&](int, int) {
            for (const TraceEntry &e : engine.trace().entries())
                if (whole.empty() && e.tensor.shape() == Shape {int64_t(input.tokens.size()), model->config.dFF})
                    whole = e.name;
            return true;
        }));
        QVERIFY2(whole.empty(), whole.c_str());
        for (int l = 0; l < model->config.layers; ++l) {
            const std::string out = "layer." + std::to_string(l) + ".out";
            const QString why = closeTo(engine.trace().tensor(out), onDemand.trace().tensor(out));
            QVERIFY2(why.isEmpty(), qPrintable(QString::fromStdString(out + ": ") + why));
        }
        Engine stepped(model, input, options(EngineOptions::Checkpoints::InputOnly));
        stepped.runTo(stepped.program().producerOf("layer.0.mlp.down"));
        QVERIFY(stepped.trace().contains("layer.0.mlp.act"));
        QVERIFY(sameBits(stepped.trace().tensor("layer.0.mlp.act"), onDemand.trace().tensor("layer.0.mlp.act")));
    }

    // The budget's estimate is the most the trace holds as Run to End makes it: never less, and within one op's
    // outputs of it. Keeping block inputs it counts no [T, F] activation (the feed-forward runs in rows); stepping
    // through the last feed-forward an op at a time under that budget is refused with the figures, and running past
    // it is not.
    void theEstimateIsTheMostTheTraceHolds()
    {
        const auto model = loadModel("tiny-bytes");
        Input input;
        for (int t = 0; t < 1100; ++t)
            input.tokens.push_back(32 + (t * 7) % 90);
        const auto bytes = [](const std::vector<OpOutput> &outputs) {
            size_t sum = 0;
            for (const OpOutput &o : outputs)
                sum += size_t(Tensor::count(o.shape)) * sizeof(float);
            return sum;
        };
        for (auto keeping : {EngineOptions::Checkpoints::Always, EngineOptions::Checkpoints::InputOnly}) {
            Engine engine(model, input, options(keeping));
            QVERIFY(engine.checkpointed());
            size_t most = 0, largestOp = 0;
            QVERIFY(engine.runToEnd([&](int, int) {
                most = std::max(most, engine.trace().bytes());
                return true;
            }));
            for (const Op &op : engine.program().ops)
                largestOp = std::max(largestOp, bytes(op.outputs));
            const size_t estimate = engine.estimatedTraceBytes();
            QVERIFY2(most <= estimate && estimate <= most + largestOp,
                qPrintable(QString("%1 ≤ %2 ≤ %1 + %3").arg(most).arg(estimate).arg(largestOp)));
        }
        EngineOptions tight = options(EngineOptions::Checkpoints::InputOnly);
        const Program inputs
            = Program::build(model->config, input, true, 1, AttentionTrace::OnDemand, BlockKeeping::Input);
        tight.memoryBudget = inputs.tracedBytes();
        size_t kept = 0;
        for (const Op &op : inputs.ops)
            for (const OpOutput &o : op.outputs)
                kept += o.kept ? bytes({o}) : 0;
        const size_t activation = input.tokens.size() * size_t(model->config.dFF) * sizeof(float);
        QVERIFY2(tight.memoryBudget < kept + activation,
            qPrintable(QString("%1 < %2 + %3").arg(tight.memoryBudget).arg(kept).arg(activation)));
        Engine stepped(model, input, tight);
        const QString error = errorFrom([&] { stepped.runTo(stepped.program().producerOf("layer.1.mlp.down")); });
        QVERIFY2(error.startsWith("stepping through layer.1.") && error.contains("one operation at a time")
                && error.contains("over the trace memory budget") && error.contains("run past the feed-forward"),
            qPrintable(error));
        Engine ran(model, input, tight);
        QVERIFY(ran.runToEnd());
        QVERIFY(ran.trace().bytes() <= tight.memoryBudget);
    }

    // On a run keeping block inputs, a view that reads attention asks for the scored queries and keys of the layers
    // it shows: the spec's layer, or every layer for All heads and Rollout; on a run keeping checkpoints, nothing.
    void theViewsAskForTheQueriesAndKeysOfTheLayersTheyRead()
    {
        const auto model = load("llama_tiny");
        const ModelConfig &c = model->config;
        const auto asked = [&](EngineOptions::Checkpoints keep, const std::string &view) {
            Engine engine(model, twelveTokens(), options(keep));
            engine.runToEnd();
            ViewSpec spec;
            spec.view = view;
            spec.layer = 1;
            return recomputedForSpec(spec, c, engine.program(), engine.trace());
        };
        const auto contains = [](const std::vector<std::string> &names, const std::vector<std::string> &wanted) {
            return std::ranges::all_of(wanted, [&](const std::string &n) { return std::ranges::count(names, n) == 1; });
        };
        for (const char *view : {"attention", "mask", "lines", "positions", "qk-norm"}) {
            const std::vector<std::string> names = asked(EngineOptions::Checkpoints::InputOnly, view);
            QVERIFY2(contains(names, readoutInputs(c, 1)) && !contains(names, readoutInputs(c, 0)), view);
            QVERIFY2(!contains(asked(EngineOptions::Checkpoints::Always, view), readoutInputs(c, 1)), view);
        }
        for (const char *view : {"heads", "rollout"})
            for (int l = 0; l < c.layers; ++l)
                QVERIFY2(contains(asked(EngineOptions::Checkpoints::InputOnly, view), readoutInputs(c, l)), view);
        QVERIFY(asked(EngineOptions::Checkpoints::InputOnly, "next-token").empty());
        Engine engine(model, twelveTokens(), options(EngineOptions::Checkpoints::InputOnly));
        engine.runToEnd();
        ViewSpec heads; // Compare Two Runs head by head reads every layer's heads of run A
        heads.view = "attention";
        heads.compare = "heads";
        heads.compareModel = "gemma2_tiny";
        const std::vector<std::string> names = recomputedForSpec(heads, c, engine.program(), engine.trace());
        for (int l = 0; l < c.layers; ++l)
            QVERIFY(contains(names, readoutInputs(c, l)));
    }

    // Stepping back over an op puts back the inputs it was the last to read, so stepping forward again makes the same
    // tensors: back to the start and forward to the end gives the first run's trace.
    void steppingBackRecomputesWhatTheStepFreed()
    {
        for (const auto &[name, keep] : {std::pair {"llama_tiny", EngineOptions::Checkpoints::Always},
                 {"gemma2_tiny", EngineOptions::Checkpoints::Always},
                 {"llama_tiny", EngineOptions::Checkpoints::InputOnly}}) {
            const auto model = load(name);
            Engine engine(model, twelveTokens(), options(keep));
            QVERIFY(engine.runToEnd());
            const Trace first = engine.trace();
            const int end = engine.cursor();
            for (int cursor = end - 1; cursor >= 0; --cursor) {
                engine.back();
                for (const std::string &in : engine.program().ops[size_t(cursor)].inputs)
                    QVERIFY2(engine.trace().contains(in),
                        qPrintable(QString("%1: %2 before op %3").arg(name, QString::fromStdString(in)).arg(cursor)));
            }
            QVERIFY(engine.runToEnd());
            QCOMPARE(engine.trace().entries().size(), first.entries().size());
            for (const TraceEntry &e : first.entries())
                QVERIFY2(sameBits(engine.trace().tensor(e.name), e.tensor), qPrintable(QString::fromStdString(e.name)));
        }
    }

    // Automatic: checkpoints only when the trace with attention on demand is over the budget, and a refusal that says
    // what was tried when even they are.
    void checkpointsAreKeptOnlyWhenAttentionOnDemandIsOverTheBudget()
    {
        const auto model = load("llama_tiny");
        const Input input = twelveTokens();
        const size_t onDemand = Program::build(model->config, input, true, 1, AttentionTrace::OnDemand).tracedBytes(),
                     checkpoints
            = Program::build(model->config, input, true, 1, AttentionTrace::OnDemand, BlockKeeping::Checkpoints)
                  .tracedBytes(),
                     inputs
            = Program::build(model->config, input, true, 1, AttentionTrace::OnDemand, BlockKeeping::Input)
                  .tracedBytes();
        QVERIFY2(checkpoints < onDemand, qPrintable(QString("%1 < %2").arg(checkpoints).arg(onDemand)));
        EngineOptions automatic;
        automatic.memoryBudget = onDemand;
        QVERIFY(!Engine(model, input, automatic).checkpointed());
        automatic.memoryBudget = onDemand - 1;
        const Engine fitted(model, input, automatic);
        QVERIFY(fitted.checkpointed());
        QCOMPARE(fitted.attentionTrace(), AttentionTrace::OnDemand);
        QCOMPARE(fitted.estimatedTraceBytes(), checkpoints);
        QVERIFY(fitted.wholeTraceBytes() > onDemand);
        QCOMPARE(fitted.blockKeeping(), BlockKeeping::Checkpoints);
        QVERIFY2(inputs < checkpoints, qPrintable(QString("%1 < %2").arg(inputs).arg(checkpoints)));
        automatic.memoryBudget = checkpoints - 1;
        const Engine leanest(model, input, automatic);
        QCOMPARE(leanest.blockKeeping(), BlockKeeping::Input);
        QCOMPARE(leanest.estimatedTraceBytes(), inputs);
        automatic.memoryBudget = inputs - 1;
        const QString error = errorFrom([&] { Engine(model, input, automatic); });
        QVERIFY2(error.contains("keeping only each block's input"), qPrintable(error));
        automatic.checkpoints = EngineOptions::Checkpoints::Always;
        automatic.memoryBudget = checkpoints - 1;
        QVERIFY(errorFrom([&] { Engine(model, input, automatic); }).contains("keeping only each block's checkpoints"));
        EngineOptions never = automatic;
        never.checkpoints = EngineOptions::Checkpoints::Never;
        never.memoryBudget = onDemand - 1;
        QVERIFY(errorFrom([&] { Engine(model, input, never); }).contains("with its attention and logits computed"));
        QVERIFY(errorFrom([&] {
            Program::build(model->config, input, true, 1, AttentionTrace::Whole, BlockKeeping::Input);
        }).contains("keeps attention on demand"));
    }
};

QTEST_GUILESS_MAIN(TestRecompute)
#include "tst_recompute.moc"
