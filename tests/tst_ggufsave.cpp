#include "clitesting.h"
#include "engine/engine.h"
#include "io/gguf.h"
#include "model/builtinmodels.h"
#include "model/ggufmodel.h"
#include "model/model.h"
#include "model/modeltokenizer.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "tokenize/huggingfacetokenizer.h"
#include "util/error.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace atlas;
using namespace atlas::testing;

// `save` writes GGUF files llama.cpp runs. tests/data/gguf/quantized.gguf holds rows of floats and ggml's own
// quantization of them (tests/tools/make_gguf_quantize_fixture.py, through llama.cpp's prebuilt library);
// tests/data/gguf/saved/ holds files `save` wrote (saves.json lists them; make_gguf_saved.py) and reference.json
// llama.cpp's logits on them (gguf_reference.mjs).
class TestGgufSave : public QObject
{
    Q_OBJECT

private slots:
    void quantizesAsGgml_data();
    void quantizesAsGgml();
    void writesTheSameFileAgain_data();
    void writesTheSameFileAgain();
    void llamaCppAgrees_data();
    void llamaCppAgrees();
    void readsBackTheModelItSaved_data();
    void readsBackTheModelItSaved();
    void refusesWhatTheArchitectureCannotHold();
    void savesT5();
    void savesAHuggingFaceTokenizer_data();
    void savesAHuggingFaceTokenizer();
    void savesAT5Tokenizer();
    void refusesATokenizerItDoesNotWrite();
    void replacesOnlyItsOwnFiles();

private:
    QTemporaryDir m_dir;
};

namespace {

// A JSON file under tests/data.
QJsonObject dataJson(const QString &file)
{
    QFile f(dataPath(file));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    return QJsonDocument::fromJson(f.readAll()).object();
}

QJsonObject savedJson(const QString &file)
{
    return dataJson("gguf/saved/" + file);
}

// A reference's list of token ids.
std::vector<int> idsOf(const QJsonArray &ids)
{
    std::vector<int> out;
    for (const QJsonValue &id : ids)
        out.push_back(id.toInt());
    return out;
}

QJsonObject saveNamed(const QString &file)
{
    for (const QJsonValue &s : savedJson("saves.json")["saves"].toArray())
        if (s["file"].toString() == file)
            return s.toObject();
    qFatal("saves.json has no %s", qPrintable(file));
}

// The model a save of saves.json reads: a built-in name, a file under tests/data, or one `new-model` makes in `dir`.
QString sourceModel(const QJsonObject &save, const QString &dir)
{
    const QString model = save["model"].toString();
    if (save.contains("new_model")) {
        const QString out = QDir(dir).filePath(model);
        if (!QDir(out).exists()) {
            QStringList args {"new-model", "--out", out};
            for (const QJsonValue &a : save["new_model"].toArray())
                args << a.toString();
            const CliResult made = runCli(args);
            if (made.code != 0)
                qFatal("new-model: %s", qPrintable(made.err));
        }
        return out;
    }
    return model.contains('/') ? dataPath(model) : model;
}

Tensor logitsOf(const Model &model, const std::vector<int> &ids)
{
    Engine engine(std::make_shared<const Model>(model), Input {ids, {}});
    engine.runToEnd();
    return engine.trace().tensor("logits");
}

// Built-in models and files under tests/data.
const char *const kRoundTrips[] = {"reverse", "reverse-llama", "reverse-gemma2", "reverse-qwen3", "reverse-rope",
    "reverse-sin", "reverse-nopos", "reverse-alibi", "reverse-gpt-oss", "gguf/models/gpt_oss_mxfp4_tiny-f32.gguf",
    "gguf/models/llama_tiny-f32.gguf", "gguf/models/llama_hd_tiny-f32.gguf", "gguf/models/mistral_tiny-f32.gguf",
    "gguf/models/mixtral_tiny-f32.gguf", "gguf/models/qwen2_tiny-f32.gguf", "gguf/models/qwen3_moe_tiny-f32.gguf",
    "gguf/models/olmo2_tiny-f32.gguf", "gguf/models/smollm3_tiny-f32.gguf", "gguf/models/gemma2_tiny-f32.gguf",
    "gguf/models/gemma3_tiny-f32.gguf", "gguf/models/gpt2_tiny-f32.gguf", "gguf/models/neox_tiny-f32.gguf",
    "gguf/models/phi3_tiny-f32.gguf", "gguf/models/phi3_long_tiny-f32.gguf"};

} // namespace

