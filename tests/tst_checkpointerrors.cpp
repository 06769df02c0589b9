// Loading refuses a broken checkpoint, of GPT-2's layout or another family's, with an atlas::Error naming the file,
// the key or tensor and the problem (Model::load, docs/models.md "Families"); nothing is half-loaded.
#include "engine/engine.h"
#include "errortesting.h"
#include "model/model.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include <cstring>
#include <functional>
#include <map>

using namespace atlas;
using namespace atlas::testing;
using atlas::testing::errorFrom;

namespace {

// A safetensors file as raw pieces, to write broken copies without the engine's own writer.
struct RawSafetensors
{
    QJsonObject metadata;
    std::map<QString, std::pair<QJsonObject, QByteArray>> tensors; // name -> (header entry, bytes)
};

RawSafetensors readRawSafetensors(const QString &path)
{
    const QByteArray file = readFile(path);
    const quint64 n = qFromLittleEndian<quint64>(file.constData());
    const QJsonObject header = QJsonDocument::fromJson(file.mid(8, qsizetype(n))).object();
    RawSafetensors raw;
    for (auto it = header.begin(); it != header.end(); ++it) {
        const QJsonObject entry = it.value().toObject();
        if (it.key() == QLatin1String("__metadata__")) {
            raw.metadata = entry;
            continue;
        }
        const QJsonArray off = entry.value("data_offsets").toArray();
        const qint64 begin = off.at(0).toInteger(), end = off.at(1).toInteger();
        raw.tensors[it.key()] = {entry, file.mid(qsizetype(8 + n + begin), qsizetype(end - begin))};
    }
    return raw;
}

void writeRawSafetensors(const QString &path, const RawSafetensors &raw)
{
    QJsonObject header;
    header.insert("__metadata__", raw.metadata);
    QByteArray data;
    for (const auto &[name, piece] : raw.tensors) {
        QJsonObject entry = piece.first;
        const qint64 begin = data.size(), end = begin + piece.second.size();
        entry.insert("data_offsets", QJsonArray {begin, end});
        header.insert(name, entry);
        data += piece.second;
    }
    QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
    json.append((8 - json.size() % 8) % 8, ' ');
    QByteArray length(8, '\0');
    qToLittleEndian<quint64>(quint64(json.size()), length.data());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(length + json + data);
}

// Model::load refuses `dir` with an atlas::Error whose message mentions every one of `mentions`.
void refusedNaming(const QString &dir, const QStringList &mentions)
{
    const QString error = errorFrom([&] { Model::load(dir.toStdString()); });
    QVERIFY2(!error.isNull(), "Model::load accepted a broken model");
    QVERIFY2(!error.startsWith("[not an atlas::Error]"), qPrintable(error));
    for (const QString &m : mentions)
        QVERIFY2(error.contains(m), qPrintable("the message does not mention " + m + ": " + error));
    qInfo("%s", qPrintable(error));
}

// Rewrites the JSON object in `path` after `edit`.
void editJson(const QString &path, const std::function<void(QJsonObject &)> &edit)
{
    QJsonObject o = QJsonDocument::fromJson(readFile(path)).object();
    edit(o);
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(QJsonDocument(o).toJson());
}

} // namespace

class TestCheckpointErrors : public QObject
{
    Q_OBJECT

private slots:
    void loadReportsBrokenModels_data();
    void loadReportsBrokenModels();
    void loadReportsBrokenFamilyCheckpoints_data();
    void loadReportsBrokenFamilyCheckpoints();
    void gemma3MultimodalOpensInBothLayouts();
};

void TestCheckpointErrors::loadReportsBrokenModels_data()
{
    QTest::addColumn<QString>("broken"); // what to break
    QTest::addColumn<QStringList>("mentions");
    QTest::newRow("missing config.json") << "config" << QStringList {"config.json"};
    QTest::newRow("missing tensor") << "missing" << QStringList {"model.safetensors", "h.1.ln_2.bias"};
    QTest::newRow("wrong shape") << "shape" << QStringList {"model.safetensors", "h.0.mlp.c_fc.weight"};
}

