#include "engine/engine.h"
#include "engine/generator.h"
#include "io/gguf.h"
#include "io/ggufwriter.h"
#include "model/builtinmodels.h"
#include "model/ggufmodel.h"
#include "model/model.h"
#include "model/modeltokenizer.h"
#include "tensor/packedrows.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"
#include "view/specrun.h"
#include "view/viewspec.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include <cmath>
#include <functional>

using namespace atlas;
using namespace atlas::testing;

// tests/data/gguf/models/ holds the tiny test checkpoints converted to GGUF as llama.cpp's converter converts them
// (tests/tools/make_gguf_models.py: its names, the llama architecture's permuted q and k, stacked experts, Llama 3's
// scaling as rope_freqs), in F32 and Q8_0, and reference.json llama.cpp's logits on them (gguf_reference.mjs);
// reference-t5.json llama.cpp's logits on the t5 files, which node-llama-cpp does not run (make_gguf_t5_reference.py).
class TestGgufModels : public QObject
{
    Q_OBJECT

private slots:
    void readsTheCheckpointsWeights_data();
    void readsTheCheckpointsWeights();
    void logitsAgreeWithLlamaCpp_data();
    void logitsAgreeWithLlamaCpp();
    void keepsQuantizedMatricesPacked_data();
    void keepsQuantizedMatricesPacked();
    void t5LogitsAgreeWithLlamaCpp_data();
    void t5LogitsAgreeWithLlamaCpp();
    void readsT5AsLlamaCppRunsIt();
    void refusesWhatDoesNotFit();
    void readsGptOssAsLlamaCppConvertsIt();
    void keepsGptOssExpertsPacked_data();
    void keepsGptOssExpertsPacked();

private:
    QTemporaryDir m_dir;
};

namespace {

QString modelPath(const QString &file)
{
    return dataPath("gguf/models/" + file);
}

// Every parameter of `gguf` under the name and shape it has in `hf`, its values within `allowed(name, value)` of
// hf's (0: equal; −0 and +0 are equal).
void compareParameters(
    const Model &hf, const Model &gguf, const std::function<float(const std::string &, float)> &allowed)
{
    const auto pa = hf.parameters(), pb = gguf.parameters();
    QCOMPARE(pb.size(), pa.size());
    for (const auto &[key, tensor] : pa) {
        QVERIFY2(pb.count(key), key.c_str());
        const Tensor &t = *pb.at(key);
        QCOMPARE(t.shape(), tensor->shape());
        for (int64_t i = 0; i < t.numel(); ++i) {
            const float a = t.data()[i], b = tensor->data()[i];
            if (!(std::fabs(a - b) <= allowed(key, b)))
                QFAIL(qPrintable(QString("%1 (%2)[%3]: %4 against %5")
                                     .arg(key.c_str(), QString::fromStdString(gguf.name))
                                     .arg(i)
                                     .arg(a)
                                     .arg(b)));
        }
    }
}

// The forward and the cached generator on `ids` give the logits of `packed` with every weight of `decoded` (the same
// model, each weight decoded to float32 first) within 1e-5: the same products in tiles of rows.
void packedAgreesWithDecoded(
    std::shared_ptr<const Model> packed, std::shared_ptr<const Model> decoded, const std::vector<int> &ids)
{
    const auto logits = [&](std::shared_ptr<const Model> m) {
        Engine engine(m, Input {ids, {}});
        engine.runToEnd();
        return engine.trace().tensor("logits");
    };
    const float forward = maxDifference(logits(packed), logits(decoded));
    QVERIFY2(forward <= 1e-5f, qPrintable(QString("the forward's logits differ by %1").arg(forward)));
    const Generator fromPacked(packed, ids), fromDecoded(decoded, ids);
    const float generated = maxDifference(fromPacked.lastLogits(), fromDecoded.lastLogits());
    QVERIFY2(generated <= 1e-5f, qPrintable(QString("the generator's logits differ by %1").arg(generated)));
}

const char *const kCheckpoints[]
    = {"llama_tiny", "llama_hd_tiny", "mistral_tiny", "mixtral_tiny", "qwen2_tiny", "qwen3_moe_tiny", "olmo2_tiny",
        "smollm3_tiny", "gemma2_tiny", "gemma3_tiny", "gpt2_tiny", "neox_tiny", "phi3_tiny", "phi3_long_tiny"};

} // namespace