void TestGgufSave::quantizesAsGgml_data()
{
    QTest::addColumn<QString>("type");
    for (const char *type : {"F16", "Q8_0", "Q4_0", "Q4_K"})
        QTest::newRow(type) << QString(type);
}

// Every byte as ggml_quantize_chunk wrote it: scales rounded to half precision the same way, each level chosen by the
// same float operations (Q4_K's weighted search over 21 trial scales included), ties rounded the same way.
void TestGgufSave::quantizesAsGgml()
{
    QFETCH(QString, type);
    const GgufFile f(dataPath("gguf/quantized.gguf").toStdString());
    const Tensor input = f.tensor("input");
    const GgufFile::Entry *expected = f.find(type.toStdString());
    QVERIFY(expected);
    QCOMPARE(expected->shape, input.shape());
    const std::string written = quantizeGgml(expected->type, input.data(), input.numel());
    QCOMPARE(written.size(), size_t(expected->bytes));
    const auto *want = reinterpret_cast<const char *>(f.data(*expected));
    for (size_t i = 0; i < written.size(); ++i)
        if (written[i] != want[i])
            QFAIL(qPrintable(QString("byte %1 (row %2): %3, ggml wrote %4")
                                 .arg(i)
                                 .arg(i / (written.size() / size_t(input.dim(0))))
                                 .arg(int(uint8_t(written[i])))
                                 .arg(int(uint8_t(want[i])))));
}

void TestGgufSave::writesTheSameFileAgain_data()
{
    QTest::addColumn<QString>("file");
    for (const QJsonValue &s : savedJson("saves.json")["saves"].toArray())
        QTest::newRow(qPrintable(s["file"].toString())) << s["file"].toString();
}

// The committed files are what `save` writes today, byte for byte: llama.cpp's agreement with them below is
// agreement with this program's writer.
void TestGgufSave::writesTheSameFileAgain()
{
    QFETCH(QString, file);
    const QJsonObject save = saveNamed(file);
    const QString out = m_dir.filePath("again-" + file);
    QFile::remove(out);
    const CliResult saved
        = runCli({"save", "--model", sourceModel(save, m_dir.path()), "--type", save["type"].toString(), "--out", out});
    QVERIFY2(saved.code == 0, qPrintable(saved.err));
    QVERIFY2(saved.out.contains("llama.cpp's"), qPrintable(saved.out));
    QCOMPARE(readFile(out), readFile(dataPath("gguf/saved/" + file)));
}

void TestGgufSave::llamaCppAgrees_data()
{
    writesTheSameFileAgain_data();
}

