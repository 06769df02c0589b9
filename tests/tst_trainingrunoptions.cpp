// A training run's options (src/core/train/trainingrunoptions.h): one table that `train`, lessons' train actions and
// the Train panel read. Each option takes its whole range and refuses past it by name; an option that only sets
// up another is refused alone; a lesson's train action takes every option but the lesson's own steps and seed.

#include "errortesting.h"
#include "lesson/lesson.h"
#include "testbundle.h"
#include "train/memorystrategy.h"
#include "train/task.h"
#include "train/trainingsetup.h"
#include "util/memorycheck.h"
#include "util/parallel.h"

#include <QTest>

#include <cmath>
#include <random>
#include <tuple>

using namespace atlas;
using testing::errorFrom;

namespace {

// A value just outside [low, high] on the `above` side, as the option's text.
std::string beyond(const TrainingRunOption &o, bool above)
{
    if (o.kind == TrainingRunOption::Kind::Integer)
        return std::to_string(static_cast<long long>(above ? o.high : o.low) + (above ? 1 : -1));
    const double edge = above ? o.high : o.low;
    return std::to_string(above ? edge * 1.5 + 1 : (edge > 0 ? edge / 2 : -1.0));
}

std::string asText(double value, TrainingRunOption::Kind kind)
{
    if (kind == TrainingRunOption::Kind::Integer)
        return std::to_string(static_cast<long long>(value));
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

} // namespace

class TestTrainingRunOptions : public QObject
{
    Q_OBJECT

private slots:
    // Every option with a range takes both ends and refuses just past each, naming where it was given; the value set
    // is the one the run reads back.
    void everyOptionTakesItsRangeAndNothingPastIt()
    {
        QVERIFY(trainingRunOptions().size() >= 20);
        for (const TrainingRunOption &o : trainingRunOptions()) {
            const std::string where = "option --" + o.name;
            QVERIFY2(!o.help.empty() && o.text, o.name.c_str());
            if (o.kind == TrainingRunOption::Kind::Flag) {
                QVERIFY2(o.valueName.empty(), o.name.c_str());
                TrainingRun run;
                setTrainingRunOption(run, o.name, "", where);
                QCOMPARE(o.text(run), std::string("true"));
                QVERIFY(isTrainingRunOptionSet(run, o));
                setTrainingRunOption(run, o.name, "false", where);
                QVERIFY(!isTrainingRunOptionSet(run, o));
                QCOMPARE(errorFrom([&] { setTrainingRunOption(run, o.name, "maybe", where); }),
                    QString::fromStdString(where + ": 'maybe' is not true or false"));
                continue;
            }
            QVERIFY2(!o.valueName.empty(), o.name.c_str());
            if (o.kind == TrainingRunOption::Kind::Text)
                continue; // below, one by one
            QVERIFY2(o.low <= o.high, o.name.c_str());
            for (const double edge : {o.low, o.high}) {
                TrainingRun run;
                setTrainingRunOption(run, o.name, asText(edge, o.kind), where);
                QVERIFY2(std::abs(std::stod(o.text(run)) - edge) <= 1e-6 * std::max(1.0, std::abs(edge)),
                    (o.name + " read back as " + o.text(run)).c_str());
            }
            for (const bool above : {false, true}) {
                TrainingRun run;
                const QString e = errorFrom([&] { setTrainingRunOption(run, o.name, beyond(o, above), where); });
                QVERIFY2(e.startsWith(QString::fromStdString(where + ": ")) && e.contains("out of range"),
                    qPrintable(QString::fromStdString(o.name) + ": " + e));
            }
            TrainingRun run;
            QVERIFY2(errorFrom([&] {
                setTrainingRunOption(run, o.name, "many", where);
            }).startsWith(QString::fromStdString(where + ": ")),
                o.name.c_str());
        }
    }