void TestGgufModels::readsTheCheckpointsWeights_data()
{
    QTest::addColumn<QString>("name");
    for (const char *name : kCheckpoints)
        QTest::newRow(name) << QString(name);
}

// The F32 file holds the checkpoint's own numbers: after the layout is undone, every parameter equals the
// safetensors one bit for bit, under the same name, and the config has the same shape and angles.
void TestGgufModels::readsTheCheckpointsWeights()
{
    QFETCH(QString, name);
    const Model hf = Model::load(dataPath(name).toStdString());
    const std::string path = modelPath(name + "-f32.gguf").toStdString();
    QVERIFY(isGgufFile(path));
    const Model gguf = Model::load(path);
    QCOMPARE(gguf.name, name.toStdString() + "-f32");
    QCOMPARE(gguf.dtype, std::string("F32"));
    const ModelConfig &a = hf.config, &b = gguf.config;
    QCOMPARE(b.family, a.family);
    QCOMPARE(b.layers, a.layers);
    QCOMPARE(b.heads, a.heads);
    QCOMPARE(b.kvHeadCount(), a.kvHeadCount());
    QCOMPARE(b.headDim(), a.headDim());
    QCOMPARE(b.dModel, a.dModel);
    QCOMPARE(b.dFF, a.dFF);
    QCOMPARE(b.vocab, a.vocab);
    QCOMPARE(b.experts, a.experts);
    QCOMPARE(b.expertTopK, a.expertTopK);
    QCOMPARE(b.tiedHead, a.tiedHead);
    QCOMPARE(b.qkNorm, a.qkNorm);
    QCOMPARE(double(b.lnEpsilon), double(a.lnEpsilon));
    QCOMPARE(b.rotatedDims(), a.rotatedDims());
    // Phi-3's LongRoPE attention factor, which the file holds in float32
    QVERIFY(std::fabs(b.ropeAmplitude(0) - a.ropeAmplitude(0)) <= 1e-6 * a.ropeAmplitude(0));
    // Llama 3's scaling arrives as per-pair factors (rope_freqs), computed by the converter in float32.
    const std::vector<double> fa = a.ropeFrequencies(0, 16), fb = b.ropeFrequencies(0, 16);
    QCOMPARE(fb.size(), fa.size());
    for (size_t j = 0; j < fa.size(); ++j)
        QVERIFY2(std::fabs(fb[j] - fa[j]) <= 1e-6 * fa[j],
            qPrintable(QString("pair %1: %2 against %3").arg(j).arg(fb[j]).arg(fa[j])));

    // Gemma's converter stores a norm's 1 + w in float32, which keeps w to the last bit of 1 + w only.
    const bool gemma = name.startsWith("gemma");
    compareParameters(hf, gguf, [gemma](const std::string &key, float b) {
        return gemma && key.find("norm") != std::string::npos ? std::ldexp(std::max(1.0f, std::fabs(1.0f + b)), -23)
                                                              : 0.0f;
    });
}