// llama.cpp runs each saved file and its logits agree with this program's on the same file. F32: the same arithmetic
// in another order (measured: 5.9e-6 with logits up to 11). Quantized: llama.cpp also rounds each activation row to 8
// bits for its quantized dot products, where this program multiplies the dequantized weights in float32, so its
// logits must be nearer llama.cpp's, on average, than llama.cpp's are to the unquantized model's (measured: 0.06 to
// 0.7 of that distance), and within a tenth of the largest logit everywhere (measured: at most 0.063 of it). F16
// holds no quantized activations, but llama.cpp's GELU rounds through half precision (measured: 1.9e-3).
void TestGgufSave::llamaCppAgrees()
{
    QFETCH(QString, file);
    const QJsonObject reference = savedJson("reference.json");
    std::vector<int> ids;
    for (const QJsonValue &v : reference["ids"].toArray())
        ids.push_back(v.toInt());
    const QJsonArray rows = reference["models"].toObject()[file].toArray();
    QCOMPARE(size_t(rows.size()), ids.size());
    const Model saved = Model::load(dataPath("gguf/saved/" + file).toStdString());
    const Tensor ours = logitsOf(saved, ids);
    const Tensor source = logitsOf(*loadModel(sourceModel(saveNamed(file), m_dir.path()).toStdString()), ids);
    const int64_t vocab = saved.config.vocab;
    double worst = 0, range = 1, sum = 0, shift = 0;
    for (qsizetype t = 0; t < rows.size(); ++t) {
        const QJsonArray row = rows[t].toArray();
        QCOMPARE(row.size(), qsizetype(vocab));
        for (int64_t v = 0; v < vocab; ++v) {
            const double theirs = row[qsizetype(v)].toDouble();
            const double difference = std::fabs(double(ours.data()[t * vocab + v]) - theirs);
            worst = std::max(worst, difference);
            range = std::max(range, std::fabs(theirs));
            sum += difference;
            shift += std::fabs(theirs - double(source.data()[t * vocab + v]));
        }
    }
    const double n = double(rows.size()) * double(vocab);
    qInfo("%s: largest difference from llama.cpp %.3g (largest logit %.3g), mean %.3g; llama.cpp from the unquantized "
          "model, mean %.3g",
        qPrintable(file), worst, range, sum / n, shift / n);
    if (file.endsWith("-f32.gguf")) {
        QVERIFY2(worst <= 2e-5 * range, qPrintable(QString::number(worst)));
        QVERIFY(sameBits(ours, source));
    } else if (file.endsWith("-f16.gguf")) {
        QVERIFY2(worst <= 5e-3, qPrintable(QString::number(worst)));
    } else {
        QVERIFY2(worst <= 0.1 * range, qPrintable(QString::number(worst)));
        QVERIFY2(
            sum < shift, qPrintable(QString("mean %1 against the quantization's own %2").arg(sum / n).arg(shift / n)));
    }
}

void TestGgufSave::readsBackTheModelItSaved_data()
{
    QTest::addColumn<QString>("model");
    for (const char *model : kRoundTrips)
        QTest::newRow(model) << QString(model);
}

// Every architecture's layout written and read back (q and k permuted for llama's RoPE and back, NeoX's qkv
// regrouped, GPT-2's with RoPE written as gptneox, GPT-2's Conv1D transposed, Gemma's norms as 1 + w, experts stacked,
// rope_freqs, Phi-3's partial rotary and LongRoPE factors): in F32 the model read back computes the very same logits
// (to the order of a sum where q and k were regrouped).
void TestGgufSave::readsBackTheModelItSaved()
{
    QFETCH(QString, model);
    const std::shared_ptr<const Model> source
        = loadModel((model.contains('/') ? dataPath(model) : model).toStdString());
    const std::string out = m_dir.filePath("back.gguf").toStdString();
    QFile::remove(QString::fromStdString(out));
    const GgufSaveReport report = saveGgufModel(*source, out, GgmlType::F32);
    QCOMPARE(report.tensorsByType.size(), size_t(1));
    const Model back = Model::load(out);
    QCOMPARE(back.config.layers, source->config.layers);
    std::vector<int> ids;
    for (int i = 0; i < 12; ++i)
        ids.push_back((i * 7 + 3) % std::min(source->config.vocab, 50));
    const Tensor backLogits = logitsOf(back, ids), sourceLogits = logitsOf(*source, ids);
    if (source->config.family != Family::Gpt2 || source->config.positions != PositionKind::Rope) {
        QVERIFY(sameBits(backLogits, sourceLogits));
        return;
    }
    // A GPT-2 layout with RoPE on adjacent pairs comes back as gptneox with each head's q and k rows regrouped for
    // the rotation of halves: the same products, their dot products summed in another order.
    QCOMPARE(back.config.positions, PositionKind::RopeHalf);
    QCOMPARE(back.config.activation, source->config.activation);
    double worst = 0, range = 0;
    for (int64_t i = 0; i < sourceLogits.numel(); ++i) {
        worst = std::max(worst, double(std::fabs(backLogits.data()[i] - sourceLogits.data()[i])));
        range = std::max(range, double(std::fabs(sourceLogits.data()[i])));
    }
    qInfo("%s: largest difference %.3g (largest logit %.3g)", qPrintable(model), worst, range);
    QVERIFY2(worst <= 1e-5 * range, qPrintable(QString::number(worst)));
}

