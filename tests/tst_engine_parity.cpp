// Engine parity: every tensor the engine traces matches an independent PyTorch reference
// (tests/tools/make_reference.py wrote the fixtures under tests/data), stepping is exact, and bad input
// or bad model files raise atlas::Error with a useful message.

#include "engine/attentiontrace.h"
#include "engine/blockcomponents.h"
#include "engine/engine.h"
#include "engine/outputhead.h"
#include "errortesting.h"
#include "io/npy.h"
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

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>

using namespace atlas;
using namespace atlas::testing;

namespace {

std::vector<int> intList(const QJsonValue &value)
{
    std::vector<int> out;
    for (const QJsonValue &v : value.toArray())
        out.push_back(v.toInt());
    return out;
}

// The input the reference was computed on: gpt2_tiny*_ref/tokens.json or variant_ref/input.json.
// Checkpoints in the layouts of other families, each with its PyTorch reference (tests/tools/make_family_reference.py):
// Llama (GQA, biases, untied, llama3 rope_scaling, F32; and heads of head_dim 12 in a model 32 wide), Qwen2
// (multi-query, tied, BF16 in two shards), Qwen3 (QK-norm, head_dim 12, every attention bias, BF16), OLMo 2, Gemma 2
// and 3, SmolLM3 (NoPE layers with a window, BF16), Phi-3 (fused projections, partial rotary, LongRoPE's short and
// long factors), Mistral (sliding window, F16), GPT-NeoX (partial rotary with a
// parallel residual, F32; full rotary, sequential, F16) and GPT-Neo (a global and a local layer, unscaled scores,
// BF16), BERT (pre-training heads, F32; masked-LM head with the older gamma/beta names, F16; relative_key positions)
// Mixtral (top-2 of 4 SwiGLU experts, renormalised gates, BF16) and gpt-oss (sinks, YaRN, a window on one layer, a
// router with a bias and stacked clamped experts with biases, BF16; and its experts as MXFP4 blocks, whose decoded
// values, mxfp4.<parameter>.npy, must equal transformers' bit for bit).
constexpr const char *kFamilyModels[] = {"llama_tiny", "llama_hd_tiny", "qwen2_tiny", "qwen2_swa_tiny", "qwen3_tiny",
    "olmo2_tiny", "gemma2_tiny", "gemma3_tiny", "gemma3_mm_tiny", "smollm3_tiny", "phi3_tiny", "phi3_long_tiny",
    "qwen3_moe_tiny", "mistral_tiny", "neox_tiny", "neox_seq_tiny", "neo_tiny", "bert_tiny", "bert_mlm_tiny",
    "bert_rel_tiny", "mixtral_tiny", "gpt_oss_tiny", "gpt_oss_mxfp4_tiny", "t5_tiny", "t5v11_tiny"};

Input inputFor(const QString &model)
{
    if (model.startsWith(QLatin1String("variant"))) {
        const QJsonObject o = QJsonDocument::fromJson(readFile(dataPath("variant_ref/input.json"))).object();
        return Input {intList(o.value("tokens")), intList(o.value("padding"))};
    }
    if (QFile::exists(dataPath(model + "_ref/input.json"))) { // an encoder-decoder's source and decoder input
        const QJsonObject o = QJsonDocument::fromJson(readFile(dataPath(model + "_ref/input.json"))).object();
        Input input {intList(o.value("tokens")), {}};
        input.source = intList(o.value("source"));
        return input;
    }
    const QString own = dataPath(model + "_ref/tokens.json");
    const QJsonDocument d
        = QJsonDocument::fromJson(readFile(QFile::exists(own) ? own : dataPath("gpt2_tiny_ref/tokens.json")));
    return Input {intList(d.array()), {}};
}

// The message of the atlas::Error that f throws; a null string when it throws nothing.
using atlas::testing::errorFrom;

QString cellString(const Shape &shape, int64_t flat)
{
    QStringList parts;
    for (auto it = shape.rbegin(); it != shape.rend(); ++it) {
        parts.prepend(QString::number(flat % *it));
        flat /= *it;
    }
    return "[" + parts.join(", ") + "]";
}

// Empty when `got` matches `want`: same shape, -inf at the same cells, and on finite cells
// max |got - want| <= relTol * max |want|. Otherwise says what differs, and where.
QString compare(const Tensor &got, const Tensor &want, double relTol)
{
    if (got.shape() != want.shape())
        return QString("shape %1, expected %2")
            .arg(QString::fromStdString(got.shapeString()), QString::fromStdString(want.shapeString()));
    double maxRef = 0.0, maxDiff = 0.0;
    int64_t worst = -1;
    for (int64_t i = 0; i < want.numel(); ++i) {
        const float g = got.data()[i], w = want.data()[i];
        if (std::isinf(w) || std::isinf(g) || std::isnan(g)) {
            if (g != w)
                return QString("cell %1 is %2, expected %3").arg(cellString(want.shape(), i)).arg(g).arg(w);
            continue;
        }
        maxRef = std::max(maxRef, double(std::fabs(w)));
        if (const double d = std::fabs(double(g) - double(w)); d > maxDiff) {
            maxDiff = d;
            worst = i;
        }
    }
    if (maxDiff <= relTol * maxRef)
        return {};
    return QString("max |diff| %1 > %2 (= %3 * max |ref| %4), worst cell %5: got %6, expected %7")
        .arg(maxDiff)
        .arg(relTol * maxRef)
        .arg(relTol)
        .arg(maxRef)
        .arg(cellString(want.shape(), worst))
        .arg(got.data()[worst])
        .arg(want.data()[worst]);
}

bool bitIdentical(const Trace &a, const Trace &b, QString *why)
{
    if (a.entries().size() != b.entries().size()) {
        *why = QString("%1 entries vs %2").arg(a.entries().size()).arg(b.entries().size());
        return false;
    }
    for (size_t i = 0; i < a.entries().size(); ++i) {
        const TraceEntry &x = a.entries()[i], &y = b.entries()[i];
        *why = QString::fromStdString(x.name + " / " + y.name);
        if (x.name != y.name || x.tensor.shape() != y.tensor.shape())
            return false;
        if (std::memcmp(x.tensor.data(), y.tensor.data(), x.tensor.bytes()) != 0) {
            *why += " differ in their bits";
            return false;
        }
    }
    return true;
}

bool allowed(const Input &input, bool causal, int query, int key)
{
    const bool isPadding = std::find(input.padding.begin(), input.padding.end(), key) != input.padding.end();
    return (!causal || key <= query) && !isPadding;
}

} // namespace