    // The options of text are checked by their setters, with the place in the message.
    void textOptionsAreCheckedByName()
    {
        TrainingRun run;
        setTrainingRunOption(run, "family", "llama", "train: family");
        QCOMPARE(run.family, std::string("llama"));
        setTrainingRunOption(run, "family", "gpt2", "train: family");
        QVERIFY(run.family.empty()); // GPT-2's layout is the default
        QCOMPARE(errorFrom([&] { setTrainingRunOption(run, "family", "t5", "train: family"); }),
            QString("train: family: 't5' cannot be trained here (gpt2, llama, qwen3, olmo2, gemma2, smollm3, phi3, "
                    "gpt_oss, bert)"));
        setTrainingRunOption(run, "positions", "alibi", "p");
        QCOMPARE(run.positions, std::string("alibi"));
        QVERIFY(!errorFrom([&] { setTrainingRunOption(run, "positions", "spiral", "option --positions"); }).isEmpty());
        setTrainingRunOption(run, "normaliser", "entmax", "n");
        QCOMPARE(run.normaliser, std::string("entmax"));
        setTrainingRunOption(run, "funnel", "2,2", "f");
        QCOMPARE(run.funnelBlocks, (std::vector<int> {2, 2}));
        QCOMPARE(findTrainingRunOption("funnel")->text(run), std::string("2,2"));
        QCOMPARE(errorFrom([&] { setTrainingRunOption(run, "colour", "red", "option --colour"); }),
            QString("option --colour: not an option of a training run"));
    }

    // An option that only sets up another (its `needs`) is refused without it, naming both; with it, it is not.
    void anOptionThatSetsUpAnotherNeedsIt()
    {
        int needing = 0;
        for (const TrainingRunOption &o : trainingRunOptions()) {
            if (o.needs.empty())
                continue;
            ++needing;
            const size_t eq = o.needs.find('=');
            const TrainingRunOption *needed = findTrainingRunOption(o.needs.substr(0, eq));
            QVERIFY2(needed, o.needs.c_str());
            // A value other than the default, inside the range.
            const std::string value = o.kind == TrainingRunOption::Kind::Flag ? "true"
                : o.kind == TrainingRunOption::Kind::Integer                  ? asText(o.low + 1, o.kind)
                                                                              : asText(o.high / 2, o.kind);
            TrainingRun run;
            setTrainingRunOption(run, o.name, value, "t");
            QVERIFY2(isTrainingRunOptionSet(run, o), o.name.c_str());
            const QString e = errorFrom([&] { checkTrainingRunOptionsNeeded(run); });
            QVERIFY2(e.startsWith(QString::fromStdString(o.name)) && e.contains(QString::fromStdString(needed->name)),
                qPrintable(e));
            if (eq != std::string::npos) { // each value it accepts will do
                std::string values = o.needs.substr(eq + 1) + "|";
                for (size_t bar; (bar = values.find('|')) != std::string::npos; values.erase(0, bar + 1)) {
                    setTrainingRunOption(run, needed->name, values.substr(0, bar), "t");
                    QCOMPARE(errorFrom([&] { checkTrainingRunOptionsNeeded(run); }), QString());
                }
                continue;
            }
            setTrainingRunOption(run, needed->name,
                needed->kind == TrainingRunOption::Kind::Text       ? "2,2"
                    : needed->kind == TrainingRunOption::Kind::Flag ? "true"
                                                                    : "2",
                "t");
            QCOMPARE(errorFrom([&] { checkTrainingRunOptionsNeeded(run); }), QString());
        }
        QVERIFY(needing >= 5);
        TrainingRun both;
        setTrainingRunOption(both, "span-penalty", "0.1", "t");
        setTrainingRunOption(both, "span-init", "1", "t");
        QCOMPARE(errorFrom([&] { trainingModelConfig(both); }),
            QString("span-penalty and span-init need adaptive-span: give adaptive-span R too"));
    }