void TestGgufSave::refusesWhatTheArchitectureCannotHold()
{
    const std::string out = m_dir.filePath("refused.gguf").toStdString();
    const struct
    {
        const char *model, *reason;
    } cases[] = {
        {"austen-mlm", "(architecture: the model has encoder, a gpt2 file can only say decoder)"},
        {"austen-switch", "(experts: the model has 4, a gpt2 file can only say 0)"},
        {"reverse-entmax", "(attention normaliser: the model has entmax, a gpt2 file can only say softmax)"},
        {"reverse-rev", "(reversible blocks: the model has true, a gpt2 file can only say false)"},
    };
    for (const auto &c : cases) {
        const std::shared_ptr<const Model> m = loadModel(c.model);
        try {
            saveGgufModel(*m, out, GgmlType::Q8_0);
            QFAIL(qPrintable(QString(c.model) + " was saved"));
        } catch (const Error &e) {
            const QString message = e.what();
            QVERIFY2(message.contains(QString(c.model) + ": llama.cpp's gpt2 architecture cannot hold this model")
                    && message.contains(c.reason) && message.endsWith("nothing was written"),
                qPrintable(message));
        }
        QVERIFY(!QFile::exists(QString::fromStdString(out)));
    }
    const CliResult type
        = runCli({"save", "--model", "reverse", "--type", "q5_k", "--out", QString::fromStdString(out)});
    QCOMPARE(type.code, 1);
    QVERIFY2(type.err.contains("--type: 'q5_k' is not a type save writes (it writes F32, F16, Q4_0, Q8_0, Q4_K)"),
        qPrintable(type.err));
    const CliResult bert = runCli({"save", "--model", dataPath("bert_tiny"), "--out", QString::fromStdString(out)});
    QCOMPARE(bert.code, 1);
    QVERIFY2(bert.err.contains("a bert model has no llama.cpp architecture this program writes"), qPrintable(bert.err));
    // a T5 checkpoint without a tokenizer: a t5 file needs one (llama.cpp loads none without)
    const CliResult t5 = runCli({"save", "--model", dataPath("t5v11_tiny"), "--out", QString::fromStdString(out)});
    QCOMPARE(t5.code, 1);
    QVERIFY2(t5.err.contains("no tokenizer.json"), qPrintable(t5.err));
    QVERIFY(!QFile::exists(QString::fromStdString(out)));
    // gpt-oss's own YaRN leaves the ramp's ends where they fall (truncate false); llama.cpp's rounds them to whole
    // pairs
    Model gptOss = *loadModel("reverse-gpt-oss");
    gptOss.config.ropeScaling.kind = RopeScaling::Kind::Yarn;
    gptOss.config.ropeScaling.factor = 32; // GptOssConfig's: the ramp from pair 2.62 to 5.63 of 8
    gptOss.config.ropeScaling.originalContext = 4096;
    gptOss.config.ropeScaling.attentionFactor = 0.1 * std::log(32.0) + 1;
    gptOss.config.ropeScaling.truncate = false;
    try {
        saveGgufModel(gptOss, out, GgmlType::F32);
        QFAIL("a YaRN without truncation was saved");
    } catch (const Error &e) {
        const QString message = e.what();
        QVERIFY2(
            message.startsWith("reverse-gpt-oss: llama.cpp's gpt-oss architecture cannot hold this model (layer 0: "
                               "the model has window 16, experts 1, RoPE 1 on 16 dimensions, amplitude 1.34657")
                && message.contains("a gpt-oss file can only say") && message.endsWith("nothing was written"),
            qPrintable(message));
    }
    QVERIFY(!QFile::exists(QString::fromStdString(out)));
    // llama.cpp's gpt-oss clamps its experts' SwiGLU at 7 whatever the checkpoint's swiglu_limit
    Model clamped = *loadModel("reverse-gpt-oss");
    clamped.config.gluClamp = 5;
    try {
        saveGgufModel(clamped, out, GgmlType::F32);
        QFAIL("a clamp of 5 was saved");
    } catch (const Error &e) {
        QVERIFY2(QString(e.what()).contains("(experts' SwiGLU clamp: the model has 5, a gpt-oss file can only say 7)"),
            e.what());
    }
    QVERIFY(!QFile::exists(QString::fromStdString(out)));
}