class TestEngineParity : public QObject
{
    Q_OBJECT

private slots:
    void fixturesArePresent();
    void parity_data();
    void parity();
    void onDemandAttentionEqualsTheReference_data();
    void onDemandAttentionEqualsTheReference();
    void attentionIsKeptOnDemandOnlyWhenWholeMatricesDoNotFit();
    void bertReadsAPairOfSegments();
    void formulasAddOnlyTheBiasesTheModelHas_data();
    void formulasAddOnlyTheBiasesTheModelHas();
    void traceHasExactlyTheDocumentedNames_data();
    void traceHasExactlyTheDocumentedNames();
    void probsAreZeroWhereMaskedAndRowsSumToOne_data();
    void probsAreZeroWhereMaskedAndRowsSumToOne();
    void independentRunsAreBitIdentical();
    void steppingBackAndForthIsExact_data();
    void steppingBackAndForthIsExact();
    void engineRejectsBadInput_data();
    void engineRejectsBadInput();
    void engineAcceptsAFullContext();

private:
    const Engine *finishedRun(const QString &model);
    std::shared_ptr<const Model> loadModel(const QString &model);

    std::map<QString, std::unique_ptr<Engine>> m_runs; // model directory -> engine run to the end
    std::map<QString, QString> m_errors; // model directory -> why it could not run
};

std::shared_ptr<const Model> TestEngineParity::loadModel(const QString &model)
{
    return std::make_shared<const Model>(Model::load(dataPath(model).toStdString()));
}

