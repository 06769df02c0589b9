// The Quantization view's numbers (quantization/quantizationeffect.h): a model quantized here is quantized as `save`
// writes it, a GGUF file shows its own types and blocks, the two agree on the same weights, each block reads back on
// its scales' levels, and every matrix's output error is measured on the rows the matrix really reads.
#include "engine/engine.h"
#include "io/weightvalues.h"
#include "model/builtinmodels.h"
#include "model/ggufmodel.h"
#include "quantization/quantizationeffect.h"
#include "testbundle.h"
#include "trace/names.h"
#include "util/error.h"

#include <QTest>

#include <cmath>

using namespace atlas;

namespace {

Trace traceOf(std::shared_ptr<const Model> model, const std::string &text)
{
    std::vector<int> ids;
    for (unsigned char c : text)
        ids.push_back(c);
    Engine engine(model, Input {ids, {}, {}});
    engine.runToEnd();
    return engine.trace();
}

const std::atomic<bool> kGoOn {false};

QuantizationEffect effectOf(const std::string &name, GgmlType type, const std::string &role, int64_t block,
    const Model *reference = nullptr, int layer = 0)
{
    const std::shared_ptr<const Model> model = loadModel(name);
    const Trace trace
        = traceOf(model, model->config.context < 64 ? "dsfacdd>ddcafsd" : "It is a truth universally acknowledged");
    return quantizationEffect(*model, trace, layer, type, role, block, model->gguf ? reference : model.get(), kGoOn);
}

} // namespace

class TestQuantizationEffect : public QObject
{
    Q_OBJECT

private slots:
    // reverse-llama quantized here to Q4_0: every matrix of the layer, Q4_0 where its rows are whole blocks and F16
    // where they are not (W_down reads 176), each with its weights' and its output's error.
    void quantizesEveryMatrixAsSaveWrites()
    {
        const QuantizationEffect e = effectOf("reverse-llama", GgmlType::Q4_0, "down", 0);
        QStringList roles;
        for (const QuantizedMatrix &m : e.matrices) {
            roles << QString::fromStdString(m.role + " " + m.type);
            QVERIFY2(m.weightError > 0 && m.weightError < (m.type == "F16" ? 1e-3 : 0.2),
                qPrintable(QString::number(m.weightError)));
            QVERIFY2(m.outputError >= 0 && m.outputError < (m.type == "F16" ? 1e-3 : 0.3),
                qPrintable(QString::fromStdString(m.role) + " " + QString::number(m.outputError)));
        }
        QCOMPARE(
            roles.join(", "), QString("W_q Q4_0, W_k Q4_0, W_v Q4_0, W_o Q4_0, W_up Q4_0, W_gate Q4_0, W_down F16"));
        QCOMPARE(e.matrices[size_t(e.chosen)].role, std::string("W_down"));
        QCOMPARE(e.reference, std::string("reverse-llama"));
    }

    // GPT-2's layout (fused c_attn; its checkpoint's Conv1D transposed at load): its matrices are [out, in] as ggml
    // stores them, and the output of each is the traced one.
    void readsGpt2sMatricesAsGgmlStoresThem()
    {
        const QuantizationEffect e = effectOf("reverse", GgmlType::Q8_0, "qkv", 3);
        QStringList roles;
        for (const QuantizedMatrix &m : e.matrices) {
            roles << QString::fromStdString(m.role) + QString(" %1x%2").arg(m.rows).arg(m.columns);
            QVERIFY2(m.outputError >= 0 && m.outputError < 0.02, qPrintable(QString::number(m.outputError)));
        }
        QCOMPARE(roles.join(", "), QString("W_qkv 192x64, W_o 64x64, W_up 256x64, W_down 64x256"));
        QCOMPARE(e.blocks, int64_t(192 * 2));
        QCOMPARE(e.row, int64_t(1));
        QCOMPARE(e.column, int64_t(32));
    }