    // train --family qwen3 | olmo2: the Llama layout with QK-norm on each head, or with the norms after the sub-layers
    // and QK-norm over the projections; the config.json the model is saved with reads back as the same layout.
    void qwen3AndOlmo2LayoutsTrain()
    {
        using Layout = std::tuple<const char *, QkNorm, LayerNormPlacement>;
        for (const auto &[family, qkNorm, placement] : {Layout {"qwen3", QkNorm::Heads, LayerNormPlacement::Pre},
                 Layout {"olmo2", QkNorm::Projections, LayerNormPlacement::AfterSublayer}}) {
            TrainingRun run;
            run.task = "reverse";
            setTrainingRunOption(run, "family", family, "train: family");
            const ModelConfig c = trainingModelConfig(run);
            QCOMPARE(c.modelType, std::string(family));
            QVERIFY(c.qkNorm == qkNorm);
            QVERIFY(c.layerNorm == placement);
            const ModelConfig again = ModelConfig::fromJson(c.toJson(), "again");
            QVERIFY(again.qkNorm == qkNorm && again.layerNorm == placement);
            QCOMPARE(again.toJson(), c.toJson());
            setTrainingRunOption(run, "positions", "alibi", "train: positions");
            QVERIFY(errorFrom([&] { trainingModelConfig(run); }).contains("QK-norm"));
        }
    }

    // train --family gemma2 | smollm3: Gemma 2's sandwich of (1 + γ) norms, soft-caps, √d embedding, GeGLU, tied head
    // and a window of half the context on the even layers; SmolLM3's NoPE on every fourth layer. Both read back as
    // saved.
    void gemma2AndSmolLM3LayoutsTrain()
    {
        TrainingRun run;
        run.task = "reverse";
        setTrainingRunOption(run, "family", "gemma2", "train: family");
        setTrainingRunOption(run, "layers", "3", "train: layers");
        const ModelConfig gemma = trainingModelConfig(run);
        QVERIFY(gemma.layerNorm == LayerNormPlacement::Sandwich && gemma.normAddsOne && gemma.tiedHead);
        QVERIFY(gemma.activation == Activation::GeluTanh && gemma.gatedFfn);
        QCOMPARE(gemma.attentionSoftcap, 50.0f);
        QCOMPARE(gemma.logitSoftcap, 30.0f);
        QCOMPARE(gemma.queryScaleBase, float(gemma.headDim()));
        QCOMPARE(gemma.slidingWindow, gemma.context / 2);
        QCOMPARE(gemma.windowedLayers, (std::vector<int> {0, 2}));
        const ModelConfig gemmaAgain = ModelConfig::fromJson(gemma.toJson(), "again");
        QCOMPARE(gemmaAgain.toJson(), gemma.toJson());
        QCOMPARE(gemmaAgain.embeddingScale, gemma.embeddingScale);
        QCOMPARE(gemmaAgain.windowedLayers, gemma.windowedLayers);

        setTrainingRunOption(run, "family", "smollm3", "train: family");
        setTrainingRunOption(run, "layers", "8", "train: layers");
        const ModelConfig smol = trainingModelConfig(run);
        QCOMPARE(smol.noRopeLayers, (std::vector<int> {3, 7}));
        QCOMPARE(ModelConfig::fromJson(smol.toJson(), "again").noRopeLayers, smol.noRopeLayers);
        setTrainingRunOption(run, "positions", "learned", "train: positions");
        QVERIFY(errorFrom([&] { trainingModelConfig(run); }).contains("family smollm3"));
    }