void TestGgufModels::logitsAgreeWithLlamaCpp_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<double>("tolerance");
    // F32: the same arithmetic in another order (measured: at most 5.9e-6 on these files, logits of about ±3). But
    // llama.cpp's GELU (GPT-2's, GPT-NeoX's) rounds its input and its output to half precision (ggml's table of
    // 65536 values, GGML_GELU_FP16), and GPT-NeoX's is the erf one, which llama.cpp replaces with the tanh
    // approximation (measured: 1.7e-3 and 1.4e-3); Gemma's GeGLU the same table.
    // Q8_0: llama.cpp also rounds each activation row to 8 bits for its Q8_0 × Q8_0 dot products, where this program
    // multiplies the dequantized weights in float32 (measured: largest differences 0.045 to 0.32). So on Q8_0 files
    // this program's logits must be nearer llama.cpp's, on average, than llama.cpp's own are to its logits of the F32
    // file (measured: 0.45 to 0.8 of that distance), and within 0.5 everywhere. A block read in the wrong order or with
    // the wrong scale moves the logits by about their own size.
    for (const char *name : kCheckpoints) {
        const std::string n = name;
        const bool gelu = n == "gpt2_tiny" || n == "neox_tiny" || n.starts_with("gemma");
        QTest::newRow((std::string(name) + "-f32").c_str()) << QString(name) + "-f32.gguf" << (gelu ? 5e-3 : 2e-5);
        QTest::newRow((std::string(name) + "-q8_0").c_str()) << QString(name) + "-q8_0.gguf" << 0.5;
    }
    // Qwen3 (QK-norm on each head, head_dim 12 in a model 32 wide, tied), its file written without qwen3_tiny's
    // attention biases, which llama.cpp's qwen3 does not load: another model than the checkpoint, the same for both.
    QTest::newRow("qwen3_tiny-f32") << "qwen3_tiny-f32.gguf" << 2e-5;
    QTest::newRow("qwen3_tiny-q8_0") << "qwen3_tiny-q8_0.gguf" << 0.5;
    // gpt-oss (the clamp at 7 binding on 58 of 1536 chosen gates and 180 ups): its experts decoded into an F32 file
    // (measured: 9.1e-6), and kept in MXFP4, which llama.cpp multiplies
    // with its activations rounded to 8 bits as for Q8_0 (measured: 0.215, all of it llama.cpp's own shift from its
    // logits of the F32 file; this program's logits stay within 2e-5 of those).
    QTest::newRow("gpt_oss_mxfp4_tiny-f32") << "gpt_oss_mxfp4_tiny-f32.gguf" << 2e-5;
    QTest::newRow("gpt_oss_mxfp4_tiny-mxfp4") << "gpt_oss_mxfp4_tiny-mxfp4.gguf" << 0.5;
}

