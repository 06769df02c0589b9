// The command line as a user runs it: dump and render write the files they promise, errors exit non-zero
// with a message naming the problem.
#include "clitesting.h"
#include "commands.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "model/model.h"
#include "testbundle.h"
#include "train/checkpointdirectory.h"
#include "util/blasthreads.h"
#include "util/sanitizers.h"

#include <algorithm>
#include <cmath>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <QTest>

#include <map>

class TestCli : public QObject
{
    Q_OBJECT

    using Result = atlas::testing::CliResult;
    static Result run(const QStringList &args) { return atlas::testing::runCli(args); }

private slots:
    // Issue 58: `transformer-atlas DIR` printed "unknown command" and the whole help, and `--model DIR` was ignored.
    // Issue 63: a file manager runs `transformer-atlas PATH` for a GGUF file, a model's config.json, a lesson or a
    // view spec. What the first argument names opens the app on it; a word that is none of them says so in one line.
    void aPathNamedOnTheCommandLineOpensTheApp()
    {
        using Kind = atlas::OpenablePath::Kind;
        const auto asked = [](std::vector<const char *> args) {
            args.insert(args.begin(), "transformer-atlas");
            const atlas::OpenablePath a = atlas::appArgument(int(args.size()), const_cast<char **>(args.data()));
            return std::make_pair(a.kind, a.path);
        };
        using Asked = std::pair<Kind, std::string>;
        QCOMPARE(asked({ATLAS_TEST_DATA "/llama_tiny"}), Asked(Kind::Model, ATLAS_TEST_DATA "/llama_tiny"));
        QCOMPARE(asked({ATLAS_TEST_DATA "/llama_tiny/config.json"}), Asked(Kind::Model, ATLAS_TEST_DATA "/llama_tiny"));
        QCOMPARE(asked({"austen"}), Asked(Kind::Model, "austen"));
        QCOMPARE(asked({"--model", "reverse"}), Asked(Kind::Model, "reverse"));
        QCOMPARE(asked({ATLAS_SOURCE_DIR "/lessons/03-masks.md"}),
            Asked(Kind::Lesson, ATLAS_SOURCE_DIR "/lessons/03-masks.md"));
        const char *spec = ATLAS_SOURCE_DIR "/tests/fuzz/corpus/viewspec/lsh.json";
        QCOMPARE(asked({spec}), Asked(Kind::ViewSpec, spec));
        QCOMPARE(asked({"dump", "--model", "reverse"}), Asked(Kind::None, ""));
        QCOMPARE(asked({ATLAS_SOURCE_DIR "/README"}), Asked(Kind::None, "")); // no such file
        QCOMPARE(asked({}), Asked(Kind::None, ""));
        for (const char *path : {ATLAS_TEST_DATA "/llama_tiny", ATLAS_SOURCE_DIR "/lessons/03-masks.md", spec}) {
            std::vector<const char *> args = {"transformer-atlas", path};
            QCOMPARE(atlas::runCommandLine(int(args.size()), const_cast<char **>(args.data())), -1); // the app
        }
        const Result unknown = run({"/no/such/model"});
        QCOMPARE(unknown.code, 2);
        QVERIFY2(unknown.err.contains("neither a command nor something the app opens") && unknown.err.count('\n') == 1,
            qPrintable(unknown.err));
    }

