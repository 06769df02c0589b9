// Model's one table of parameters (model/model.cpp): Model::random fills every parameter a config requires, in the
// order of its random draws, which the shipped models' training commands depend on (the same seed gives the same
// weights, docs/models.md); save and load bring back every tensor by name and shape.
#include "io/safetensors.h"
#include "model/model.h"
#include "model/parameterlist.h"
#include "testbundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <set>

using namespace atlas;

namespace {

// Every parameter's values weighed by its place in name order and its index: a different draw order puts other values
// at each place (a change of about √N · 0.02), while builds that round the same draws differently (fused
// multiply-adds, the sanitizers' build) move it by a few ulps per value. Returns the weighed sum and its scale.
std::pair<double, double> signature(const Model &m)
{
    double sum = 0, scale = 0;
    int k = 0;
    const std::set<std::string> conv1d = m.conv1dParameterNames(); // read as the checkpoint keeps them, [in, out]
    for (const auto &[name, held] : m.parameters()) {
        ++k;
        const Tensor stored = conv1d.contains(name) ? transposedMatrix(*held) : *held;
        const Tensor *t = &stored;
        for (int64_t i = 0; i < t->numel(); ++i) {
            const double term = double(k) * double(i % 13 + 1) * double(t->data()[i]);
            sum += term;
            scale += std::abs(term);
        }
    }
    return {sum, scale};
}

ModelConfig small()
{
    ModelConfig c;
    c.layers = 2;
    c.heads = 2;
    c.dModel = 16;
    c.dFF = 32;
    c.vocab = 40;
    c.context = 12;
    return c;
}

std::vector<std::pair<const char *, ModelConfig>> configs()
{
    std::vector<std::pair<const char *, ModelConfig>> out;
    out.push_back({"dense", small()});
    ModelConfig moe = small();
    moe.experts = 3;
    moe.moeLayers = {1};
    out.push_back({"moe", moe});
    ModelConfig shaw = small();
    shaw.positions = PositionKind::Shaw;
    shaw.relativeClip = 3;
    out.push_back({"shaw", shaw});
    ModelConfig t5 = small();
    t5.positions = PositionKind::T5;
    t5.relativeBuckets = 8;
    out.push_back({"t5", t5});
    ModelConfig seq2seq = small();
    seq2seq.encoderLayers = 2;
    out.push_back({"encoder-decoder", seq2seq});
    return out;
}

} // namespace

class TestModel : public QObject
{
    Q_OBJECT

private slots:
    // The signatures were taken from the two-table code this table replaced (libstdc++'s mt19937_64 and
    // normal_distribution, Debian 12), within a millionth of their scale.
    void randomInitialisationIsPinned()
    {
        const std::map<std::string, double> expected = {{"dense", 7449.18636}, {"moe", 8225.26147},
            {"shaw", 8054.01425}, {"t5", 7483.32899}, {"encoder-decoder", 42096.6228}};
        for (const auto &[name, config] : configs()) {
            const auto [sum, scale] = signature(Model::random(config, 7));
            QVERIFY2(std::abs(sum - expected.at(name)) <= 1e-6 * scale,
                qPrintable(QString("%1: %2").arg(name).arg(sum, 0, 'g', 9)));
        }
    }

    // Every parameter round-trips through model.safetensors; the count is the sum of the tensors' sizes.
    void saveAndLoadKeepEveryParameter()
    {
        for (const auto &[name, config] : configs()) {
            const Model m = Model::random(config, 3);
            QTemporaryDir dir;
            m.save(dir.path().toStdString());
            const Model back = Model::load(dir.path().toStdString());
            QCOMPARE(back.parameters().size(), m.parameters().size());
            QCOMPARE(signature(back), signature(m));
            int64_t count = 0;
            for (const auto &[key, t] : m.parameters())
                count += t->numel();
            QCOMPARE(m.parameterCount(), count);
            QVERIFY2(count > 0, name);
        }
    }

    // GPT-2's matrices are held as every family's, [out, in]; model.safetensors keeps them as its Conv1D [in, out], so
    // Hugging Face's GPT2Model reads what the app writes. The moe config's router and experts and the
    // encoder–decoder's cross-attention are Conv1D too.
    void conv1dMatricesAreHeldOutByInAndSavedInByOut()
    {
        for (const auto &[name, config] : configs()) {
            const Model m = Model::random(config, 5);
            const int64_t D = config.dModel;
            QCOMPARE(m.blocks[0].weight(BlockPart::Qkv).shape(), (Shape {3 * D, D}));
            QTemporaryDir dir;
            m.save(dir.path().toStdString());
            const SafetensorsFile file(dir.filePath("model.safetensors").toStdString());
            const std::set<std::string> conv1d = m.conv1dParameterNames();
            QVERIFY(conv1d.contains("h.0.attn.c_attn.weight") && conv1d.contains("h.0.mlp.c_proj.weight"));
            QVERIFY(!conv1d.contains("wte.weight") && !conv1d.contains("h.0.attn.c_attn.bias"));
            for (const auto &[key, held] : m.parameters()) {
                const Tensor saved = file.tensor(key);
                if (!conv1d.contains(key)) {
                    QVERIFY2(saved.shape() == held->shape(), key.c_str());
                    continue;
                }
                QVERIFY2(saved.shape() == (Shape {held->dim(1), held->dim(0)}), key.c_str());
                QVERIFY2(saved.matrix() == held->matrix().transpose(), key.c_str());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestModel)
#include "tst_model.moc"