    // Q8_0 rounds each weight x to q = round(x / d) with d the block's largest magnitude over 127, and reads back
    // q · d with d stored in half precision: so the read-back weight is within half a step, and the few thousandths
    // of a step by which d was rounded times |q| ≤ 127.
    void aBlockReadsBackOnItsLevels()
    {
        const QuantizationEffect e = effectOf("austen", GgmlType::Q8_0, "up", 37);
        QCOMPARE(e.values.size(), size_t(32));
        QCOMPARE(e.referenceValues.size(), size_t(32));
        QCOMPARE(e.scales.scales.size(), size_t(1));
        float largest = 0;
        for (float w : e.referenceValues)
            largest = std::max(largest, std::fabs(w));
        const float exact = largest / 127, d = e.scales.scales.front();
        QCOMPARE(d, halfToFloat(floatToHalf(exact)));
        for (size_t i = 0; i < 32; ++i) {
            const float q = std::round(e.referenceValues[i] * (1.0f / exact));
            QCOMPARE(e.values[i], q * d);
            QVERIFY(std::fabs(e.values[i] - e.referenceValues[i]) <= d / 2 + 127 * std::fabs(d - exact) + 1e-9f);
        }
    }

    // The GGUF file austen-q4_0, against the model it was saved from, holds what austen quantized here to Q4_0 holds:
    // the same types, blocks and errors by both ways of reading.
    void aFileAgreesWithTheModelQuantizedHere()
    {
        const std::shared_ptr<const Model> austen = loadModel("austen");
        const std::shared_ptr<const Model> file = loadModel("austen-q4_0");
        QCOMPARE(savedFromModel(*file), std::string("austen"));
        QCOMPARE(savedFromModel(*austen), std::string());
        for (int layer : {0, 3}) {
            const QuantizationEffect fromFile = effectOf("austen-q4_0", GgmlType::F16, "up", 5, austen.get(), layer);
            const QuantizationEffect here = effectOf("austen", GgmlType::Q4_0, "up", 5, nullptr, layer);
            QVERIFY(fromFile.fromFile && !here.fromFile);
            QCOMPARE(fromFile.matrices.size(), here.matrices.size());
            for (size_t i = 0; i < here.matrices.size(); ++i) {
                QCOMPARE(fromFile.matrices[i].type, std::string("Q4_0"));
                QCOMPARE(fromFile.matrices[i].type, here.matrices[i].type);
                QCOMPARE(fromFile.matrices[i].weightError, here.matrices[i].weightError);
                // each on its own model's rows: the file's layers before this one are quantized too
                QVERIFY(fromFile.matrices[i].outputError > 0 && here.matrices[i].outputError > 0);
            }
            QCOMPARE(fromFile.values, here.values);
            QCOMPARE(fromFile.referenceValues, here.referenceValues);
            QCOMPARE(fromFile.scales.scales, here.scales.scales);
            QCOMPARE(fromFile.counts, here.counts);
        }
        const QuantizationEffect alone = effectOf("austen-q4_0", GgmlType::F16, "q", 0, nullptr);
        QVERIFY(alone.reference.empty() && alone.referenceValues.empty());
        QCOMPARE(alone.matrices.front().weightError, -1.0);
    }

    // Q4_K on rows of 256 and 512: a block of 256 in 8 sub-blocks, each weight on a level scale_j · q − min_j of its
    // own sub-block, q in 0 … 15.
    void aKQuantBlockHasItsSubBlocksScales()
    {
        const QuantizationEffect e = effectOf("austen", GgmlType::Q4_K, "down", 2);
        QCOMPARE(e.matrices[size_t(e.chosen)].type, std::string("Q4_K"));
        QCOMPARE(e.values.size(), size_t(256));
        QCOMPARE(e.scales.scales.size(), size_t(8));
        QCOMPARE(e.scales.mins.size(), size_t(8));
        for (size_t i = 0; i < 256; ++i) {
            const float scale = e.scales.scales[i / 32], min = e.scales.mins[i / 32];
            const float q = (e.values[i] + min) / scale;
            QVERIFY2(std::fabs(q - std::round(q)) < 1e-3 && std::round(q) >= 0 && std::round(q) <= 15,
                qPrintable(QString("%1: q = %2").arg(i).arg(q)));
        }
        for (const QuantizedMatrix &m : e.matrices) // austen's 128-wide rows cannot hold 256-weight blocks
            QCOMPARE(m.type, std::string(m.columns % 256 == 0 ? "Q4_K" : "Q4_0"));
    }