void TestCheckpointErrors::loadReportsBrokenModels()
{
    QFETCH(QString, broken);
    QFETCH(QStringList, mentions);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString dir = tmp.path() + "/broken_model";
    QVERIFY(QDir().mkpath(dir));
    if (broken != "config")
        QVERIFY(QFile::copy(dataPath("gpt2_tiny/config.json"), dir + "/config.json"));
    RawSafetensors raw = readRawSafetensors(dataPath("gpt2_tiny/model.safetensors"));
    QCOMPARE(raw.tensors.size(), size_t(28));
    if (broken == "missing")
        raw.tensors.erase("h.1.ln_2.bias");
    if (broken == "shape") // [32, 128] -> [128, 32]: same byte count, so only the shape check can catch it
        raw.tensors["h.0.mlp.c_fc.weight"].first.insert("shape", QJsonArray {128, 32});
    writeRawSafetensors(dir + "/model.safetensors", raw);
    refusedNaming(dir, mentions);
}

void TestCheckpointErrors::loadReportsBrokenFamilyCheckpoints_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("broken");
    QTest::addColumn<QStringList>("mentions");
    QTest::newRow("unknown model_type") << "llama_tiny"
                                        << "type" << QStringList {"config.json", "model_type", "falcon"};
    QTest::newRow("K/V heads that do not divide") << "llama_tiny"
                                                  << "kv" << QStringList {"num_key_value_heads", "3"};
    QTest::newRow("rope_scaling of an unsupported kind") << "llama_tiny"
                                                         << "dynamic" << QStringList {"rope_scaling", "dynamic"};
    // head_dim 16: heads wider than hidden / heads are read (llama_hd_tiny), and then q_proj must be 64 wide.
    QTest::newRow("head_dim that the weights do not have")
        << "llama_tiny"
        << "headdim" << QStringList {"model.layers.0.self_attn.q_proj.weight", "64"};
    QTest::newRow("layer_types of another length") << "qwen2_swa_tiny"
                                                   << "layertypes" << QStringList {"layer_types", "3 layers"};
    QTest::newRow("Gemma 2's hidden_activation not GELU")
        << "gemma2_tiny"
        << "gemmaact" << QStringList {"hidden_activation", "silu", "GeGLU"};
    QTest::newRow("Gemma 3's local layers scaled in rope_parameters")
        << "gemma3_tiny"
        << "ropeparams" << QStringList {"config.json", "rope_parameters.sliding_attention", "yarn"};
    QTest::newRow("a gemma3 config without text_config")
        << "gemma3_mm_tiny"
        << "notext" << QStringList {"config.json", "text_config", "gemma3"};
    QTest::newRow("a gemma3 checkpoint whose language model is missing")
        << "gemma3_mm_tiny"
        << "nolanguage" << QStringList {"language_model.model.embed_tokens.weight", "gemma3"};
    QTest::newRow("Qwen3-MoE's chosen experts not renormalised")
        << "qwen3_moe_tiny"
        << "normtopk" << QStringList {"config.json", "norm_topk_prob"};
    QTest::newRow("Qwen3-MoE with dense layers")
        << "qwen3_moe_tiny"
        << "mlponly" << QStringList {"config.json", "mlp_only_layers", "decoder_sparse_step"};
    QTest::newRow("gpt-oss without its sinks")
        << "gpt_oss_tiny"
        << "nosinks" << QStringList {"model.layers.0.self_attn.sinks", "missing"};
    QTest::newRow("gpt-oss experts stacked for another width")
        << "gpt_oss_tiny"
        << "osswidth" << QStringList {"model.layers.0.mlp.experts.gate_up_proj", "[4, 32, 40]", "[4, 32, 48]"};
    const QString blocks = "model.layers.0.mlp.experts.gate_up_proj_blocks",
                  scales = "model.layers.0.mlp.experts.down_proj_scales";
    QTest::newRow("gpt-oss MXFP4 blocks not of 16 bytes")
        << "gpt_oss_mxfp4_tiny"
        << "mxfp4rank" << QStringList {blocks, "[4, 64, 16]", "not [experts, rows, blocks, 16]"};
    QTest::newRow("gpt-oss MXFP4 scales not one a block")
        << "gpt_oss_mxfp4_tiny"
        << "mxfp4scales"
        << QStringList {"model.layers.0.mlp.experts.down_proj_blocks", "[4, 16, 2]", "one scale a block"};
    QTest::newRow("gpt-oss MXFP4 blocks not bytes") << "gpt_oss_mxfp4_tiny"
                                                    << "mxfp4dtype" << QStringList {blocks, "dtype I8", "U8"};
    QTest::newRow("gpt-oss MXFP4 scale of 255, E8M0's NaN")
        << "gpt_oss_mxfp4_tiny"
        << "mxfp4nan" << QStringList {scales, "scale [0, 5, 0] is 255, E8M0's NaN"};
    QTest::newRow("gpt-oss MXFP4 scale that overflows float32")
        << "gpt_oss_mxfp4_tiny"
        << "mxfp4overflow" << QStringList {scales, "scale [0, 5, 0] is 254: 2^127 overflows float32"};
    QTest::newRow("gpt-oss MXFP4 experts of another width")
        << "gpt_oss_mxfp4_tiny"
        << "mxfp4width" << QStringList {blocks, "decodes to shape [4, 32, 64]", "[4, 32, 48]"};
    QTest::newRow("a soft-cap of 0") << "gemma2_tiny"
                                     << "softcap" << QStringList {"attn_logit_softcapping", "0"};
    QTest::newRow("hidden_size missing") << "mistral_tiny"
                                         << "nohidden" << QStringList {"config.json", "hidden_size"};
    QTest::newRow("untied without lm_head") << "llama_tiny"
                                            << "nohead" << QStringList {"lm_head.weight", "missing"};
    QTest::newRow("k_proj misshaped") << "mistral_tiny"
                                      << "kshape"
                                      << QStringList {"model.safetensors", "model.layers.1.self_attn.k_proj.weight"};
    QTest::newRow("shard missing") << "qwen2_tiny"
                                   << "noshard"
                                   << QStringList {"model.safetensors.index.json", "model-00002-of-00002.safetensors"};
    QTest::newRow("shard outside the directory")
        << "qwen2_tiny"
        << "escape" << QStringList {"model.safetensors.index.json", "../", "not a file name"};
    QTest::newRow("rotary_pct that turns an odd number of dimensions")
        << "neox_tiny"
        << "oddrotary" << QStringList {"rotary_pct", "even"};
    QTest::newRow("attention_types naming other layers than num_layers")
        << "neo_tiny"
        << "types" << QStringList {"attention_types", "3 layers", "num_layers is 2"};
    QTest::newRow("an attention kind neither global nor local") << "neo_tiny"
                                                                << "kind" << QStringList {"attention_types", "sparse"};
    QTest::newRow("a BertModel without its heads")
        << "bert_tiny"
        << "bertmodel" << QStringList {"model.safetensors", "cls.predictions", "BertForMaskedLM"};
    QTest::newRow("relative_key_query positions in BERT")
        << "bert_tiny"
        << "relative" << QStringList {"position_embedding_type", "relative_key_query"};
    QTest::newRow("a T5 encoder alone") << "t5_tiny"
                                        << "t5encoder"
                                        << QStringList {"is_encoder_decoder", "T5EncoderModel", "config.json"};
    QTest::newRow("a T5 checkpoint without its decoder")
        << "t5_tiny"
        << "nodecoder" << QStringList {"model.safetensors", "decoder", "T5ForConditionalGeneration"};
    QTest::newRow("a T5 feed-forward of an unknown kind")
        << "t5v11_tiny"
        << "ffproj" << QStringList {"feed_forward_proj", "gated-swish"};
    QTest::newRow("T5 relative attention bias misshaped")
        << "t5_tiny"
        << "t5bias" << QStringList {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", "[8, 4]"};
    QTest::newRow("index names a tensor its shard lacks")
        << "qwen2_tiny"
        << "misplaced" << QStringList {"model.norm.weight", "no such tensor"};
}