    // OpenBLAS reads how long its threads spin as it loads, so the program starts itself again with it set
    // (util/blasthreads.h): the benchmarks say what they ran with.
    void theProgramRunsWithOpenBlasThreadsSpinningBriefly()
    {
#if defined(ATLAS_ADDRESS_SANITIZER) || !defined(ATLAS_OPENBLAS)
        QSKIP("not restarted under the address sanitizer, and no OpenBLAS in the Eigen build");
#endif
        if (qEnvironmentVariableIsSet("OPENBLAS_THREAD_TIMEOUT"))
            QSKIP("the user's OPENBLAS_THREAD_TIMEOUT stays");
        const Result r = run({"bench-attention", "--kernel", "strided", "--length", "256", "--repeat", "1"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(QString("threads spin 2^%1 cycles)").arg(atlas::kBlasSpinExponent)), qPrintable(r.out));
        // This test's own process was not restarted: where OpenBLAS fell back to kernels without AVX2 on a processor
        // with them, the program runs the better ones.
        if (const char *kernels = atlas::betterBlasKernels();
            kernels && !qEnvironmentVariableIsSet("OPENBLAS_CORETYPE"))
            QVERIFY2(r.out.contains(QString("(%1 kernels").arg(kernels)), qPrintable(r.out));
    }

    void dumpWritesEveryTensorAndAManifest()
    {
        QTemporaryDir dir;
        const auto r
            = run({"dump", "--model", ATLAS_TEST_DATA "/gpt2_tiny", "--tokens", "3,17,42,8", "--out", dir.path()});
        QCOMPARE(r.code, 0);
        QFile f(dir.filePath("manifest.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject manifest = QJsonDocument::fromJson(f.readAll()).object();
        const QJsonArray tensors = manifest["tensors"].toArray();
        QCOMPARE(tensors.size(), 3 + 2 * (17 + 1) + 3); // embeddings, 17 per layer + its derived mask, head
        // gpt2_tiny has no tokenizer files: its pieces are the ids
        QCOMPARE(manifest["pieces"].toArray(), QJsonArray({"#3", "#17", "#42", "#8"}));
        for (const auto &t : tensors) {
            const QString name = t.toObject()["name"].toString();
            QVERIFY2(QFile::exists(dir.filePath(name + ".npy")), qPrintable(name));
            QVERIFY(!t.toObject()["formula"].toString().isEmpty());
        }
        const atlas::Tensor probs = atlas::readNpy(dir.filePath("layer.1.attn.probs.npy").toStdString());
        QCOMPARE(probs.shape(), (atlas::Shape {4, 4, 4}));
        QCOMPARE(atlas::readNpy(dir.filePath("logits.npy").toStdString()).shape(), (atlas::Shape {4, 50}));
        QCOMPARE(atlas::readNpy(dir.filePath("layer.0.attn.q.npy").toStdString()).shape(), (atlas::Shape {4, 4, 8}));
        QCOMPARE(atlas::readNpy(dir.filePath("layer.1.out.npy").toStdString()).shape(), (atlas::Shape {4, 32}));
        const atlas::Tensor mask = atlas::readNpy(dir.filePath("layer.0.attn.mask.npy").toStdString());
        const atlas::Tensor masked = atlas::readNpy(dir.filePath("layer.0.attn.masked.npy").toStdString());
        QCOMPARE(mask.shape(), (atlas::Shape {4, 4, 4}));
        for (int64_t i = 0; i < mask.numel(); ++i)
            QCOMPARE(mask.data()[i], std::isfinite(masked.data()[i]) ? 1.0f : 0.0f);
        QCOMPARE(mask.data()[1], 0.0f); // query 0 may not attend key 1 (causal)
    }

    // new-model writes its config and weights as one set: over its own earlier output it replaces both, leaving no
    // staging directory; a directory holding other files (a downloaded checkpoint's vocab.json) is refused untouched.
    void newModelWritesItsFilesAsASet()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("m");
        QCOMPARE(run({"new-model", "--out", out, "--layers", "1", "--d-model", "32", "--seed", "1"}).code, 0);
        const auto first = atlas::Model::load(out.toStdString());
        QCOMPARE(run({"new-model", "--out", out, "--layers", "2", "--d-model", "32", "--seed", "2"}).code, 0);
        QCOMPARE(atlas::Model::load(out.toStdString()).config.layers, 2);
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).size(), 1);
        QFile other(dir.filePath("m/vocab.json"));
        QVERIFY(other.open(QIODevice::WriteOnly));
        other.write("{}");
        other.close();
        const auto refused = run({"new-model", "--out", out, "--layers", "1", "--d-model", "32"});
        QVERIFY(refused.code != 0);
        QVERIFY2(refused.err.contains("vocab.json"), qPrintable(refused.err));
        QCOMPARE(atlas::Model::load(out.toStdString()).config.layers, 2);
        QVERIFY(first.config.layers == 1);
    }