// The engine for `model` on its reference input, run to the end once and shared by the tests.
const Engine *TestEngineParity::finishedRun(const QString &model)
{
    if (auto it = m_runs.find(model); it != m_runs.end())
        return it->second.get();
    if (m_errors.count(model))
        return nullptr;
    const QString error = errorFrom([&] {
        auto engine = std::make_unique<Engine>(loadModel(model), inputFor(model));
        if (!engine->runToEnd())
            throw Error("runToEnd() returned false without a progress callback");
        m_runs[model] = std::move(engine);
    });
    if (!error.isNull()) {
        m_errors[model] = model + ": " + error;
        return nullptr;
    }
    return m_runs[model].get();
}

void TestEngineParity::fixturesArePresent()
{
    for (const char *dir : {"gpt2_tiny_ref", "variant_ref", "gpt2_tiny_f16_ref"})
        QVERIFY2(!QDir(dataPath(dir)).entryList({"*.npy"}).isEmpty(),
            qPrintable(QString("no .npy in %1: run tests/tools/make_reference.py").arg(dir)));
    for (const char *dir : kFamilyModels)
        QVERIFY2(!QDir(dataPath(QString(dir) + "_ref")).entryList({"*.npy"}).isEmpty(),
            qPrintable(QString("no .npy in %1_ref: run tests/tools/make_family_reference.py").arg(dir)));
    for (const char *dir : {"gpt2_tiny", "gpt2_tiny_prefixed", "gpt2_tiny_f16", "variant"})
        QVERIFY(QFile::exists(dataPath(dir) + "/model.safetensors"));
}

void TestEngineParity::parity_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("ref");
    QTest::addColumn<QString>("tensor");
    auto addAll = [](const QString &model, const QString &ref, QStringList names) {
        if (names.isEmpty())
            for (const QString &file : QDir(dataPath(ref)).entryList({"*.npy"}, QDir::Files))
                names << file.chopped(4);
        for (const QString &name : names)
            QTest::newRow(qPrintable(model + ":" + name)) << model << ref << name;
    };
    addAll("gpt2_tiny", "gpt2_tiny_ref", {});
    addAll("variant", "variant_ref", {});
    addAll("gpt2_tiny_prefixed", "gpt2_tiny_ref", {"logits", "next_probs"});
    addAll("gpt2_tiny_f16", "gpt2_tiny_f16_ref", {});
    for (const char *model : kFamilyModels)
        addAll(model, QString(model) + "_ref", {});
}

void TestEngineParity::parity()
{
    QFETCH(QString, model);
    QFETCH(QString, ref);
    QFETCH(QString, tensor);
    const Engine *engine = finishedRun(model);
    QVERIFY2(engine, qPrintable(m_errors[model]));
    if (tensor.startsWith("mxfp4.")) { // a parameter decoded from MXFP4 blocks
        const auto parameters = engine->model().parameters();
        const auto found = parameters.find(tensor.mid(6).toStdString());
        QVERIFY2(found != parameters.end(), qPrintable(tensor.mid(6) + " is not a parameter"));
        const Tensor want = readNpy(dataPath(ref + "/" + tensor + ".npy").toStdString());
        QCOMPARE(found->second->shapeString(), want.shapeString());
        for (int64_t i = 0; i < want.numel(); ++i)
            QVERIFY2(std::memcmp(found->second->data() + i, want.data() + i, sizeof(float)) == 0,
                qPrintable(QString("%1: cell %2 is %3, transformers decodes %4")
                               .arg(tensor, cellString(want.shape(), i))
                               .arg(double(found->second->data()[i]), 0, 'g', 9)
                               .arg(double(want.data()[i]), 0, 'g', 9)));
        return;
    }
    const TraceEntry *entry = engine->trace().find(tensor.toStdString());
    QVERIFY2(entry, qPrintable(tensor + " is not in the trace"));
    Tensor want;
    const std::string npy = dataPath(ref + "/" + tensor + ".npy").toStdString();
    const QString readError = errorFrom([&] { want = readNpy(npy); });
    QVERIFY2(readError.isNull(), qPrintable(readError));
    const QString why = compare(entry->tensor, want, 1e-4);
    QVERIFY2(why.isEmpty(), qPrintable(model + " " + tensor + ": " + why));
}