void TestCheckpointErrors::loadReportsBrokenFamilyCheckpoints()
{
    QFETCH(QString, model);
    QFETCH(QString, broken);
    QFETCH(QStringList, mentions);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString dir = tmp.path() + "/" + model;
    QVERIFY(QDir().mkpath(dir));
    for (const QString &file : QDir(dataPath(model)).entryList(QDir::Files))
        QVERIFY(QFile::copy(dataPath(model) + "/" + file, dir + "/" + file));
    const QString config = dir + "/config.json", index = dir + "/model.safetensors.index.json";
    const std::map<QString, std::function<void(QJsonObject &)>> configEdits = {
        {"type", [](QJsonObject &o) { o["model_type"] = "falcon"; }},
        {"kv", [](QJsonObject &o) { o["num_key_value_heads"] = 3; }},
        {"dynamic",
            [](QJsonObject &o) {
                o["rope_scaling"] = QJsonObject {{"rope_type", "dynamic"}, {"factor", 4}};
            }},
        {"headdim", [](QJsonObject &o) { o["head_dim"] = 16; }},
        {"layertypes",
            [](QJsonObject &o) {
                o["layer_types"] = QJsonArray {"full_attention", "sliding_attention"};
            }},
        {"nohidden", [](QJsonObject &o) { o.remove("hidden_size"); }},
        {"gemmaact", [](QJsonObject &o) { o["hidden_activation"] = "silu"; }},
        {"ropeparams",
            [](QJsonObject &o) {
                o.remove("rope_theta");
                o["rope_parameters"] = QJsonObject {{"full_attention", QJsonObject {{"rope_theta", 1e6}}},
                    {"sliding_attention", QJsonObject {{"rope_theta", 1e4}, {"rope_type", "yarn"}}}};
            }},
        {"softcap", [](QJsonObject &o) { o["attn_logit_softcapping"] = 0; }},
        {"notext", [](QJsonObject &o) { o.remove("text_config"); }},
        {"normtopk", [](QJsonObject &o) { o["norm_topk_prob"] = false; }},
        {"mlponly", [](QJsonObject &o) { o["mlp_only_layers"] = QJsonArray {1}; }},
        {"osswidth", [](QJsonObject &o) { o["intermediate_size"] = 24; }},
        {"mxfp4width", [](QJsonObject &o) { o["intermediate_size"] = 24; }},
        {"oddrotary", [](QJsonObject &o) { o["rotary_pct"] = 0.375; }}, // 8 · 0.375 = 3
        {"relative", [](QJsonObject &o) { o["position_embedding_type"] = "relative_key_query"; }},
        {"t5encoder", [](QJsonObject &o) { o["is_encoder_decoder"] = false; }},
        {"ffproj", [](QJsonObject &o) { o["feed_forward_proj"] = "gated-swish"; }},
        {"types",
            [](QJsonObject &o) {
                // one pattern, repeated once: appended, since QJsonArray {QJsonArray {…}} is a copy for one compiler
                // and a nesting for another
                QJsonArray types;
                types.append(QJsonArray {QJsonArray {"global", "local", "global"}, 1});
                o["attention_types"] = types;
            }},
        {"kind",
            [](QJsonObject &o) {
                // one pattern, repeated once: appended, since QJsonArray {QJsonArray {…}} is a copy for one compiler
                // and a nesting for another
                QJsonArray types;
                types.append(QJsonArray {QJsonArray {"global", "sparse"}, 1});
                o["attention_types"] = types;
            }},
    };
    if (configEdits.count(broken))
        editJson(config, configEdits.at(broken));
    if (broken == "nohead" || broken == "kshape" || broken == "bertmodel" || broken == "nodecoder" || broken == "t5bias"
        || broken == "nolanguage" || broken == "nosinks" || broken.startsWith("mxfp4")) {
        RawSafetensors raw = readRawSafetensors(dir + "/model.safetensors");
        const auto tensor
            = [&raw](const char *name) -> std::pair<QJsonObject, QByteArray> & { return raw.tensors.at(name); };
        const char *gateUp = "model.layers.0.mlp.experts.gate_up_proj_blocks",
                   *downScales = "model.layers.0.mlp.experts.down_proj_scales";
        if (broken == "nolanguage") // the vision tower alone
            std::erase_if(raw.tensors, [](const auto &entry) { return entry.first.startsWith("language_model."); });
        else if (broken == "bertmodel")
            std::erase_if(raw.tensors, [](const auto &entry) { return entry.first.startsWith("cls."); });
        else if (broken == "nodecoder")
            std::erase_if(raw.tensors, [](const auto &entry) { return entry.first.startsWith("decoder."); });
        else if (broken == "t5bias") // [8, 4] -> [4, 8]
            raw.tensors["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"].first.insert(
                "shape", QJsonArray {4, 8});
        else if (broken == "nohead")
            QVERIFY(raw.tensors.erase("lm_head.weight") == 1);
        else if (broken == "nosinks")
            QVERIFY(raw.tensors.erase("model.layers.0.self_attn.sinks") == 1);
        else if (broken == "mxfp4rank") // [4, 64, 1, 16] -> [4, 64, 16]: the same bytes
            tensor(gateUp).first.insert("shape", QJsonArray {4, 64, 16});
        else if (broken == "mxfp4scales") // [4, 32, 1] -> [4, 16, 2]: the same bytes
            tensor(downScales).first.insert("shape", QJsonArray {4, 16, 2});
        else if (broken == "mxfp4dtype")
            tensor(gateUp).first.insert("dtype", "I8");
        else if (broken == "mxfp4nan") // expert 0, row 5
            tensor(downScales).second[5] = char(255);
        else if (broken == "mxfp4overflow") // its largest code is level 7 (6) by construction: 6 · 2^127
            tensor(downScales).second[5] = char(254);
        else if (broken == "mxfp4width")
            ; // the config's edit
        else // [16, 32] -> [32, 16]: the same bytes, so only the shape check can catch it
            raw.tensors["model.layers.1.self_attn.k_proj.weight"].first.insert("shape", QJsonArray {32, 16});
        writeRawSafetensors(dir + "/model.safetensors", raw);
    }
    if (broken == "noshard")
        QVERIFY(QFile::remove(dir + "/model-00002-of-00002.safetensors"));
    if (broken == "escape" || broken == "misplaced")
        editJson(index, [broken](QJsonObject &o) {
            QJsonObject map = o["weight_map"].toObject();
            if (broken == "escape")
                map["model.norm.weight"] = "../model-00002-of-00002.safetensors";
            else // it is in the second shard
                map["model.norm.weight"] = "model-00001-of-00002.safetensors";
            o["weight_map"] = map;
        });
    refusedNaming(dir, mentions);
}