// llama.cpp's t5 (issue 60): a t5 file saved again reads back as the model it was, in F32 and in Q8_0 (its own blocks
// quantized again); a tied T5 head, which llama.cpp would read unscaled, is written as a matrix of its own with
// d_model^(−1/2) folded in; a last bucket at another distance than llama.cpp's 128 is refused by name.
void TestGgufSave::savesT5()
{
    const std::string source = dataPath("gguf/models/t5v11_tiny_unigram-q8_0.gguf").toStdString();
    Input input {{0, 13, 422, 141}, {}};
    input.source = {45, 27, 65, 52, 165, 1};
    const auto logitsOf = [&](const Model &m) {
        Engine engine(std::make_shared<const Model>(m), input);
        engine.runToEnd();
        return engine.trace().tensor("logits");
    };
    const Model model = Model::load(source);
    const Tensor expected = logitsOf(model);
    QTemporaryDir dir;
    for (GgmlType type : {GgmlType::F32, GgmlType::Q8_0}) {
        const std::string out = dir.filePath(QString("t5-%1.gguf").arg(int(type))).toStdString();
        QCOMPARE(saveGgufModel(model, out, type).architecture, std::string("t5"));
        const Model back = Model::load(out);
        QCOMPARE(back.config.encoderLayers, model.config.encoderLayers);
        const float difference = maxDifference(logitsOf(back), expected);
        QVERIFY2(difference <= 1e-5f, qPrintable(QString::number(difference)));
        QCOMPARE(GgufFile(out).find("enc.blk.0.attn_rel_b.weight")->type, GgmlType::F32);
    }
    Model tied = model;
    tied.config.tiedHead = true;
    tied.lmHead = Tensor();
    const std::string out = dir.filePath("tied.gguf").toStdString();
    saveGgufModel(tied, out, GgmlType::F32);
    const Model back = Model::load(out);
    QCOMPARE(back.config.tiedHead, false);
    const float difference = maxDifference(logitsOf(back), logitsOf(tied));
    QVERIFY2(difference <= 1e-5f, qPrintable(QString::number(difference)));
    Model far = model;
    far.config.relativeMaxDistance = 64;
    const std::string refused = dir.filePath("far.gguf").toStdString();
    try {
        saveGgufModel(far, refused, GgmlType::F32);
        QFAIL("a last bucket at 64 was written");
    } catch (const Error &e) {
        QVERIFY2(std::string(e.what()).find("relative distance of the last bucket: the model has 64, a t5 file can "
                                            "only say 128")
                != std::string::npos,
            e.what());
    }
    QVERIFY(!QFile::exists(QString::fromStdString(refused)));
}

void TestGgufSave::savesAHuggingFaceTokenizer_data()
{
    QTest::addColumn<QStringList>("newModel");
    QTest::addColumn<QStringList>("files");
    QTest::addColumn<QString>("pre");
    QTest::newRow("gpt2") << QStringList {"--tokenizer", "gpt2", "--vocab", "50257"}
                          << QStringList {ATLAS_SOURCE_DIR "/resources/tokenizers/gpt2/tokenizer.json",
                                 ATLAS_SOURCE_DIR "/resources/tokenizers/gpt2/tokenizer_config.json"}
                          << "gpt-2";
    QTest::newRow("qwen2_5") << QStringList {"--family", "qwen2", "--vocab", "151936"}
                             << QStringList {dataPath("tokenizers/qwen2_5/tokenizer.json"),
                                    dataPath("tokenizers/qwen2_5/tokenizer_config.json")}
                             << "qwen2";
    // Llama 2's layout: SentencePiece's BPE with byte fallback, no normalization, written as 'llama'
    QTest::newRow("spm_llama") << QStringList {"--family", "llama", "--vocab", "1000"}
                               << QStringList {dataPath("gguf/saved/spm_llama/tokenizer.model"),
                                      dataPath("gguf/saved/spm_llama/tokenizer_config.json")}
                               << "default";
}

