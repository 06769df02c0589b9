// Model's one table of parameters (model/model.cpp): Model::random fills every parameter a config requires, in the
// order of its random draws, which the shipped models' training commands depend on (the same seed gives the same
// bits, docs/models.md); save and load bring back every tensor by name and shape.
#include "model/model.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstring>

using namespace atlas;

namespace {

// FNV-1a over every parameter's name and values, in name order.
uint64_t fingerprint(const Model &m)
{
    uint64_t h = 1469598103934665603ull;
    const auto mix = [&h](const void *data, size_t bytes) {
        for (size_t i = 0; i < bytes; ++i)
            h = (h ^ static_cast<const unsigned char *>(data)[i]) * 1099511628211ull;
    };
    for (const auto &[name, t] : m.parameters()) {
        mix(name.data(), name.size());
        mix(t->values().data(), t->values().size() * sizeof(float));
    }
    return h;
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
    // The fingerprints were taken from the two-table code this table replaced (libstdc++'s mt19937_64 and
    // normal_distribution, Debian 12).
    void randomInitialisationIsPinned()
    {
        const std::map<std::string, uint64_t> expected
            = {{"dense", 0x6054231820133b6eull}, {"moe", 0xf24c331a5a96d2e3ull}, {"shaw", 0xb6ca4b30e0767368ull},
                {"t5", 0xcab5efedd159c88cull}, {"encoder-decoder", 0xb555c861601871edull}};
        for (const auto &[name, config] : configs())
            QCOMPARE(fingerprint(Model::random(config, 7)), expected.at(name));
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
            QCOMPARE(fingerprint(back), fingerprint(m));
            int64_t count = 0;
            for (const auto &[key, t] : m.parameters())
                count += t->numel();
            QCOMPARE(m.parameterCount(), count);
            QVERIFY2(count > 0, name);
        }
    }
};

QTEST_GUILESS_MAIN(TestModel)
#include "tst_model.moc"