// Gemma 3 4B and up are saved as Gemma3ForConditionalGeneration: the language model under "language_model.model."
// (transformers before 4.52), or under "model.language_model." (after), its config as text_config, beside a vision
// tower the app leaves unread. Both open as the text model they hold, logits for logits (gemma3_mm_tiny wraps
// gemma3_tiny's weights; its reference is gemma3_tiny's forward).
void TestCheckpointErrors::gemma3MultimodalOpensInBothLayouts()
{
    const Input input {{3, 17, 42, 8, 0, 25, 63, 11}, {}};
    const auto logitsOf = [&](const std::string &dir) {
        Engine e(std::make_shared<Model>(Model::load(dir)), input);
        e.runToEnd();
        return e.trace().tensor("logits");
    };
    const Tensor text = logitsOf(dataPath("gemma3_tiny").toStdString());
    const Model older = Model::load(dataPath("gemma3_mm_tiny").toStdString());
    QCOMPARE(QString::fromStdString(older.config.multimodalType), QString("gemma3"));
    QCOMPARE(QString::fromStdString(older.config.modelType), QString("gemma3_text"));
    QVERIFY(older.config.qkNorm == QkNorm::Heads && older.config.layerNorm == LayerNormPlacement::Sandwich);
    QTemporaryDir tmp;
    const QString dir = tmp.path() + "/newer";
    QVERIFY(QDir().mkpath(dir));
    QVERIFY(QFile::copy(dataPath("gemma3_mm_tiny") + "/config.json", dir + "/config.json"));
    RawSafetensors raw = readRawSafetensors(dataPath("gemma3_mm_tiny") + "/model.safetensors"), renamed;
    renamed.metadata = raw.metadata;
    for (auto &[name, piece] : raw.tensors)
        renamed.tensors[name.startsWith("language_model.model.")
                ? "model.language_model." + name.mid(int(strlen("language_model.model.")))
                : name]
            = piece;
    writeRawSafetensors(dir + "/model.safetensors", renamed);
    for (const std::string &path : {dataPath("gemma3_mm_tiny").toStdString(), dir.toStdString()}) {
        const Tensor logits = logitsOf(path);
        QCOMPARE(logits.shape(), text.shape());
        for (int64_t i = 0; i < text.numel(); ++i)
            QCOMPARE(logits.data()[i], text.data()[i]);
    }
}

QTEST_GUILESS_MAIN(TestCheckpointErrors)
#include "tst_checkpointerrors.moc"