    // An encoder–decoder's blocks, by stack: a t5 file's encoder block holds its self-attention and feed-forward, its
    // decoder block the cross-attention's four matrices too, whose outputs are measured on the rows they read (the
    // decoder's normed stream for W_q, the encoder's output for W_k and W_v), against the F32 file of the same model.
    void showsAnEncoderDecodersBlocks()
    {
        const auto model
            = std::make_shared<const Model>(Model::load(ATLAS_TEST_DATA "/gguf/models/t5v11_tiny-q8_0.gguf"));
        const Model floats = Model::load(ATLAS_TEST_DATA "/gguf/models/t5v11_tiny-f32.gguf");
        Input input {{0, 21, 4, 56, 30}, {}};
        input.source = {5, 17, 42, 8, 33, 25, 63, 11};
        Engine engine(model, input);
        engine.runToEnd();
        QStringList bad; // matrices whose output error is not measured, or too large
        const auto rolesOf = [&](const names::Stack &stack, int layer) {
            const QuantizationEffect e
                = quantizationEffect(*model, engine.trace(), layer, GgmlType::Q4_0, "", 0, &floats, kGoOn, stack);
            QStringList roles;
            for (const QuantizedMatrix &m : e.matrices) {
                roles << QString::fromStdString(m.role + " " + m.type);
                if (!(m.outputError >= 0 && m.outputError < (m.type == "F32" ? 1e-6 : 0.05)))
                    bad << QString("%1 %2: %3").arg(e.stack.c_str(), m.role.c_str()).arg(m.outputError);
            }
            return roles.join(", ");
        };
        // W_o reads 36 and W_down 40 columns, no whole number of Q8_0's blocks: the converter kept them in F32
        QCOMPARE(rolesOf(names::kEncoderStack, 1),
            QString("W_q Q8_0, W_k Q8_0, W_v Q8_0, W_o F32, W_up Q8_0, W_gate Q8_0, W_down F32"));
        QCOMPARE(rolesOf(names::kDecoderStack, 1),
            QString("W_q Q8_0, W_k Q8_0, W_v Q8_0, W_o F32, W_up Q8_0, W_gate Q8_0, W_down F32, W_q cross Q8_0, "
                    "W_k cross Q8_0, W_v cross Q8_0, W_o cross F32"));
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join("; ")));
        // the built-in sorter (GPT-2's layout: fused c_attn and cross K/V), quantized here
        const std::shared_ptr<const Model> sorter = loadModel("seq2seq-sort");
        Input sorting {{'>', 'a', 'c'}, {}};
        sorting.source = {'d', 's', 'f', 'a', 'c'};
        Engine sorted(sorter, sorting);
        sorted.runToEnd();
        const QuantizationEffect e = quantizationEffect(
            *sorter, sorted.trace(), 0, GgmlType::Q8_0, "cross_kv", 0, sorter.get(), kGoOn, names::kDecoderStack);
        QCOMPARE(e.stack, std::string("decoder"));
        QCOMPARE(e.matrices[size_t(e.chosen)].role, std::string("W_kv cross"));
        for (const QuantizedMatrix &m : e.matrices)
            QVERIFY2(m.outputError >= 0 && m.outputError < 0.02, m.role.c_str());
    }

    void refusesWhatItCannotShow()
    {
        QVERIFY(quantizationProblem(*loadModel("seq2seq-sort"), 0, names::kEncoderStack).empty());
        QVERIFY(quantizationProblem(*loadModel("reverse"), 1).empty());
    }
};

QTEST_GUILESS_MAIN(TestQuantizationEffect)
#include "tst_quantizationeffect.moc"