// A Hugging Face directory's byte-level BPE is written as llama.cpp's 'gpt2' tokenizer, its pre-tokenizer named by its
// pattern, and a SentencePiece model as its 'llama' one: the file read back, and the directory, give llama.cpp's own
// ids on that file (tokenizers.json, made by make_gguf_tokenizer_reference.py through llama.cpp's prebuilt library)
// for every text.
void TestGgufSave::savesAHuggingFaceTokenizer()
{
    QFETCH(QStringList, newModel);
    QFETCH(QStringList, files);
    QFETCH(QString, pre);
    const QString name = QTest::currentDataTag(), model = m_dir.filePath("hf-" + name),
                  out = m_dir.filePath("hf-" + name + ".gguf");
    QDir(model).removeRecursively();
    QFile::remove(out);
    const CliResult made = runCli(
        QStringList {"new-model", "--out", model, "--d-model", "16", "--layers", "1", "--heads", "2", "--seed", "1"}
        + newModel);
    QVERIFY2(made.code == 0, qPrintable(made.err));
    for (const QString &f : files)
        QVERIFY(QFile::copy(f, model + "/" + QFileInfo(f).fileName()));
    const CliResult saved = runCli({"save", "--model", model, "--out", out});
    QVERIFY2(saved.code == 0, qPrintable(saved.err));
    QCOMPARE(QString::fromStdString(GgufFile(out.toStdString()).string("tokenizer.ggml.pre")), pre);
    const QJsonObject reference = savedJson("tokenizers.json");
    const QJsonArray texts = reference["texts"].toArray(), ids = reference["ids"].toObject()[name].toArray();
    QCOMPARE(ids.size(), texts.size());
    const auto fromFile = HuggingFaceTokenizer::fromGguf(out.toStdString());
    const auto fromDirectory = tokenizerForDirectory(model.toStdString());
    for (qsizetype i = 0; i < texts.size(); ++i) {
        const std::vector<int> llamaCpp = idsOf(ids[i].toArray());
        const std::string text = texts[i].toString().toStdString();
        QCOMPARE(fromFile->encode(text), llamaCpp);
        QCOMPARE(fromDirectory->encode(text), llamaCpp);
    }
    // `tokenize` reads a GGUF file's tokenizer as it reads a directory's
    const CliResult tokenized = runCli({"tokenize", "--model", out, "--text", texts[1].toString()});
    QVERIFY2(tokenized.code == 0, qPrintable(tokenized.err));
    QStringList expected;
    for (const QJsonValue &id : ids[1].toArray())
        expected << QString::number(id.toInt());
    QCOMPARE(tokenized.out.trimmed().split('\n').last(), expected.join(','));
}