void TestEngineParity::onDemandAttentionEqualsTheReference_data()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("gpt2_tiny") << QString("gpt2_tiny");
    for (const char *model : kFamilyModels)
        QTest::newRow(model) << QString(model);
}

// The same reference tensors from a run that keeps its attention on demand: what the trace holds compared as it is,
// every head's scores, capped and masked scores and probabilities recomputed by AttentionReadout. A model whose
// attention cannot be kept so is refused, naming why.
void TestEngineParity::onDemandAttentionEqualsTheReference()
{
    QFETCH(QString, model);
    const std::shared_ptr<const Model> m = loadModel(model);
    const Input input = inputFor(model);
    EngineOptions options;
    options.attention = EngineOptions::Attention::OnDemand;
    if (const std::string obstacle = onDemandObstacle(m->config, input); !obstacle.empty()) {
        const QString error = errorFrom([&] { Engine(m, input, options); });
        QVERIFY2(error.contains(QString::fromStdString(obstacle)), qPrintable(model + ": " + error));
        return;
    }
    Engine engine(m, input, options);
    QVERIFY(engine.runToEnd());
    QCOMPARE(engine.attentionTrace(), AttentionTrace::OnDemand);
    const std::map<std::string, ops::ScoreStage> stages
        = {{"attn.scores", ops::ScoreStage::Scores}, {"attn.capped", ops::ScoreStage::Capped},
            {"attn.masked", ops::ScoreStage::Masked}, {"attn.probs", ops::ScoreStage::Probs}};
    int recomputed = 0;
    for (const QString &file : QDir(dataPath(model + "_ref")).entryList({"*.npy"}, QDir::Files)) {
        const std::string name = file.chopped(4).toStdString();
        if (file.startsWith("mxfp4."))
            continue;
        const Tensor want = readNpy(dataPath(model + "_ref/" + file).toStdString());
        if (const TraceEntry *entry = engine.trace().find(name)) {
            const QString why = compare(entry->tensor, want, 1e-4);
            QVERIFY2(why.isEmpty(), qPrintable(model + " " + file + ": " + why));
            continue;
        }
        if (name == "head.logits") // Gemma 2's logits before their soft-cap: the head reads back the capped ones
            continue;
        if (name == "logits" || name == "next_probs") { // not kept: computed from the last stream when asked
            std::vector<int> all(size_t(engine.input().tokens.size()));
            std::iota(all.begin(), all.end(), 0);
            const Tensor got = name == "logits"
                ? nextTokenLogits(*m, engine.program(), engine.trace(), engine.input(), all)
                : engine.nextTokenProbs(all);
            const QString why = compare(got, want, 1e-4);
            QVERIFY2(why.isEmpty(), qPrintable(model + " " + file + " (computed when asked): " + why));
            continue;
        }
        int layer = -1;
        std::string suffix;
        QVERIFY2(names::splitLayerTensor(name, &layer, &suffix) && stages.count(suffix),
            qPrintable(model + ": " + file + " is neither in the trace nor a stage of its attention"));
        const std::unique_ptr<AttentionReadout> readout
            = AttentionReadout::find(*m, input.padding, engine.trace(), layer);
        QVERIFY2(readout, qPrintable(model + ": no attention to read back in layer " + QString::number(layer)));
        const int64_t H = readout->heads(), T = readout->queries(), S = readout->keys();
        Tensor got({H, T, S});
        for (int64_t h = 0; h < H; ++h)
            readout->tile(got.data() + h * T * S, S, stages.at(suffix), h, 0, T, 0, S);
        const QString why = compare(got, want, 1e-4);
        QVERIFY2(why.isEmpty(), qPrintable(model + " " + file + " (recomputed): " + why));
        ++recomputed;
    }
    QVERIFY2(recomputed > 0, qPrintable(model + ": the reference has no attention stage to recompute"));
    // and the whole run's logits and probabilities, of the last position and the first read alone
    const Engine *whole = finishedRun(model);
    QVERIFY2(whole, qPrintable(m_errors[model]));
    QCOMPARE(whole->attentionTrace(), AttentionTrace::Whole);
    QVERIFY(!engine.trace().contains("logits") && !engine.trace().contains("next_probs"));
    const int last = int(engine.input().tokens.size()) - 1;
    const std::vector<int> rows = {last, 0};
    QString why = compare(nextTokenLogits(*m, engine.program(), engine.trace(), engine.input(), rows),
        rowsOf(whole->trace().tensor("logits"), rows), 1e-5);
    QVERIFY2(why.isEmpty(), qPrintable(model + " logits, on demand against whole: " + why));
    why = compare(engine.nextTokenProbs(rows), whole->nextTokenProbs(rows), 1e-5);
    QVERIFY2(why.isEmpty(), qPrintable(model + " next_probs, on demand against whole: " + why));
}