    // A context sets the windows of the novel's tasks and the positions table; Gemma 2's window follows it; the tasks
    // whose examples have lengths of their own refuse it by name.
    void aContextLengthensTheNovelsWindows()
    {
        TrainingRun run;
        run.task = "chars";
        setTrainingRunOption(run, "context", "256", "train: context");
        setTrainingRunOption(run, "family", "gemma2", "train: family");
        const ModelConfig chars = trainingModelConfig(run);
        QCOMPARE(chars.context, 256);
        QCOMPARE(chars.slidingWindow, 128);
        QCOMPARE(chars.sample.size(), size_t(256));
        std::mt19937_64 rng(1);
        const Example example = Task::create("chars", chars.context)->sample(rng, false);
        QCOMPARE(example.tokens.size(), size_t(256));
        QCOMPARE(example.targets.size(), size_t(256));
        QCOMPARE(Task::create("chars")->sample(rng, true).tokens.size(), size_t(128)); // the task's own
        QCOMPARE(Task::create("words", 200)->sample(rng, false).tokens.size(), size_t(200));
        QVERIFY(Task::create("words", 200)->takesContext() && !Task::create("reverse", 200)->takesContext());
        run.task = "reverse";
        run.family.clear();
        QVERIFY2(errorFrom([&] { trainingModelConfig(run); }).contains("task reverse have lengths of their own"),
            qPrintable(errorFrom([&] { trainingModelConfig(run); })));
        QVERIFY(errorFrom([&] { setTrainingRunOption(run, "context", "32", "train: context"); }).contains("64"));
    }

    // mlm's windows follow the context too; a words context longer than the held-out part of the novel is refused
    // when the task is made, and a batch whose sequences in flight need more than the machine holds is refused with
    // the figure: at 16384 characters the probabilities alone of two sequences are 17 GB, and the check of one
    // sequence's activations had passed a 24 GiB machine, whose run was then killed.
    void aLongContextIsRefusedBeforeTraining()
    {
        QCOMPARE(Task::create("mlm", 256)->modelConfig().context, 256);
        std::mt19937_64 rng(1);
        QCOMPARE(Task::create("mlm", 256)->sample(rng, false).tokens.size(), size_t(256));
        QVERIFY2(errorFrom([] { Task::create("words", 1 << 20); }).contains("held-out part of the novel"),
            qPrintable(errorFrom([] { Task::create("words", 1 << 20); })));
        TrainingRun run;
        run.task = "chars";
        run.context = 16384;
        run.options.batch = 4;
        const QString refusal = errorFrom([&] { trainingModelConfig(run, false); });
        run.context = 0;
        ModelConfig shape = trainingModelConfig(run, false);
        shape.context = 16384;
        const double one = estimatedTrainingStepBytes(shape, 16384, {}, 16384),
                     batch = estimatedTrainingBatchBytes(shape, 16384, 4, {}, 16384);
        const double inFlight = std::min(4, workerThreads()), probabilities = 4.0 * 4 * 16384.0 * 16384 * 4;
        QVERIFY(batch >= inFlight * (one + probabilities / 2) - 1);
        QCOMPARE(refusal.isEmpty(), overMachineMemory(batch).empty());
        if (!refusal.isEmpty())
            QVERIFY2(refusal.contains("on 16384 tokens a sequence needs about"), qPrintable(refusal));
    }

    // gpt-oss's layout: sinks, biases, the window on the even layers, 4 stacked clamped experts (2 per token) unless
    // asked for others; it reads back as itself.
    void gptOssLayoutTrains()
    {
        TrainingRun run;
        run.task = "reverse";
        setTrainingRunOption(run, "family", "gpt_oss", "train: family");
        setTrainingRunOption(run, "layers", "3", "train: layers");
        const ModelConfig oss = trainingModelConfig(run);
        QVERIFY(oss.attentionSinks && oss.stacksExperts() && oss.droplessRouting && oss.qkvBias && oss.mlpBias);
        QVERIFY(oss.activation == Activation::QuickGelu && oss.gluClamp == 7.0f);
        QCOMPARE(oss.experts, 4);
        QCOMPARE(oss.expertTopK, 2);
        QCOMPARE(oss.windowedLayers, (std::vector<int> {0, 2}));
        const ModelConfig again = ModelConfig::fromJson(oss.toJson(), "again");
        QCOMPARE(again.toJson(), oss.toJson());
        setTrainingRunOption(run, "experts", "8", "train: experts");
        setTrainingRunOption(run, "expert-top-k", "3", "train: expert-top-k");
        const ModelConfig wider = trainingModelConfig(run);
        QCOMPARE(wider.experts, 8);
        QCOMPARE(wider.expertTopK, 3);
    }