    // new-model --family writes each family's Hugging Face layout: it loads back as that family, parameter for
    // parameter, with the keys its …ForCausalLM class uses, and runs.
    void newModelWritesEachFamilysLayout_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("key"); // one key of the layout
        QTest::newRow("llama") << "llama"
                               << "model.layers.1.mlp.gate_proj.weight";
        QTest::newRow("qwen2") << "qwen2"
                               << "model.layers.0.self_attn.k_proj.bias";
        QTest::newRow("qwen3") << "qwen3"
                               << "model.layers.1.self_attn.k_norm.weight";
        QTest::newRow("olmo2") << "olmo2"
                               << "model.layers.0.post_feedforward_layernorm.weight";
        QTest::newRow("gemma2") << "gemma2"
                                << "model.layers.1.pre_feedforward_layernorm.weight";
        QTest::newRow("gemma3_text") << "gemma3_text"
                                     << "model.layers.0.self_attn.q_norm.weight";
        QTest::newRow("smollm3") << "smollm3"
                                 << "model.layers.1.self_attn.o_proj.weight";
        QTest::newRow("phi3") << "phi3"
                              << "model.layers.1.mlp.gate_up_proj.weight";
        QTest::newRow("gpt_oss") << "gpt_oss"
                                 << "model.layers.1.mlp.experts.gate_up_proj";
        QTest::newRow("mistral") << "mistral"
                                 << "lm_head.weight";
        QTest::newRow("mixtral") << "mixtral"
                                 << "model.layers.1.block_sparse_moe.experts.2.w3.weight";
        QTest::newRow("qwen3_moe") << "qwen3_moe"
                                   << "model.layers.0.mlp.experts.3.down_proj.weight";
        QTest::newRow("gpt_neox") << "gpt_neox"
                                  << "gpt_neox.layers.0.attention.query_key_value.weight";
        QTest::newRow("gpt_neo") << "gpt_neo"
                                 << "transformer.h.1.attn.attention.out_proj.bias";
        QTest::newRow("t5") << "t5"
                            << "decoder.block.1.layer.1.EncDecAttention.k.weight";
    }
    void newModelWritesEachFamilysLayout()
    {
        QFETCH(QString, family);
        QFETCH(QString, key);
        QTemporaryDir dir;
        const QString out = dir.filePath("m");
        QStringList args = {"new-model", "--family", family, "--out", out, "--layers", "2", "--d-model", "32",
            "--heads", "4", "--vocab", "50"};
        if (family != "gpt_neox" && family != "gpt_neo" && family != "t5") // the others have no grouped K/V heads
            args << "--kv-heads"
                 << "2";
        if (family == "smollm3") // its second layer without RoPE
            args << "--nope-every"
                 << "2";
        if (family == "phi3") // half of each head of 8 turned
            args << "--partial-rotary"
                 << "0.5";
        const auto made = run(args);
        QVERIFY2(made.code == 0, qPrintable(made.err));
        const atlas::Model model = atlas::Model::load(out.toStdString());
        QCOMPARE(QString::fromStdString(model.config.modelType), family);
        if (family == "smollm3")
            QCOMPARE(model.config.noRopeLayers, std::vector<int> {1});
        if (family == "phi3")
            QCOMPARE(model.config.rotaryDims, 4);
        if (family == "mixtral" || family == "qwen3_moe" || family == "gpt_oss")
            QVERIFY(model.config.experts == 4 && model.config.expertTopK == 2 && model.config.isMoeLayer(1));
        QVERIFY(atlas::SafetensorsFile((out + "/model.safetensors").toStdString()).contains(key.toStdString()));
        QStringList dump = {"dump", "--model", out, "--tokens", "1,2,3", "--out", dir.filePath("d")};
        if (family == "t5")
            dump << "--decoder-tokens"
                 << "0,4";
        const auto dumped = run(dump);
        QVERIFY2(dumped.code == 0, qPrintable(dumped.err));
    }

    // dump --objective writes the corruption with the model's own special tokens, and refuses an objective whose
    // tokens the model lacks before running anything.
    void dumpWritesAnObjective()
    {
        QTemporaryDir dir;
        const QString model = dir.filePath("special");
        QDir().mkpath(model);
        QFile::copy(ATLAS_TEST_DATA "/gpt2_tiny/model.safetensors", model + "/model.safetensors");
        QFile in(ATLAS_TEST_DATA "/gpt2_tiny/config.json");
        QVERIFY(in.open(QIODevice::ReadOnly));
        QJsonObject config = QJsonDocument::fromJson(in.readAll()).object();
        config["atlas_special_tokens"] = QJsonObject {{"[MASK]", 45}, {"<extra_id_0>", 46}, {"<extra_id_1>", 47}};
        QFile out(model + "/config.json");
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(config).toJson());
        out.close();
        const QString tokens = "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16";
        QCOMPARE(run({"dump", "--model", model, "--tokens", tokens, "--objective", "mlm", "--seed", "4", "--out",
                         dir.filePath("mlm")})
                     .code,
            0);
        QFile manifestFile(dir.filePath("mlm/manifest.json"));
        QVERIFY(manifestFile.open(QIODevice::ReadOnly));
        const QJsonObject objective = QJsonDocument::fromJson(manifestFile.readAll()).object()["objective"].toObject();
        QCOMPARE(objective["chosen"].toInt(), 2); // round(0.15 · 16)
        const atlas::Tensor input = atlas::readNpy(dir.filePath("mlm/objective.input.npy").toStdString());
        const atlas::Tensor lossMask = atlas::readNpy(dir.filePath("mlm/objective.loss_mask.npy").toStdString());
        QCOMPARE(input.shape(), (atlas::Shape {16}));
        QCOMPARE(lossMask.shape(), (atlas::Shape {16}));
        int masks = 0;
        for (int t = 0; t < 16; ++t)
            masks += input.data()[t] == 45.0f;
        QCOMPARE(masks, objective["masked"].toInt());
        QCOMPARE(atlas::readNpy(dir.filePath("mlm/objective.attention_mask.npy").toStdString()).shape(),
            (atlas::Shape {16, 16}));
        QCOMPARE(
            run({"dump", "--model", model, "--tokens", tokens, "--objective", "span", "--out", dir.filePath("s")}).code,
            0);
        const auto nsp = run({"dump", "--model", "austen-mlm", "--text", "One. Two is here. Three! Four?",
            "--objective", "nsp", "--seed", "2", "--out", dir.filePath("nsp")});
        QVERIFY2(nsp.code == 0, qPrintable(nsp.err));
        const atlas::Tensor segments = atlas::readNpy(dir.filePath("nsp/objective.segments.npy").toStdString());
        QCOMPARE(segments.shape(), atlas::readNpy(dir.filePath("nsp/objective.input.npy").toStdString()).shape());
        QCOMPARE(atlas::readNpy(dir.filePath("nsp/objective.targets.npy").toStdString()).shape(), (atlas::Shape {1}));
        QFile nspManifest(dir.filePath("nsp/manifest.json"));
        QVERIFY(nspManifest.open(QIODevice::ReadOnly));
        QVERIFY(QJsonDocument::fromJson(nspManifest.readAll()).object()["objective"].toObject().contains("is_next"));
        const auto refused = run(
            {"dump", "--model", "reverse", "--text", "abc", "--objective", "mlm", "--out", dir.filePath("refused")});
        QVERIFY(refused.code != 0 && refused.err.contains("no [MASK] token"));
        QVERIFY(!QFile::exists(dir.filePath("refused")));
    }

    // The same weights under another encoding: RoPE writes its rotated q and k, ALiBi its bias; a kind that needs
    // a table the model lacks is refused by name.
    void dumpOverridesThePositions()
    {
        QTemporaryDir dir;
        const QStringList base = {"dump", "--model", ATLAS_TEST_DATA "/gpt2_tiny", "--tokens", "3,17,42,8,5"};
        auto r = run(base + QStringList {"--positions", "rope", "--out", dir.filePath("rope")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(atlas::readNpy(dir.filePath("rope/layer.1.attn.q_rot.npy").toStdString()).shape(),
            (atlas::Shape {4, 5, 8}));
        QVERIFY(QFile::exists(dir.filePath("rope/layer.0.attn.k_rot.npy")));
        QVERIFY(!QFile::exists(dir.filePath("rope/pos.encoding.npy")));
        QFile manifest(dir.filePath("rope/manifest.json"));
        QVERIFY(manifest.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(manifest.readAll()).object()["positions"].toString(), QString("rope"));

        r = run(base + QStringList {"--positions", "alibi", "--out", dir.filePath("alibi")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const atlas::Tensor bias = atlas::readNpy(dir.filePath("alibi/layer.0.attn.bias.npy").toStdString());
        QCOMPARE(bias.shape(), (atlas::Shape {4, 5, 5}));
        QCOMPARE(bias.data()[4 * 5 + 0], -0.25f * 4); // head 0 (slope 2^-2 for 4 heads), query 4, key 0
        r = run(base + QStringList {"--out", dir.filePath("own")});
        QVERIFY(QFile::exists(dir.filePath("own/pos.encoding.npy")));

        r = run(base + QStringList {"--positions", "t5", "--out", dir.filePath("t5")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("--positions t5") && r.err.contains("no learned t5 parameters"), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath("t5")));
    }

    // --heads writes chosen heads' probabilities [T, T], the same whether the trace keeps attention whole or on
    // demand (then recomputed from q, k and attn.lse, which the dump holds instead of the [H, T, T] tensors).
    void dumpWritesChosenHeadsFromAWholeOrOnDemandTrace()
    {
        QTemporaryDir dir;
        const QStringList base
            = {"dump", "--model", ATLAS_TEST_DATA "/gemma2_tiny", "--tokens", "3,17,42,8,5,9,1", "--heads", "1.*,0.2"};
        auto r = run(base + QStringList {"--out", dir.filePath("whole")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = run(base + QStringList {"--attention-trace", "on-demand", "--out", dir.filePath("lazy")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(QFile::exists(dir.filePath("whole/layer.1.attn.probs.npy")));
        QVERIFY(!QFile::exists(dir.filePath("lazy/layer.1.attn.probs.npy")));
        QCOMPARE(
            atlas::readNpy(dir.filePath("lazy/layer.1.attn.lse.npy").toStdString()).shape(), (atlas::Shape {4, 7}));
        const atlas::Tensor all = atlas::readNpy(dir.filePath("whole/layer.1.attn.probs.npy").toStdString());
        for (const char *name : {"layer.1.attn.probs.head0", "layer.1.attn.probs.head3", "layer.0.attn.probs.head2"}) {
            const atlas::Tensor a = atlas::readNpy(dir.filePath(QString("whole/%1.npy").arg(name)).toStdString()),
                                b = atlas::readNpy(dir.filePath(QString("lazy/%1.npy").arg(name)).toStdString());
            QCOMPARE(b.shape(), (atlas::Shape {7, 7}));
            for (int64_t i = 0; i < a.numel(); ++i)
                QVERIFY2(std::abs(a.data()[i] - b.data()[i]) < 1e-6f, name);
        }
        const atlas::Tensor head3 = atlas::readNpy(dir.filePath("whole/layer.1.attn.probs.head3.npy").toStdString());
        QVERIFY(std::equal(head3.data(), head3.data() + 49, all.slice(3).data()));
        QFile manifest(dir.filePath("lazy/manifest.json"));
        QVERIFY(manifest.open(QIODevice::ReadOnly));
        QCOMPARE(
            QJsonDocument::fromJson(manifest.readAll()).object()["attention_trace"].toString(), QString("on demand"));
        // no [T, V] tensor on demand: the last position's logits, computed from the last stream
        QVERIFY(!QFile::exists(dir.filePath("lazy/logits.npy")) && !QFile::exists(dir.filePath("whole/logits.at.npy")));
        const atlas::Tensor logits = atlas::readNpy(dir.filePath("whole/logits.npy").toStdString()),
                            last = atlas::readNpy(dir.filePath("lazy/logits.at.npy").toStdString());
        QCOMPARE(last.shape(), (atlas::Shape {1, logits.dim(1)}));
        for (int64_t v = 0; v < logits.dim(1); ++v)
            QVERIFY(std::abs(last.data()[v] - logits.data()[6 * logits.dim(1) + v]) < 1e-5f);

        r = run(QStringList {"dump", "--model", ATLAS_TEST_DATA "/gemma2_tiny", "--tokens", "3,17", "--heads", "9.*",
            "--out", dir.filePath("bad")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("--heads: head 9.* is not in the model"), qPrintable(r.err));
        r = run(QStringList {"dump", "--model", ATLAS_TEST_DATA "/gemma2_tiny", "--tokens", "3,17", "--logits-at",
            "0,2", "--out", dir.filePath("bad")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("--logits-at: position 2 is outside the input's 2 tokens"), qPrintable(r.err));
        r = run(QStringList {"dump", "--model", ATLAS_TEST_DATA "/bert_rel_tiny", "--tokens", "3,17",
            "--attention-trace", "on-demand", "--out", dir.filePath("bad")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("cannot be computed on demand (layer 0: shaw"), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath("bad")));
    }

    // The router's tensors, with the capacity the factor gives: ⌈0.5 · 12 / 4⌉ = 2 tokens per expert.
    void dumpWritesTheRouterAtAChosenCapacity()
    {
        QTemporaryDir dir;
        const QStringList base
            = {"dump", "--model", ATLAS_TEST_DATA "/moe/switch", "--tokens", "3,17,22,8,0,25,29,11,5,14,3,9"};
        auto r = run(base + QStringList {"--capacity-factor", "0.5", "--out", dir.filePath("half")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto npy
            = [&](const QString &name) { return atlas::readNpy(dir.filePath("half/" + name).toStdString()); };
        QCOMPARE(npy("layer.0.router.logits.npy").shape(), (atlas::Shape {12, 4}));
        QCOMPARE(npy("layer.1.router.probs.npy").shape(), (atlas::Shape {12, 4}));
        QCOMPARE(npy("layer.0.router.capacity.npy").shape(), atlas::Shape {});
        QCOMPARE(npy("layer.0.router.capacity.npy").data()[0], 2.0f);
        QCOMPARE(npy("layer.0.router.aux_loss.npy").shape(), atlas::Shape {});
        const atlas::Tensor expert = npy("layer.0.router.expert.npy");
        QCOMPARE(expert.shape(), (atlas::Shape {12}));
        std::map<float, int> load;
        for (float e : expert.values())
            ++load[e];
        QVERIFY(load[-1.0f] >= 12 - 2 * 4); // at most 8 tokens fit four experts of 2
        for (const auto &[e, count] : load)
            QVERIFY(e < 0 || count <= 2);
        QFile manifest(dir.filePath("half/manifest.json"));
        QVERIFY(manifest.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(manifest.readAll()).object()["capacity_factor"].toDouble(), 0.5);

        r = run(base + QStringList {"--expert-top-k", "2", "--out", dir.filePath("two")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(atlas::readNpy(dir.filePath("two/layer.1.router.choice.npy").toStdString()).shape(),
            (atlas::Shape {12, 2}));
        r = run(base + QStringList {"--expert-top-k", "5", "--out", dir.filePath("five")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("--expert-top-k: top-k must be in 1..4"), qPrintable(r.err));

        r = run({"dump", "--model", ATLAS_TEST_DATA "/gpt2_tiny", "--tokens", "3,17", "--capacity-factor", "2", "--out",
            dir.filePath("dense")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("--capacity-factor: this model has no mixture-of-experts layers"), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath("dense")));
    }

    void renderWritesPngSvgAndPdf()
    {
        QTemporaryDir dir;
        const QByteArray spec
            = R"({"view": "mask", "model": "tiny-bytes", "text": "Hi there", "padding": [6, 7], "layer": 1, "head": 2})";
        for (const QString ext : {"png", "svg", "pdf"}) {
            const auto r = atlas::testing::renderSpec(dir.path(), spec, "view." + ext, {"--size", "800x600"});
            QVERIFY2(r.code == 0, qPrintable(r.err));
            QFile o(dir.filePath("view." + ext));
            QVERIFY(o.open(QIODevice::ReadOnly));
            const QByteArray head = o.read(8);
            if (ext == "png")
                QVERIFY(head.startsWith("\x89PNG"));
            else if (ext == "pdf")
                QVERIFY(head.startsWith("%PDF"));
            else
                QVERIFY(o.readAll().contains("<svg"));
        }
        // --memory-budget bounds the run's trace: a budget too small for it is refused, and nothing is written
        const auto r = atlas::testing::renderSpec(dir.path(), spec, "tight.png", {"--memory-budget", "0.000001"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("over the trace memory budget"), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath("tight.png")));
    }

    // The pattern and approximation benchmarks report what the core computes (their numbers are checked in
    // tst_attention_pattern and tst_approximation_sweep; here, that the commands run and print them).
    void patternAndApproximationBenchmarksReport()
    {
        const auto pattern = run({"bench-pattern", "--kernel", "longformer", "--length", "1024", "--repeat", "1",
            "--attention-param", "window=64"});
        QCOMPARE(pattern.code, 0);
        // Not causal, window 64: each of the 1024 queries sees 65 keys, fewer at the two ends (32·33 lost).
        QVERIFY2(pattern.out.contains("allowed pairs " + QString::number(1024 * 65 - 2 * (32 * 33) / 2)),
            qPrintable(pattern.out));
        const auto approx = run({"bench-approximation", "--kernel", "linformer", "--length", "32", "--repeat", "1"});
        QCOMPARE(approx.code, 0);
        QVERIFY2(approx.out.contains("| 32 |"), qPrintable(approx.out)); // one row per k, up to k = N
    }

    // Generation stops at the model's context and still prints the text (austen's context: 128 characters).
    // An encoder–decoder on the command line: --text is the source, --decoder-text the decoder's input; dump writes
    // both stacks and the cross-attention with its derived mask (the source's padding masked), generate sorts.
    void dumpAndGenerateRunAnEncoderDecoder()
    {
        QTemporaryDir dir;
        const auto r = run({"dump", "--model", "seq2seq-sort", "--text", "dbcaxx", "--padding", "4,5", "--decoder-text",
            ">abc", "--out", dir.path()});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QFile f(dir.filePath("manifest.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject manifest = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(manifest["architecture"].toString(), QString("encoder-decoder"));
        QCOMPARE(manifest["source"].toArray().size(), 6);
        QCOMPARE(manifest["source_padding"].toArray().size(), 2);
        QCOMPARE(manifest["tokens"].toArray().size(), 4);
        QCOMPARE(
            atlas::readNpy(dir.filePath("enc.layer.1.attn.probs.npy").toStdString()).shape(), (atlas::Shape {4, 6, 6}));
        QCOMPARE(
            atlas::readNpy(dir.filePath("dec.layer.1.attn.probs.npy").toStdString()).shape(), (atlas::Shape {4, 4, 4}));
        QCOMPARE(atlas::readNpy(dir.filePath("dec.layer.1.cross.probs.npy").toStdString()).shape(),
            (atlas::Shape {4, 4, 6}));
        const atlas::Tensor mask = atlas::readNpy(dir.filePath("dec.layer.0.cross.mask.npy").toStdString());
        QCOMPARE(mask.shape(), (atlas::Shape {4, 4, 6}));
        QCOMPARE(mask.data()[3], 1.0f); // query 0 sees source position 3: no causal mask across the stacks
        QCOMPARE(mask.data()[4], 0.0f); // nor the source's padding
        QCOMPARE(atlas::readNpy(dir.filePath("logits.npy").toStdString()).shape(), (atlas::Shape {4, 256}));

        const auto sorted = run({"generate", "--model", "seq2seq-sort", "--text", "sequence", "--decoder-text", ">"});
        QVERIFY2(sorted.code == 0, qPrintable(sorted.err));
        QVERIFY2(sorted.out.contains("decoder: >ceeenqsu."), qPrintable(sorted.out));
        QVERIFY2(sorted.out.contains("encoder run once on 8 source tokens; cross-attention K/V of its output: 8.0 KiB")
                && sorted.out.contains("KV cache: 2 positions"),
            qPrintable(sorted.out)); // 2 layers × K and V × 8 × 64 floats

        const auto noDecoder = run({"dump", "--model", "seq2seq-sort", "--text", "abc", "--out", dir.filePath("x")});
        QVERIFY(noDecoder.code != 0 && noDecoder.err.contains("give the decoder's input as exactly one of"));
        const auto oneStack
            = run({"dump", "--model", "reverse", "--text", "abc", "--decoder-text", ">", "--out", dir.filePath("y")});
        QVERIFY(oneStack.code != 0 && oneStack.err.contains("reverse is a decoder with one stack"));
        const auto view = atlas::testing::renderSpec(dir.path(), R"({"model": "seq2seq-sort", "view": "attention",
            "text": "dbca", "decoder_text": ">ab", "site": "cross", "layer": 1})",
            "v.png");
        QVERIFY2(view.code == 0 && QFileInfo(dir.filePath("v.png")).size() > 0, qPrintable(view.err));
        const auto lsh = atlas::testing::renderSpec(
            dir.path(), R"({"model": "seq2seq-sort", "view": "lsh", "text": "dbca", "decoder_text": ">ab"})", "w.png");
        QVERIFY2(lsh.code != 0 && lsh.err.contains("the lsh view shows models with one stack"), qPrintable(lsh.err));
    }

    // memory --json: the contract's fields; the events' bytes add up to their live column, whose maximum is the peak.
    void memoryWritesTheStepAsJson()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath("step.json");
        const auto r = run({"memory", "--shape", "3x2x16", "--length", "24", "--strategy", "checkpoint",
            "--checkpoint-every", "1", "--repeat", "0", "--json", json});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(r.out.count('\n'), 1); // a one-line summary
        QVERIFY2(r.out.contains("checkpoint (k = 1), 3 layers, 24 tokens"), qPrintable(r.out));
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(o["strategy"].toString(), QString("checkpoint"));
        QCOMPARE(o["layers"].toInt(), 3);
        QVERIFY(o["step_ms"].toDouble() > 0);
        const QJsonArray events = o["events"].toArray();
        QVERIFY(events.size() > 100);
        double live = 0, peak = 0, recomputed = 0;
        QSet<QString> phases;
        for (const auto &v : events) {
            const QJsonObject e = v.toObject();
            for (const char *key : {"op", "phase", "category", "bytes", "live"})
                QVERIFY2(e.contains(key), key);
            live += e["bytes"].toDouble();
            QCOMPARE(e["live"].toDouble(), live);
            peak = std::max(peak, live);
            phases.insert(e["phase"].toString());
            if (e["category"].toString() == "recomputed_activations" && e["bytes"].toDouble() > 0)
                recomputed += e["bytes"].toDouble();
        }
        QCOMPARE(o["peak_bytes"].toDouble(), peak);
        QVERIFY(o["peak_activation_bytes"].toDouble() > 0 && o["peak_activation_bytes"].toDouble() < peak);
        QVERIFY(recomputed > 0);
        for (const QString phase : {"setup", "forward", "backward", "recompute", "optimizer"})
            QVERIFY2(phases.contains(phase), qPrintable(phase));
    }

    void memorySweepsDepthAndMeasuresInversion()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath("sweep.json");
        auto r = run(
            {"memory", "--sweep-depth", "1,4", "--shape", "2x32", "--length", "64", "--repeat", "0", "--json", json});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("plain") && r.out.contains("reversible"), qPrintable(r.out));
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray rows = QJsonDocument::fromJson(f.readAll()).object()["sweep"].toArray();
        QCOMPARE(rows.size(), 6); // 2 depths x 3 strategies
        QMap<QString, double> peak;
        for (const auto &v : rows)
            peak[v.toObject()["strategy"].toString() + QString::number(v.toObject()["depth"].toInt())]
                = v.toObject()["peak_activation_bytes"].toDouble();
        QVERIFY(peak["plain4"] > 2 * peak["plain1"]);
        QVERIFY(peak["reversible4"] < 1.1 * peak["reversible1"]);
        r = run({"memory", "--inversion-error", "--shape", "3x2x16", "--length", "16"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        for (const QString column : {"float64", "float32", "float16", "bfloat16", "gradient error"})
            QVERIFY2(r.out.contains(column), qPrintable(r.out));
        QCOMPARE(r.out.count(QRegularExpression(R"(\n +[0-2] +\d)")), 3); // a row per block
    }

    // train --memory-strategy: a reversible model trained the reversible way, its strategy kept for --resume (and
    // --weight-decay in trainer.json).
    void trainUnderAMemoryStrategy()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("rev");
        const auto r = run({"train", "--task", "reverse", "--out", out, "--steps", "2", "--batch", "2", "--layers", "2",
            "--d-model", "16", "--heads", "2", "--reversible", "--memory-strategy", "reversible", "--ffn-chunks", "2",
            "--eval-examples", "4", "--weight-decay", "0"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("memory strategy reversible, feed-forward in 2 chunks"), qPrintable(r.err));
        const QString current = QString::fromStdString(atlas::CheckpointDirectory(out.toStdString()).current());
        QFile config(out + "/config.json"), state(current + "/trainer.json");
        QVERIFY(config.open(QIODevice::ReadOnly) && state.open(QIODevice::ReadOnly));
        QVERIFY(QJsonDocument::fromJson(config.readAll()).object()["atlas_reversible"].toBool());
        const QJsonObject s = QJsonDocument::fromJson(state.readAll()).object();
        QCOMPARE(s["memory_strategy"].toString(), QString("reversible"));
        QCOMPARE(s["ffn_chunks"].toInt(), 2);
        QCOMPARE(s["weight_decay"].toDouble(), 0.0); // --weight-decay 0
        const auto resumed = run({"train", "--out", out, "--resume", "--memory-strategy", "checkpoint",
            "--checkpoint-every", "1", "--eval-examples", "4"});
        QVERIFY2(resumed.code == 0, qPrintable(resumed.err));
        QVERIFY2(
            resumed.err.contains("memory strategy checkpoint (a boundary every 1 layers)"), qPrintable(resumed.err));
    }

    // The Objectives and Masked fills views drawn headless; a view the model cannot show refused naming the key.
    void renderDrawsThePretrainingViews()
    {
        QTemporaryDir dir;
        const auto render = [&](const QByteArray &json, const QString &out) {
            return atlas::testing::renderSpec(dir.path(), json, out);
        };
        for (const char *objective : {"next", "mlm", "span", "prefix"}) {
            const QString out = QStringLiteral("objective-%1.png").arg(objective);
            const auto drawn
                = render(QByteArray(R"({"view": "objective", "model": "austen-mlm", "text": "It is a truth.",
                "seed": 4, "objective": ")")
                        + objective + "\"}",
                    out);
            QVERIFY2(drawn.code == 0 && QFileInfo(dir.filePath(out)).size() > 0, qPrintable(drawn.err));
        }
        const auto fills
            = render(R"({"view": "fills", "model": "austen-mlm", "text": "It is a tr[MASK]th."})", "f.png");
        QVERIFY2(fills.code == 0 && QFileInfo(dir.filePath("f.png")).size() > 0, qPrintable(fills.err));
        const auto decoder = render(R"({"view": "fills", "model": "austen", "text": "It is"})", "g.png");
        QVERIFY2(decoder.code != 0 && decoder.err.contains("key 'model'") && decoder.err.contains("no [MASK] token"),
            qPrintable(decoder.err));
        const auto tooShort = render(R"({"view": "objective", "model": "austen", "text": "I"})", "h.png");
        QVERIFY2(tooShort.code != 0 && tooShort.err.contains("key 'text'"), qPrintable(tooShort.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