// Automatic: whole matrices while the trace fits the budget, on demand when only that fits, and a refusal naming the
// obstacle when a model's attention must stay whole.
void TestEngineParity::attentionIsKeptOnDemandOnlyWhenWholeMatricesDoNotFit()
{
    const std::shared_ptr<const Model> m = loadModel("llama_tiny");
    const Input input = inputFor("llama_tiny");
    const size_t whole = Program::build(m->config, input).tracedBytes(),
                 onDemand = Program::build(m->config, input, true, 1, AttentionTrace::OnDemand).tracedBytes();
    QVERIFY2(onDemand < whole, qPrintable(QString("%1 bytes on demand, %2 whole").arg(onDemand).arg(whole)));
    EngineOptions options;
    options.memoryBudget = whole;
    QCOMPARE(Engine(m, input, options).attentionTrace(), AttentionTrace::Whole);
    options.memoryBudget = whole - 1;
    const Engine fitted(m, input, options);
    QCOMPARE(fitted.attentionTrace(), AttentionTrace::OnDemand);
    QCOMPARE(fitted.estimatedTraceBytes(), onDemand);
    options.memoryBudget = onDemand - 1; // and without checkpoints (tst_recompute)
    options.checkpoints = EngineOptions::Checkpoints::Never;
    QVERIFY(errorFrom([&] { Engine(m, input, options); }).contains("with its attention and logits computed on demand"));
    options.memoryBudget = whole - 1;
    options.attention = EngineOptions::Attention::Whole;
    QVERIFY(errorFrom([&] { Engine(m, input, options); }).contains("over the trace memory budget"));

    const std::shared_ptr<const Model> relative = loadModel("bert_rel_tiny");
    const Input bertInput = inputFor("bert_rel_tiny");
    EngineOptions tight;
    tight.memoryBudget = Program::build(relative->config, bertInput).tracedBytes() - 1;
    const QString error = errorFrom([&] { Engine(relative, bertInput, tight); });
    QVERIFY2(error.contains("its attention kept whole: layer 0: shaw"), qPrintable(error));
}

// "[CLS] A [SEP] B [SEP]": B's tokens, after the first [SEP], add the second segment embedding, as BertTokenizer's
// token_type_ids for a pair; the next-sentence head then reads a real pair. Every tensor as PyTorch's.
void TestEngineParity::bertReadsAPairOfSegments()
{
    const QJsonObject o = QJsonDocument::fromJson(readFile(dataPath("bert_tiny_pair_ref/input.json"))).object();
    Model m = Model::load(dataPath("bert_tiny").toStdString());
    m.config.specialTokens = {{"[SEP]", o.value("sep").toInt()}};
    const Input input {intList(o.value("tokens")), {}};
    QCOMPARE(m.config.segmentsOf(input.tokens), intList(o.value("types")));
    Engine engine(std::make_shared<const Model>(std::move(m)), input);
    QVERIFY(engine.runToEnd());
    QVERIFY(engine.program().ops[size_t(engine.program().producerOf("segment.encoding"))].outputs[0].formula.find(
                "W_type[1] for B [SEP]")
        != std::string::npos);
    for (const QString &file : QDir(dataPath("bert_tiny_pair_ref")).entryList({"*.npy"}, QDir::Files)) {
        const std::string name = file.chopped(4).toStdString();
        const TraceEntry *entry = engine.trace().find(name);
        QVERIFY2(entry, name.c_str());
        const QString why = compare(entry->tensor, readNpy(dataPath("bert_tiny_pair_ref/" + file).toStdString()), 1e-4);
        QVERIFY2(why.isEmpty(), qPrintable(QString::fromStdString(name) + ": " + why));
    }
}

