// Engine parity: every tensor the engine traces matches an independent PyTorch reference
// (tests/tools/make_reference.py and make_family_reference.py wrote the fixtures under tests/data), with attention
// kept whole or on demand. What every run promises besides is tst_engine_contract's.

#include "engine/attentiontrace.h"
#include "engine/engine.h"
#include "engine/outputhead.h"
#include "engineruntesting.h"
#include "errortesting.h"
#include "io/npy.h"
#include "model/model.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"

#include <QDir>
#include <QFile>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>

using namespace atlas;
using namespace atlas::testing;

namespace {

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

private:
    FinishedRuns m_runs;
};

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
    const Engine *engine = m_runs.of(model);
    QVERIFY2(engine, qPrintable(m_runs.error(model)));
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
    const std::shared_ptr<const Model> m = loadTestModel(model);
    const Input input = engineReferenceInput(model);
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
    const Engine *whole = m_runs.of(model);
    QVERIFY2(whole, qPrintable(m_runs.error(model)));
    QCOMPARE(whole->attentionTrace(), AttentionTrace::Whole);
    QVERIFY(!engine.trace().contains("logits") && !engine.trace().contains("next_probs"));
    const int last = int(engine.input().tokens.size()) - 1;
    const std::vector<int> rows = {last, 0};
    QString why = compare(nextTokenLogits(*m, engine.program(), engine.trace(), engine.input(), rows),
        atlas::rowsOf(whole->trace().tensor("logits"), rows), 1e-5);
    QVERIFY2(why.isEmpty(), qPrintable(model + " logits, on demand against whole: " + why));
    why = compare(engine.nextTokenProbs(rows), whole->nextTokenProbs(rows), 1e-5);
    QVERIFY2(why.isEmpty(), qPrintable(model + " next_probs, on demand against whole: " + why));
}

// Automatic: whole matrices while the trace fits the budget, on demand when only that fits, and a refusal naming the
// obstacle when a model's attention must stay whole.
void TestEngineParity::attentionIsKeptOnDemandOnlyWhenWholeMatricesDoNotFit()
{
    const std::shared_ptr<const Model> m = loadTestModel("llama_tiny");
    const Input input = engineReferenceInput("llama_tiny");
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

    const std::shared_ptr<const Model> relative = loadTestModel("bert_rel_tiny");
    const Input bertInput = engineReferenceInput("bert_rel_tiny");
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

QTEST_GUILESS_MAIN(TestEngineParity)
#include "tst_engine_parity.moc"