void TestGgufModels::logitsAgreeWithLlamaCpp()
{
    QFETCH(QString, file);
    QFETCH(double, tolerance);
    QFile f(modelPath("reference.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject reference = QJsonDocument::fromJson(f.readAll()).object();
    // Phi-3's files read a longer sequence (gguf_reference.mjs says why); every other file the common one.
    const QJsonValue own = reference["ids_by_file"].toObject()[file];
    std::vector<int> ids;
    for (const QJsonValue &v : (own.isArray() ? own : reference["ids"]).toArray())
        ids.push_back(v.toInt());
    const QJsonArray rows = reference["models"].toObject()[file].toArray();
    QCOMPARE(size_t(rows.size()), ids.size());

    auto model = std::make_shared<const Model>(Model::load(modelPath(file).toStdString()));
    Engine engine(model, Input {ids, {}});
    engine.runToEnd();
    const Tensor &logits = engine.trace().tensor("logits");
    QCOMPARE(logits.shape(), (Shape {int64_t(ids.size()), model->config.vocab}));
    double worst = 0, largestLogit = 0;
    for (qsizetype t = 0; t < rows.size(); ++t) {
        const QJsonArray row = rows[t].toArray();
        QCOMPARE(row.size(), qsizetype(model->config.vocab));
        for (qsizetype v = 0; v < row.size(); ++v) {
            worst = std::max(worst, std::fabs(double(logits.data()[t * model->config.vocab + v]) - row[v].toDouble()));
            largestLogit = std::max(largestLogit, std::fabs(row[v].toDouble()));
        }
    }
    double sum = 0, shift = 0, largestShift = 0, fromF32 = 0;
    const bool quantized = !file.endsWith("-f32.gguf"); // its llama.cpp logits beside those of its F32 file
    const QJsonArray f32 = reference["models"].toObject()[file.section('-', 0, -2) + "-f32.gguf"].toArray();
    for (qsizetype t = 0; t < rows.size(); ++t)
        for (qsizetype v = 0; v < model->config.vocab; ++v) {
            sum += std::fabs(double(logits.data()[t * model->config.vocab + v]) - rows[t].toArray()[v].toDouble());
            const double own = std::fabs(rows[t].toArray()[v].toDouble() - f32[t].toArray()[v].toDouble());
            shift += own;
            largestShift = std::max(largestShift, own);
            fromF32 = std::max(fromF32,
                std::fabs(double(logits.data()[t * model->config.vocab + v]) - f32[t].toArray()[v].toDouble()));
        }
    const double n = double(rows.size()) * double(model->config.vocab);
    qInfo("%s: largest difference from llama.cpp's logits %.3g, mean %.3g; llama.cpp's own from its F32 file largest "
          "%.3g, mean %.3g; this program's from llama.cpp's of the F32 file largest %.3g",
        qPrintable(file), worst, sum / n, largestShift, shift / n, fromF32);
    if (file.endsWith("-mxfp4.gguf")) {
        // MXFP4 decodes exactly to the F32 file's values: the same logits as llama.cpp's of that file, where
        // llama.cpp's own on this file move by the 8-bit rounding of its activations.
        QVERIFY2(fromF32 <= 2e-5, qPrintable(QString("%1 from llama.cpp's logits of the F32 file").arg(fromF32)));
        QVERIFY2(worst <= tolerance, qPrintable(QString("%1 > %2").arg(worst).arg(tolerance)));
        return;
    }
    // On Q8_0 files the bound is 0.5, or llama.cpp's own largest q8-f32 difference where that is larger (phi3_long's
    // logits of ±5 move by up to 1.2 under llama.cpp's own quantization). On F32 files it is float32's rounding in
    // another order, relative to the logits' size (phi3_long's ±5 differ by 2.5e-5 in the sanitizer build on a Zen 5).
    const double bound = quantized ? std::max(tolerance, largestShift) : tolerance * std::max(1.0, largestLogit);
    QVERIFY2(worst <= bound, qPrintable(QString("%1 > %2").arg(worst).arg(bound)));
    if (quantized)
        QVERIFY2(sum < shift,
            qPrintable(QString("mean difference %1 against llama.cpp's own quantization shift %2")
                           .arg(sum / n)
                           .arg(shift / n)));
}

void TestGgufModels::t5LogitsAgreeWithLlamaCpp_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<double>("tolerance");
    // F32: float32 in another order, and llama.cpp's half-precision table of the GELU in the gated (v1.1) file,
    // relative to the logits' size. Q8_0: as for the other architectures' Q8_0 files, 0.5 or llama.cpp's own largest
    // shift from its logits of the F32 file, and a mean difference under llama.cpp's mean shift.
    QTest::newRow("t5_tiny-f32") << "t5_tiny-f32.gguf" << 1e-4;
    QTest::newRow("t5_tiny-q8_0") << "t5_tiny-q8_0.gguf" << 0.5;
    QTest::newRow("t5v11_tiny-f32") << "t5v11_tiny-f32.gguf" << 2e-3;
    QTest::newRow("t5v11_tiny-q8_0") << "t5v11_tiny-q8_0.gguf" << 0.5;
    // with a real 't5' tokenizer (SentencePiece's Unigram, NFKC's map): run from texts, as the app runs them
    QTest::newRow("t5v11_tiny_unigram-q8_0") << "t5v11_tiny_unigram-q8_0.gguf" << 0.5;
}

// A t5 file (llama.cpp's T5, as its converter writes T5ForConditionalGeneration) runs as llama.cpp runs it: the source
// through the encoder, the decoder's start token and the target through the decoder, every position's logits.
void TestGgufModels::t5LogitsAgreeWithLlamaCpp()
{
    QFETCH(QString, file);
    QFETCH(double, tolerance);
    QFile f(modelPath("reference-t5.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject models = QJsonDocument::fromJson(f.readAll()).object()["models"].toObject();
    const QJsonObject reference = models[file].toObject();
    const auto ids = [&](const char *key) {
        std::vector<int> out;
        for (const QJsonValue &v : reference[key].toArray())
            out.push_back(v.toInt());
        return out;
    };
    Input input {ids("tokens"), {}};
    input.source = ids("source");
    auto model = std::make_shared<const Model>(Model::load(modelPath(file).toStdString()));
    QCOMPARE(model->config.family, Family::T5);
    if (reference.contains("source_text")) { // the file's tokenizer gives llama.cpp's ids, </s> after the source
        ViewSpec spec;
        spec.text = reference["source_text"].toString().toStdString();
        spec.decoderText = reference["decoder_text"].toString().toStdString();
        const Input fromText = specInput(spec, *model, *tokenizerForModel(*model), file.toStdString());
        QCOMPARE(fromText.source, input.source);
        QCOMPARE(fromText.tokens, input.tokens);
    }
    Engine engine(model, input);
    engine.runToEnd();
    const Tensor &logits = engine.trace().tensor("logits");
    const QJsonArray rows = reference["logits"].toArray();
    // llama.cpp's own shift from its F32 file (a file without one, the unigram file, is held to the tolerance alone)
    const QJsonArray f32 = models[file.section('-', 0, -2) + "-f32.gguf"].toObject()["logits"].toArray();
    const int64_t V = model->config.vocab;
    QCOMPARE(logits.shape(), (Shape {int64_t(rows.size()), V}));
    double worst = 0, largest = 0, sum = 0, shift = 0, largestShift = 0;
    for (qsizetype t = 0; t < rows.size(); ++t)
        for (qsizetype v = 0; v < V; ++v) {
            const double theirs = rows[t].toArray()[v].toDouble(), own = logits.data()[t * V + v];
            worst = std::max(worst, std::fabs(own - theirs));
            sum += std::fabs(own - theirs);
            largest = std::max(largest, std::fabs(theirs));
            if (f32.isEmpty())
                continue;
            const double moved = std::fabs(theirs - f32[t].toArray()[v].toDouble());
            shift += moved;
            largestShift = std::max(largestShift, moved);
        }
    const double n = double(rows.size()) * double(V);
    qInfo("%s: largest difference from llama.cpp's logits %.3g, mean %.3g (logits up to %.3g); llama.cpp's own from "
          "its F32 file largest %.3g, mean %.3g",
        qPrintable(file), worst, sum / n, largest, largestShift, shift / n);
    if (file.endsWith("-f32.gguf") || f32.isEmpty()) {
        const double bound = f32.isEmpty() ? tolerance : tolerance * std::max(1.0, largest);
        QVERIFY2(worst <= bound, qPrintable(QString("%1 > %2").arg(worst).arg(bound)));
        return;
    }
    QVERIFY2(worst <= std::max(tolerance, largestShift), qPrintable(QString("%1 > %2").arg(worst).arg(tolerance)));
    QVERIFY2(sum < shift,
        qPrintable(
            QString("mean difference %1 against llama.cpp's own quantization shift %2").arg(sum / n).arg(shift / n)));
}

// llama.cpp's t5 buckets positions up to 128 apart and reads its head unscaled (from the embedding when the file has
// no output): the v1.1 file, whose checkpoint has both, is the checkpoint's model, every weight and every logit; the
// v1.0 file's tied head is read as an untied copy of the embedding.
void TestGgufModels::readsT5AsLlamaCppRunsIt()
{
    const Model hf = Model::load(dataPath("t5v11_tiny").toStdString());
    const Model gguf = Model::load(modelPath("t5v11_tiny-f32.gguf").toStdString());
    QCOMPARE(gguf.config.encoderLayers, hf.config.encoderLayers);
    QCOMPARE(gguf.config.layers, hf.config.layers);
    QCOMPARE(gguf.config.relativeMaxDistance, 128);
    QCOMPARE(gguf.config.gatedFfn, true);
    compareParameters(hf, gguf, [](const std::string &, float) { return 0.0f; });
    QFile f(dataPath("t5v11_tiny_ref/input.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject json = QJsonDocument::fromJson(f.readAll()).object();
    Input input;
    for (const QJsonValue &v : json["tokens"].toArray())
        input.tokens.push_back(v.toInt());
    for (const QJsonValue &v : json["source"].toArray())
        input.source.push_back(v.toInt());
    const auto logits = [&](const Model &m) {
        Engine engine(std::make_shared<const Model>(m), input);
        engine.runToEnd();
        return engine.trace().tensor("logits");
    };
    QCOMPARE(maxDifference(logits(gguf), logits(hf)), 0.0f);

    const Model v10 = Model::load(modelPath("t5_tiny-f32.gguf").toStdString());
    QCOMPARE(v10.config.tiedHead, false);
    QCOMPARE(v10.config.gatedFfn, false);
    QCOMPARE(v10.config.layers, 2); // the converted file's decoder (make_gguf_models.py: llama.cpp loads no more)
    const Model v10hf = Model::load(dataPath("t5_tiny").toStdString());
    QCOMPARE(maxDifference(*v10.parameters().at("lm_head.weight"), *v10hf.parameters().at("shared.weight")), 0.0f);
}

void TestGgufModels::keepsQuantizedMatricesPacked_data()
{
    QTest::addColumn<QString>("name");
    for (const char *name : kCheckpoints)
        QTest::newRow(name) << QString(name);
    QTest::newRow("qwen3_tiny") << QString("qwen3_tiny");
}

// A Q8_0 file's matrices stay in memory as the file's blocks (the float32 ones excepted), taking the file's bytes; the
// forward and the cached generator read them a tile at a time and give the logits of the same model with every weight
// decoded to float32 first.
void TestGgufModels::keepsQuantizedMatricesPacked()
{
    QFETCH(QString, name);
    const std::string path = modelPath(name + "-q8_0.gguf").toStdString();
    const auto packed = std::make_shared<const Model>(Model::load(path));
    const GgufFile file(path);
    size_t packedBytes = 0, fileBytes = 0;
    int packedCount = 0;
    for (const auto &[key, tensor] : packed->parameters()) {
        if (const PackedRows *rows = tensor->packing()) {
            QCOMPARE(rows->encoding(), std::string("Q8_0"));
            packedBytes += tensor->storedBytes();
            ++packedCount;
        }
    }
    for (const GgufFile::Entry &e : file.entries())
        if (e.type == GgmlType::Q8_0)
            fileBytes += e.bytes;
    QVERIFY(packedCount > 0);
    // Every Q8_0 tensor kept as its blocks; the experts share their stack's bytes, each counting its own share.
    QCOMPARE(packedBytes, fileBytes);
    if (name == "gpt2_tiny") // held [out, in] as the file keeps it, as every family's
        QVERIFY(packed->blocks[0].weight(BlockPart::Qkv).packing() != nullptr);

    auto decoded = std::make_shared<Model>(*packed);
    for (auto &[key, tensor] : decoded->parameters())
        tensor->values(); // its own float32 values, decoded whole
    for (const auto &[key, tensor] : decoded->parameters())
        QVERIFY2(tensor->packing() == nullptr, key.c_str());
    int stillPacked = 0;
    for (const auto &[key, tensor] : packed->parameters())
        stillPacked += tensor->packing() != nullptr;
    QCOMPARE(stillPacked, packedCount);

    // Each logit summed in the same order or nearly (measured: at most 0).
    packedAgreesWithDecoded(packed, decoded, {1, 5, 9, 2, 7, 3, 8});
}

void TestGgufModels::refusesWhatDoesNotFit()
{
    // Every case is the Qwen2 F32 file with one thing changed, written again; each refusal names the file and the key
    // or tensor.
    QFile original(modelPath("qwen2_tiny-f32.gguf"));
    QVERIFY(original.open(QIODevice::ReadOnly));
    const QByteArray bytes = original.readAll();
    const auto refused = [&](QByteArray changed, const QString &expected) {
        const QString path = m_dir.filePath("changed.gguf");
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
        out.write(changed);
        out.close();
        try {
            Model::load(path.toStdString());
            QFAIL(qPrintable("accepted: " + expected));
        } catch (const Error &e) {
            const QString message = QString::fromStdString(e.what());
            QVERIFY2(message.startsWith(path) && message.contains(expected), qPrintable(message));
        }
    };
    const auto replaced = [&](const QByteArray &from, const QByteArray &to) {
        QByteArray b = bytes;
        const qsizetype at = b.indexOf(from);
        if (at < 0)
            qFatal("no %s in the file", from.constData());
        return b.replace(at, from.size(), to);
    };
    // Same-length renames, so that every offset stays.
    refused(replaced("qwen2", "qwen9"),
        "metadata key 'general.architecture': 'qwen9' is not an architecture this program reads (it reads llama, "
        "qwen2");
    // An encoder's file: llama.cpp's bert holds no masked-LM head, and the message says so.
    {
        GgufWriter w;
        w.setString("general.architecture", "bert");
        refused(QByteArray::fromStdString(w.bytes()),
            "'bert' is not an architecture this program reads (it reads llama, qwen2, qwen3, qwen3moe, olmo2, smollm3, "
            "gemma2, gemma3, phi3, gpt2, mpt, gptneox, gpt-oss, t5): llama.cpp's encoder files are sentence-embedding "
            "models, "
            "written without a masked-LM head");
    }
    refused(replaced("qwen2.block_count", "qwen2.block_cOunt"), "metadata key 'qwen2.block_count': missing");
    refused(replaced("blk.1.ffn_down.weight", "blk.1.ffn_dowN.weight"), "tensor 'blk.1.ffn_down.weight' is missing");
    refused(replaced("output_norm.weight", "output_norX.weight"), "tensor 'output_norm.weight' is missing");
    // Without blk.0's q bias the file reads as a model without attention biases, where blk.0's k bias has no place.
    {
        QFile llama(modelPath("llama_tiny-f32.gguf"));
        QVERIFY(llama.open(QIODevice::ReadOnly));
        QByteArray b = llama.readAll();
        b.replace(b.indexOf("blk.0.attn_q.bias"), 17, "blk.0.attn_q.biaX");
        refused(b, "tensor 'blk.0.attn_k.bias' has no place in a llama model of these keys");
    }
    // The GELU that save names in a gptneox file it wrote (a GPT-2 layout with RoPE): tanh or erf, nothing else.
    {
        QFile neox(dataPath("gguf/saved/reverse-rope-q8_0.gguf"));
        QVERIFY(neox.open(QIODevice::ReadOnly));
        QByteArray b = neox.readAll();
        const QByteArray key = "transformer_atlas.gelu";
        const qsizetype value = b.indexOf(key) + key.size() + 4 + 8; // after the key: its type (4 bytes), length (8)
        QCOMPARE(b.mid(value, 4), QByteArray("tanh"));
        b.replace(value, 4, "tahn");
        refused(b, "metadata key 'transformer_atlas.gelu': 'tahn' is not a GELU (tanh or erf)");
    }
    // mpt: ALiBi from attention.max_alibi_bias, whose slopes are read for a maximum of 8 only; without the key and
    // without a position table the file is a model with no positions.
    {
        QFile mpt(dataPath("gguf/saved/reverse-alibi-q4_0.gguf"));
        QVERIFY(mpt.open(QIODevice::ReadOnly));
        const QByteArray original = mpt.readAll();
        const QByteArray key = "mpt.attention.max_alibi_bias";
        const qsizetype value = original.indexOf(key) + key.size() + 4; // after the key: its type (4 bytes)
        QCOMPARE(qFromLittleEndian<float>(original.constData() + value), 8.0f);
        QByteArray four = original;
        qToLittleEndian<float>(4.0f, four.data() + value);
        refused(four,
            "metadata key 'mpt.attention.max_alibi_bias': 4.0 is not read: ALiBi's slopes here are Press et "
            "al.'s, 2^(−8h/n), a maximum of 8");
        QByteArray none = original;
        none.replace(none.indexOf(key), key.size(), "mpt.attention.max_alibi_biaX");
        const QString path = m_dir.filePath("nopos.gguf");
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
        out.write(none);
        out.close();
        QCOMPARE(Model::load(path.toStdString()).config.positions, PositionKind::None);
        QCOMPARE(Model::load(dataPath("gguf/saved/reverse-alibi-q4_0.gguf").toStdString()).config.positions,
            PositionKind::Alibi);
    }
    // A tensor of another shape: blk.0.attn_q.weight's 32 rows (its ne[1]) read as 16.
    {
        QByteArray b = bytes;
        const QByteArray name = "blk.0.attn_q.weight";
        const qsizetype at = b.indexOf(name);
        QVERIFY(at > 0);
        const qsizetype ne1 = at + name.size() + 4 + 8; // after the name: n_dims (4 bytes), ne[0] (8)
        QCOMPARE(qFromLittleEndian<quint64>(b.constData() + ne1), quint64(32));
        qToLittleEndian<quint64>(16, b.data() + ne1);
        refused(b, "tensor 'blk.0.attn_q.weight' has shape [16, 32], the metadata implies [32, 32]");
    }
    // Phi-3's LongRoPE needs both lists of factors.
    {
        QFile phi3(modelPath("phi3_tiny-f32.gguf"));
        QVERIFY(phi3.open(QIODevice::ReadOnly));
        QByteArray oneList = phi3.readAll();
        oneList.replace(oneList.indexOf("rope_factors_short"), 18, "rope_factors_sport");
        refused(oneList, "tensor 'rope_factors_long.weight' without 'rope_factors_short.weight': LongRoPE needs both");
    }
}

QTEST_GUILESS_MAIN(TestGgufModels)
// gpt-oss as llama.cpp's converter writes it (make_gguf_models.py: GptOssModel): the experts split into ffn_gate_exps
// and ffn_up_exps (gate_up_proj's even and odd rows) and ffn_down_exps, in MXFP4 or decoded to F32, the sinks as
// attn_sinks. Both files read back as the safetensors checkpoint's numbers (−0 and +0 aside: ggml's MXFP4 has no −0),
// with llama.cpp's conventions where the file holds no key: YaRN's ramp on whole pairs, the clamp at 7.
void TestGgufModels::readsGptOssAsLlamaCppConvertsIt()
{
    const Model hf = Model::load(dataPath("gpt_oss_mxfp4_tiny").toStdString());
    QCOMPARE(hf.dtype, std::string("BF16 with MXFP4 experts"));
    for (const char *file : {"gpt_oss_mxfp4_tiny-mxfp4.gguf", "gpt_oss_mxfp4_tiny-f32.gguf"}) {
        const Model gguf = Model::load(modelPath(file).toStdString());
        const ModelConfig &a = hf.config, &b = gguf.config;
        QVERIFY(b.attentionSinks && b.stacksExperts() && b.qkvBias && b.outBias);
        QCOMPARE(b.modelType, a.modelType);
        QCOMPARE(b.slidingWindow, a.slidingWindow);
        QCOMPARE(b.windowedLayers, a.windowedLayers);
        QCOMPARE(b.experts, a.experts);
        QCOMPARE(b.expertTopK, a.expertTopK);
        QCOMPARE(b.dFF, a.dFF);
        QCOMPARE(b.headDim(), a.headDim());
        QCOMPARE(b.gluClamp, 7.0f);
        QVERIFY(b.ropeScaling.kind == RopeScaling::Kind::Yarn && b.ropeScaling.truncate && !a.ropeScaling.truncate);
        QCOMPARE(b.ropeScaling.factor, a.ropeScaling.factor);
        QCOMPARE(b.ropeAmplitude(), a.ropeAmplitude());
        compareParameters(hf, gguf, [](const std::string &, float) { return 0.0f; });
    }
    QCOMPARE(Model::load(modelPath("gpt_oss_mxfp4_tiny-mxfp4.gguf").toStdString()).dtype, std::string("MXFP4_MOE"));
}

void TestGgufModels::keepsGptOssExpertsPacked_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("encoding");
    QTest::newRow("GGUF, MXFP4") << modelPath("gpt_oss_mxfp4_tiny-mxfp4.gguf") << "MXFP4";
    QTest::newRow("safetensors, MXFP4 blocks") << dataPath("gpt_oss_mxfp4_tiny") << "MXFP4";
}

// gpt-oss's experts stay in their MXFP4 blocks, 4.25 bits a weight: each expert's Wᵀ as rows the products read a tile
// at a time, seen by everything else as the stacked [E, D, 2F] and [E, F, D] (tst_engine_parity compares those values
// with transformers' bit for bit). The forward and the cached generator give the logits of the same model with every
// weight decoded first.
void TestGgufModels::keepsGptOssExpertsPacked()
{
    QFETCH(QString, path);
    QFETCH(QString, encoding);
    const auto packed = std::make_shared<const Model>(Model::load(path.toStdString()));
    for (int layer = 0; layer < packed->config.layers; ++layer)
        for (const BlockPart part : {BlockPart::ExpertsGateUp, BlockPart::ExpertsDown}) {
            const Tensor &t = packed->blocks[size_t(layer)].weight(part);
            QVERIFY(t.packing() != nullptr);
            QCOMPARE(QString::fromStdString(t.packing()->encoding()), encoding);
            QCOMPARE(t.storedBytes(), size_t(t.numel()) / 32 * 17); // a scale byte and 16 code bytes per 32 values
        }
    const Shape gateUp = packed->blocks[0].weight(BlockPart::ExpertsGateUp).shape();
    QCOMPARE(gateUp, (Shape {4, 32, 64}));
    auto decoded = std::make_shared<Model>(*packed);
    for (auto &[key, tensor] : decoded->parameters())
        tensor->values();
    packedAgreesWithDecoded(packed, decoded, {1, 5, 9, 2, 7, 3, 8, 21, 40});
}

#include "tst_ggufmodels.moc"
