// The engine's contract on the reference models: the trace holds exactly the documented names, formulas show only
// the biases a model has, masked probabilities are 0 and rows sum to 1, runs are bit-identical however they are
// stepped, and bad input raises atlas::Error with a useful message. Parity with PyTorch is tst_engine_parity's.

#include "engine/attentiontrace.h"
#include "engine/blockcomponents.h"
#include "engine/engine.h"
#include "engineruntesting.h"
#include "errortesting.h"
#include "model/model.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"

#include <QDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

using namespace atlas;
using namespace atlas::testing;

namespace {

bool allowed(const Input &input, bool causal, int query, int key)
{
    const bool isPadding = std::find(input.padding.begin(), input.padding.end(), key) != input.padding.end();
    return (!causal || key <= query) && !isPadding;
}

} // namespace

class TestEngineContract : public QObject
{
    Q_OBJECT

private slots:
    void traceHasExactlyTheDocumentedNames_data();
    void traceHasExactlyTheDocumentedNames();
    void formulasAddOnlyTheBiasesTheModelHas_data();
    void formulasAddOnlyTheBiasesTheModelHas();
    void probsAreZeroWhereMaskedAndRowsSumToOne_data();
    void probsAreZeroWhereMaskedAndRowsSumToOne();
    void independentRunsAreBitIdentical();
    void steppingBackAndForthIsExact_data();
    void steppingBackAndForthIsExact();
    void engineRejectsBadInput_data();
    void engineRejectsBadInput();
    void engineAcceptsAFullContext();

private:
    FinishedRuns m_runs;
};

void TestEngineContract::traceHasExactlyTheDocumentedNames_data()
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

void TestEngineContract::traceHasExactlyTheDocumentedNames()
{
    QFETCH(QString, model);
    QFETCH(QString, ref);
    const Engine *engine = m_runs.of(model);
    QVERIFY2(engine, qPrintable(m_runs.error(model)));
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

void TestEngineContract::formulasAddOnlyTheBiasesTheModelHas_data()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("gpt2_tiny") << "gpt2_tiny";
    for (const char *model : kFamilyModels)
        QTest::newRow(model) << model;
}

// Each projection's formula writes "+ b" exactly where its module has a bias (T5 has none, Qwen2 biases Q, K and V
// only, GPT-2's Conv1D always has them): the formula shown is the one computed.
void TestEngineContract::formulasAddOnlyTheBiasesTheModelHas()
{
    QFETCH(QString, model);
    const std::shared_ptr<const Model> m = loadTestModel(model);
    const ModelConfig &c = m->config;
    const Engine engine(m, engineReferenceInput(model));
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

void TestEngineContract::probsAreZeroWhereMaskedAndRowsSumToOne_data()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("gpt2_tiny (causal)") << "gpt2_tiny";
    QTest::newRow("variant (bidirectional, padding)") << "variant";
}

void TestEngineContract::probsAreZeroWhereMaskedAndRowsSumToOne()
{
    QFETCH(QString, model);
    const Engine *engine = m_runs.of(model);
    QVERIFY2(engine, qPrintable(m_runs.error(model)));
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
void TestEngineContract::independentRunsAreBitIdentical()
{
    const Engine *first = m_runs.of("gpt2_tiny");
    QVERIFY2(first, qPrintable(m_runs.error("gpt2_tiny")));
    const QString error = errorFrom([&] {
        std::vector<std::unique_ptr<Engine>> engines; // alive together, so their tensors sit elsewhere
        std::vector<std::vector<float>> spacers;
        for (int r = 0; r < 4; ++r) {
            spacers.emplace_back(size_t(r + 1) * 3); // shifts later allocations by a few floats
            engines.push_back(std::make_unique<Engine>(first->modelPtr(), engineReferenceInput("gpt2_tiny")));
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

void TestEngineContract::steppingBackAndForthIsExact_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<double>("runTo"); // fraction of the program
    QTest::addColumn<double>("backTo"); // fraction of the program
    QTest::newRow("gpt2_tiny 2/3 back to 1/3") << "gpt2_tiny" << 2.0 / 3 << 1.0 / 3;
    QTest::newRow("gpt2_tiny end back to 0") << "gpt2_tiny" << 1.0 << 0.0;
    QTest::newRow("gpt2_tiny 1/2 back one op") << "gpt2_tiny" << 0.5 << -1.0;
    QTest::newRow("variant 3/4 back to 1/4") << "variant" << 0.75 << 0.25;
}

void TestEngineContract::steppingBackAndForthIsExact()
{
    QFETCH(QString, model);
    QFETCH(double, runTo);
    QFETCH(double, backTo);
    const Engine *straight = m_runs.of(model);
    QVERIFY2(straight, qPrintable(m_runs.error(model)));
    const QString error = errorFrom([&] {
        Engine engine(straight->modelPtr(), engineReferenceInput(model));
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

void TestEngineContract::engineRejectsBadInput_data()
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

void TestEngineContract::engineRejectsBadInput()
{
    QFETCH(std::vector<int>, tokens);
    QFETCH(std::vector<int>, padding);
    std::shared_ptr<const Model> model;
    const QString loadError = errorFrom([&] { model = loadTestModel("gpt2_tiny"); });
    QVERIFY2(loadError.isNull(), qPrintable(loadError));
    const QString error = errorFrom([&] { Engine engine(model, Input {tokens, padding}); });
    QVERIFY2(!error.isNull(), "no atlas::Error thrown");
    QVERIFY2(!error.startsWith("[not an atlas::Error]"), qPrintable(error));
    qInfo("%s", qPrintable(error));
}

void TestEngineContract::engineAcceptsAFullContext()
{
    const QString error = errorFrom([&] {
        Engine engine(loadTestModel("gpt2_tiny"), Input {std::vector<int>(16, 49), {0}});
        QVERIFY(engine.runToEnd());
        QCOMPARE(engine.trace().tensor("next_probs").shape(), (Shape {16, 50}));
    });
    QVERIFY2(error.isNull(), qPrintable(error));
}

QTEST_GUILESS_MAIN(TestEngineContract)
#include "tst_engine_contract.moc"