    // train --family phi3: Phi-3's fused qkv_proj and gate_up_proj, RoPE on three quarters of each head (Phi-4-mini's
    // partial_rotary_factor), written back as a phi3 config.json; positions other than RoPE refused by name.
    void phi3LayoutTrains()
    {
        TrainingRun run;
        run.task = "reverse";
        setTrainingRunOption(run, "family", "phi3", "train: family");
        setTrainingRunOption(run, "kv-heads", "2", "train: kv-heads");
        const ModelConfig phi = trainingModelConfig(run);
        QCOMPARE(QString::fromStdString(phi.modelType), QString("phi3"));
        QVERIFY(phi.fusesProjections() && phi.gatedFfn && !phi.qkvBias);
        QCOMPARE(phi.rotatedDims(), 3 * phi.headDim() / 4 / 2 * 2);
        QVERIFY(phi.rotatedDims() < phi.headDim());
        QCOMPARE(phi.kvHeadCount(), 2);
        const ModelConfig again = ModelConfig::fromJson(phi.toJson(), "again");
        QCOMPARE(again.toJson(), phi.toJson());
        setTrainingRunOption(run, "positions", "alibi", "train: positions");
        QVERIFY(errorFrom([&] { trainingModelConfig(run); }).contains("family phi3"));
    }

    // A lesson's train action takes the run's options as `train` does (lr, batch, warm-up …), checked by the same
    // table; its steps and seed stay the lesson's own (a run in class: at most 100 000 steps).
    void aLessonTakesTheRunsOptions()
    {
        const std::string lesson
            = "---\ntitle: T\nlecture: L\nminutes: 5\nmodels: [reverse]\n---\n\n## One\n\nText.\n\n```view\n"
              "{\"view\": \"attention\", \"model\": \"reverse\"}\n```\n\n```actions\ntrain copy "
              "steps=40 seed=3 lr=0.01 batch=4 warmup=2 weight-decay=0.2 layers=3\n```\n";
        const LessonAction a = parseLesson(lesson, "l.md").steps[0].actions[0];
        const TrainingRun run = lessonTrainingRun(a);
        QCOMPARE(run.task, std::string("copy"));
        QCOMPARE(run.options.steps, 40);
        QCOMPARE(run.options.seed, uint64_t(3));
        QCOMPARE(run.options.learningRate, 0.01f);
        QCOMPARE(run.options.batch, 4);
        QCOMPARE(run.options.warmupSteps, 2);
        QCOMPARE(run.options.weightDecay, 0.2f);
        QCOMPARE(run.layers, 3);
        std::string tooLarge = lesson;
        tooLarge.replace(tooLarge.find("lr=0.01"), 7, "lr=1000");
        QVERIFY(errorFrom([&] { parseLesson(tooLarge, "l.md"); }).contains("train: lr: 1000 is out of range"));
        std::string heavy = lesson; // a run in class: at most 1 600 000 examples (100 000 steps of the default 16)
        heavy.replace(heavy.find("steps=40"), 8, "steps=100000");
        heavy.replace(heavy.find("batch=4"), 7, "batch=1024");
        QVERIFY(errorFrom([&] {
            parseLesson(heavy, "l.md");
        }).contains("train: 100000 steps of 1024 examples is more than a lesson's run trains"));
        std::string described = lesson;
        described.replace(described.find("lr=0.01"), 7, "description=mine");
        QVERIFY(errorFrom([&] { parseLesson(described, "l.md"); }).contains("unknown option 'description'"));
    }
};

QTEST_GUILESS_MAIN(TestTrainingRunOptions)
#include "tst_trainingrunoptions.moc"