void TestEngineParity::traceHasExactlyTheDocumentedNames_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("ref");
    QTest::newRow("gpt2_tiny (pre-LN)") << "gpt2_tiny"
                                        << "gpt2_tiny_ref";
    QTest::newRow("variant (post-LN: resid, no ln_2)") << "variant"
                                                       << "variant_ref";
    for (const char *model : kFamilyModels)
        QTest::newRow(model) << model << QString(model) + "_ref";
}

void TestEngineParity::traceHasExactlyTheDocumentedNames()
{
    QFETCH(QString, model);
    QFETCH(QString, ref);
    const Engine *engine = finishedRun(model);
    QVERIFY2(engine, qPrintable(m_errors[model]));
    std::set<std::string> expected, traced;
    for (const QString &file : QDir(dataPath(ref)).entryList({"*.npy"}, QDir::Files))
        if (!file.startsWith("mxfp4.")) // decoded parameters, not trace tensors
            expected.insert(file.chopped(4).toStdString());
    for (const TraceEntry &e : engine->trace().entries())
        traced.insert(e.name);
    QStringList extra, missing;
    for (const std::string &n : traced)
        if (!expected.count(n))
            extra << QString::fromStdString(n);
    for (const std::string &n : expected)
        if (!traced.count(n))
            missing << QString::fromStdString(n);
    QVERIFY2(extra.isEmpty() && missing.isEmpty(),
        qPrintable("not documented: " + extra.join(' ') + "; missing: " + missing.join(' ')));
}

void TestEngineParity::formulasAddOnlyTheBiasesTheModelHas_data()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("gpt2_tiny") << "gpt2_tiny";
    for (const char *model : kFamilyModels)
        QTest::newRow(model) << model;
}

// Each projection's formula writes "+ b" exactly where its module has a bias (T5 has none, Qwen2 biases Q, K and V
// only, GPT-2's Conv1D always has them): the formula shown is the one computed.
void TestEngineParity::formulasAddOnlyTheBiasesTheModelHas()
{
    QFETCH(QString, model);
    const std::shared_ptr<const Model> m = loadModel(model);
    const ModelConfig &c = m->config;
    const Engine engine(m, inputFor(model));
    const std::map<std::string, std::vector<BlockPart>> modules = {{"attn.qkv", qkvParts(c)},
        {"attn.out", {BlockPart::Out}}, {"mlp.gate", {BlockPart::Gate}}, {"mlp.up", {BlockPart::Up}},
        {"mlp.down", {BlockPart::Down, BlockPart::ExpertsDown}}, {"router.logits", {BlockPart::Router}},
        {"cross.query", {BlockPart::CrossQ}}, {"cross.out", {BlockPart::CrossOut}}};
    int checked = 0;
    for (const Op &op : engine.program().ops)
        for (const OpOutput &out : op.outputs)
            for (const auto &[local, parts] : modules) {
                if (op.layer < 0 || out.name != names::layerPrefix(op.stack, op.layer) + local)
                    continue;
                const BlockWeights &b = (op.stack == names::kEncoderStack ? m->encoderBlocks : m->blocks)[op.layer];
                bool bias = false;
                for (BlockPart part : parts) // gpt-oss's router and stacked experts are no linear module
                    bias = bias
                        || (part == BlockPart::Router || part == BlockPart::ExpertsDown
                                ? !b.bias(part).empty()
                                : !blockModule(c, b, part).bias.empty());
                const bool shown = out.formula.find(" + b") != std::string::npos;
                QVERIFY2(shown == bias,
                    qPrintable(QString::fromStdString(
                        out.name + ": \"" + out.formula + "\" but the module has " + (bias ? "a bias" : "no bias"))));
                ++checked;
            }
    QVERIFY2(checked >= 2 * c.layers, qPrintable(QString("only %1 projections checked").arg(checked)));
}