// A SentencePiece Unigram model made as T5's (nmt_nfkc's precompiled charsmap, no byte fallback; unigram_t5, made by
// make_unigram_t5_fixture.py) is written as llama.cpp's 't5' tokenizer with its normaliser, as llama.cpp's T5
// converter writes it: the file gives llama.cpp's ids on every text (llama-ids.json, through node-llama-cpp's prebuilt
// library, special tokens parsed, none added), and the directory's own tokenizer gives the same ids where the text
// spells no control token; a Hugging Face T5 directory with it is saved as a t5 file llama.cpp runs with the same
// logits. The unigram fixture, whose byte pieces SentencePiece falls back to where llama.cpp reads "\n\n" as <unk>
// (checked with node-llama-cpp on a file written without the check), is refused by save's read-back check, and
// nothing is written.
void TestGgufSave::savesAT5Tokenizer()
{
    const QString model = m_dir.filePath("hf-t5tok"), out = m_dir.filePath("hf-t5tok.gguf");
    QDir(model).removeRecursively();
    const CliResult made = runCli({"new-model", "--out", model, "--family", "llama", "--vocab", "300", "--d-model",
        "16", "--layers", "1", "--heads", "2", "--seed", "1"});
    QVERIFY2(made.code == 0, qPrintable(made.err));
    for (const char *f : {"spiece.model", "tokenizer_config.json"})
        QVERIFY(QFile::copy(dataPath("tokenizers/unigram_t5/") + f, model + "/" + f));
    const CliResult saved = runCli({"save", "--model", model, "--out", out});
    QVERIFY2(saved.code == 0, qPrintable(saved.err));
    const GgufFile file(out.toStdString());
    QCOMPARE(file.string("tokenizer.ggml.model"), std::string("t5"));
    QVERIFY(file.boolean("tokenizer.ggml.add_space_prefix"));
    QVERIFY(file.boolean("tokenizer.ggml.remove_extra_whitespaces"));
    QVERIFY(file.byteArray("tokenizer.ggml.precompiled_charsmap").size() > 100000); // NFKC's rules, compiled
    const QJsonObject ids = dataJson("tokenizers/unigram_t5/llama-ids.json");
    const QJsonArray texts = ids["texts"].toArray(), expected = ids["ids"].toArray();
    QCOMPARE(texts.size(), expected.size());
    const auto fromFile = HuggingFaceTokenizer::fromGguf(out.toStdString());
    const auto fromDirectory = tokenizerForDirectory(model.toStdString());
    for (qsizetype i = 0; i < texts.size(); ++i) {
        const std::vector<int> llamaCpp = idsOf(expected[i].toArray());
        const std::string text = texts[i].toString().toStdString();
        QCOMPARE(fromFile->encode(text), llamaCpp);
        if (text.find("</s>") == std::string::npos)
            QCOMPARE(fromDirectory->encode(text), llamaCpp);
    }

    // A Hugging Face T5 directory with that tokenizer: the file llama.cpp runs gives its logits
    // (llama-t5-logits.json) on the source the file's tokenizer makes of the first text, </s> added as T5's does.
    const QString t5 = m_dir.filePath("hf-t5"), t5File = m_dir.filePath("hf-t5.gguf");
    QDir(t5).removeRecursively();
    const CliResult madeT5 = runCli({"new-model", "--out", t5, "--family", "t5", "--vocab", "300", "--d-model", "32",
        "--layers", "2", "--heads", "2", "--seed", "1"});
    QVERIFY2(madeT5.code == 0, qPrintable(madeT5.err));
    for (const char *f : {"spiece.model", "tokenizer_config.json"})
        QVERIFY(QFile::copy(dataPath("tokenizers/unigram_t5/") + f, t5 + "/" + f));
    const CliResult savedT5 = runCli({"save", "--model", t5, "--out", t5File});
    QVERIFY2(savedT5.code == 0, qPrintable(savedT5.err));
    const QJsonObject llama = dataJson("tokenizers/unigram_t5/llama-t5-logits.json");
    const auto fileModel = std::make_shared<const Model>(Model::load(t5File.toStdString()));
    Input input;
    input.source = tokenizerForModel(*fileModel)->encodeWithSpecialTokens(texts[0].toString().toStdString());
    input.tokens = idsOf(llama["tokens"].toArray());
    QCOMPARE(input.source, idsOf(llama["source"].toArray()));
    Engine engine(fileModel, input);
    engine.runToEnd();
    const auto ours = engine.trace().tensor("logits").matrix();
    const QJsonArray rows = llama["logits"].toArray();
    QCOMPARE(rows.size(), qsizetype(ours.rows()));
    double worst = 0;
    for (qsizetype r = 0; r < rows.size(); ++r)
        for (qsizetype v = 0; v < rows[r].toArray().size(); ++v)
            worst = std::max(worst, std::abs(rows[r].toArray()[v].toDouble() - double(ours(r, v))));
    QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));

    const QString bytes = m_dir.filePath("hf-unigram-bytes");
    QDir(bytes).removeRecursively();
    const CliResult small = runCli({"new-model", "--out", bytes, "--family", "llama", "--vocab", "1000", "--d-model",
        "16", "--layers", "1", "--heads", "2", "--seed", "1"});
    QVERIFY2(small.code == 0, qPrintable(small.err));
    for (const char *f : {"spiece.model", "tokenizer_config.json"})
        QVERIFY(QFile::copy(dataPath("tokenizers/unigram/") + f, bytes + "/" + f));
    QFile::remove(out);
    const CliResult refused = runCli({"save", "--model", bytes, "--out", out});
    QCOMPARE(refused.code, 1);
    QVERIFY2(refused.err.contains("tokenizer: its own gives"), qPrintable(refused.err));
    QVERIFY(!QFile::exists(out));
}