void TestEngineParity::probsAreZeroWhereMaskedAndRowsSumToOne_data()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("gpt2_tiny (causal)") << "gpt2_tiny";
    QTest::newRow("variant (bidirectional, padding)") << "variant";
}

void TestEngineParity::probsAreZeroWhereMaskedAndRowsSumToOne()
{
    QFETCH(QString, model);
    const Engine *engine = finishedRun(model);
    QVERIFY2(engine, qPrintable(m_errors[model]));
    const Input &input = engine->input();
    const bool causal = engine->model().config.causal;
    const int T = int(input.tokens.size());
    for (int layer = 0; layer < engine->model().config.layers; ++layer) {
        const std::string prefix = "layer." + std::to_string(layer) + ".attn.";
        const QString qprefix = QString::fromStdString(prefix);
        const Tensor &probs = engine->trace().tensor(prefix + "probs");
        const Tensor &masked = engine->trace().tensor(prefix + "masked");
        QCOMPARE(probs.shape(), masked.shape());
        for (int64_t h = 0; h < probs.dim(0); ++h) {
            for (int i = 0; i < T; ++i) {
                double sum = 0.0;
                bool any = false;
                for (int j = 0; j < T; ++j) {
                    const float p = probs.slice(h)(i, j), m = masked.slice(h)(i, j);
                    const QString at = QString("%1probs[%2, %3, %4]").arg(qprefix).arg(h).arg(i).arg(j);
                    if (allowed(input, causal, i, j)) {
                        QVERIFY2(std::isfinite(m) && p >= 0.0f, qPrintable(at));
                        any = true;
                    } else {
                        QVERIFY2(p == 0.0f, qPrintable(at + " is masked but not 0"));
                        QVERIFY2(std::isinf(m) && m < 0, qPrintable(at + ": masked score is not -inf"));
                    }
                    sum += p;
                }
                const QString row = QString("%1probs row [%2, %3]").arg(qprefix).arg(h).arg(i);
                QVERIFY2(std::fabs(sum - (any ? 1.0 : 0.0)) <= 1e-5,
                    qPrintable(row + " sums to " + QString::number(sum, 'g', 9)));
            }
        }
    }
}

// Stepping back and forth can only be exact if the same op on the same input always gives the same bits,
// wherever the heap happens to place the tensors (vectorised reductions must not depend on alignment).
void TestEngineParity::independentRunsAreBitIdentical()
{
    const Engine *first = finishedRun("gpt2_tiny");
    QVERIFY2(first, qPrintable(m_errors["gpt2_tiny"]));
    const QString error = errorFrom([&] {
        std::vector<std::unique_ptr<Engine>> engines; // alive together, so their tensors sit elsewhere
        std::vector<std::vector<float>> spacers;
        for (int r = 0; r < 4; ++r) {
            spacers.emplace_back(size_t(r + 1) * 3); // shifts later allocations by a few floats
            engines.push_back(std::make_unique<Engine>(first->modelPtr(), inputFor("gpt2_tiny")));
            QVERIFY(engines.back()->runToEnd());
        }
        for (size_t r = 0; r < engines.size(); ++r) {
            QString why;
            QVERIFY2(bitIdentical(engines[r]->trace(), first->trace(), &why),
                qPrintable(QString("run %1: ").arg(r + 2) + why));
        }
    });
    QVERIFY2(error.isNull(), qPrintable(error));
}

void TestEngineParity::steppingBackAndForthIsExact_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<double>("runTo"); // fraction of the program
    QTest::addColumn<double>("backTo"); // fraction of the program
    QTest::newRow("gpt2_tiny 2/3 back to 1/3") << "gpt2_tiny" << 2.0 / 3 << 1.0 / 3;
    QTest::newRow("gpt2_tiny end back to 0") << "gpt2_tiny" << 1.0 << 0.0;
    QTest::newRow("gpt2_tiny 1/2 back one op") << "gpt2_tiny" << 0.5 << -1.0;
    QTest::newRow("variant 3/4 back to 1/4") << "variant" << 0.75 << 0.25;
}

void TestEngineParity::steppingBackAndForthIsExact()
{
    QFETCH(QString, model);
    QFETCH(double, runTo);
    QFETCH(double, backTo);
    const Engine *straight = finishedRun(model);
    QVERIFY2(straight, qPrintable(m_errors[model]));
    const QString error = errorFrom([&] {
        Engine engine(straight->modelPtr(), inputFor(model));
        const int n = engine.opCount();
        const int k = int(runTo * n);
        const int j = backTo < 0 ? k - 1 : int(backTo * n);
        QVERIFY(n > 10 && j < k);
        engine.runTo(k);
        QCOMPARE(engine.cursor(), k);
        while (engine.cursor() > j)
            engine.back();
        QCOMPARE(engine.cursor(), j);
        size_t outputs = 0;
        for (int op = 0; op < j; ++op)
            outputs += engine.program().ops[size_t(op)].outputs.size();
        QCOMPARE(engine.trace().entries().size(), outputs);
        for (const TraceEntry &e : engine.trace().entries())
            QVERIFY2(e.op < j, qPrintable(QString::fromStdString(e.name) + " survived back()"));
        QVERIFY(engine.runToEnd());
        QVERIFY(engine.atEnd());
        QString why;
        QVERIFY2(bitIdentical(engine.trace(), straight->trace(), &why), qPrintable(why));
    });
    QVERIFY2(error.isNull(), qPrintable(error));
}

void TestEngineParity::engineRejectsBadInput_data()
{
    QTest::addColumn<std::vector<int>>("tokens");
    QTest::addColumn<std::vector<int>>("padding");
    const std::vector<int> ok {3, 17, 42, 8, 0, 25, 49, 11};
    QTest::newRow("token == vocab") << std::vector<int> {3, 17, 50, 8} << std::vector<int> {};
    QTest::newRow("token > vocab") << std::vector<int> {3, 1000} << std::vector<int> {};
    QTest::newRow("negative token") << std::vector<int> {3, -1} << std::vector<int> {};
    QTest::newRow("n_positions + 1 tokens") << std::vector<int>(17, 1) << std::vector<int> {};
    QTest::newRow("padding == tokens") << ok << std::vector<int> {8};
    QTest::newRow("padding far out") << ok << std::vector<int> {2, 100};
    QTest::newRow("negative padding") << ok << std::vector<int> {-1};
}

void TestEngineParity::engineRejectsBadInput()
{
    QFETCH(std::vector<int>, tokens);
    QFETCH(std::vector<int>, padding);
    std::shared_ptr<const Model> model;
    const QString loadError = errorFrom([&] { model = loadModel("gpt2_tiny"); });
    QVERIFY2(loadError.isNull(), qPrintable(loadError));
    const QString error = errorFrom([&] { Engine engine(model, Input {tokens, padding}); });
    QVERIFY2(!error.isNull(), "no atlas::Error thrown");
    QVERIFY2(!error.startsWith("[not an atlas::Error]"), qPrintable(error));
    qInfo("%s", qPrintable(error));
}

void TestEngineParity::engineAcceptsAFullContext()
{
    const QString error = errorFrom([&] {
        Engine engine(loadModel("gpt2_tiny"), Input {std::vector<int>(16, 49), {0}});
        QVERIFY(engine.runToEnd());
        QCOMPARE(engine.trace().tensor("next_probs").shape(), (Shape {16, 50}));
    });
    QVERIFY2(error.isNull(), qPrintable(error));
}

QTEST_GUILESS_MAIN(TestEngineParity)
#include "tst_engine_parity.moc"