// A tokenizer that is not a byte-level BPE (Mistral's tokenizer.json: SentencePiece's BPE with byte fallback) with no
// SentencePiece model beside it is refused by name, and nothing is written.
void TestGgufSave::refusesATokenizerItDoesNotWrite()
{
    const QString model = m_dir.filePath("hf-mistral"), out = m_dir.filePath("hf-mistral.gguf");
    QDir(model).removeRecursively();
    const CliResult made = runCli({"new-model", "--out", model, "--family", "llama", "--vocab", "32000", "--d-model",
        "16", "--layers", "1", "--heads", "2", "--seed", "1"});
    QVERIFY2(made.code == 0, qPrintable(made.err));
    QVERIFY(QFile::copy(ATLAS_SOURCE_DIR "/resources/tokenizers/mistral-7b/tokenizer.json", model + "/tokenizer.json"));
    const CliResult saved = runCli({"save", "--model", model, "--out", out});
    QCOMPARE(saved.code, 1);
    QVERIFY2(saved.err.contains("tokenizer.json: key 'model': not a byte-level BPE"), qPrintable(saved.err));
    QVERIFY(!QFile::exists(out));
    // A SentencePiece model that normalizes (spm_bpe: NFKC, newlines to spaces, runs of spaces squeezed), which
    // llama.cpp's 'llama' tokenizer would not do: the file read back encodes otherwise, and nothing is written.
    const QString nfkc = m_dir.filePath("hf-spm-nfkc");
    QDir(nfkc).removeRecursively();
    const CliResult small = runCli({"new-model", "--out", nfkc, "--family", "llama", "--vocab", "1000", "--d-model",
        "16", "--layers", "1", "--heads", "2", "--seed", "1"});
    QVERIFY2(small.code == 0, qPrintable(small.err));
    for (const char *f : {"tokenizer.model", "tokenizer_config.json"})
        QVERIFY(QFile::copy(dataPath("tokenizers/spm_bpe/") + f, nfkc + "/" + f));
    const CliResult normalizing = runCli({"save", "--model", nfkc, "--out", out});
    QCOMPARE(normalizing.code, 1);
    QVERIFY2(normalizing.err.contains("tokenizer: its own gives"), qPrintable(normalizing.err));
    QVERIFY(!QFile::exists(out));
}

// A file save did not write is never replaced; one it wrote is, whole.
void TestGgufSave::replacesOnlyItsOwnFiles()
{
    const QString out = m_dir.filePath("notes.gguf");
    QFile notes(out);
    QVERIFY(notes.open(QIODevice::WriteOnly));
    notes.write("my notes");
    notes.close();
    CliResult r = runCli({"save", "--model", "reverse", "--out", out});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(out + " exists and was not written by save"), qPrintable(r.err));
    QCOMPARE(readFile(out), QByteArray("my notes"));

    QVERIFY(QFile::remove(out));
    QCOMPARE(runCli({"save", "--model", "reverse", "--out", out}).code, 0);
    const QByteArray first = readFile(out);
    r = runCli({"save", "--model", "reverse", "--type", "q8_0", "--out", out});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(readFile(out).size() < first.size());
    QCOMPARE(GgufFile(out.toStdString()).string("transformer_atlas.saved_from"), std::string("reverse"));

    const QString directory = m_dir.filePath("a-directory.gguf");
    QVERIFY(QDir().mkpath(directory));
    r = runCli({"save", "--model", "reverse", "--out", directory});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("exists and is not a regular file"), qPrintable(r.err));
}

QTEST_GUILESS_MAIN(TestGgufSave)
#include "tst_ggufsave.moc"
