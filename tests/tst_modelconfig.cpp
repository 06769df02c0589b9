// config.json as a stranger writes it: every integer is type- and range-checked before use, and every failure,
// nlohmann's own exceptions included, names the file and the key.
#include "model/modelconfig.h"
#include "util/error.h"

#include <QTest>

using namespace atlas;

class TestModelConfig : public QObject
{
    Q_OBJECT

    static std::string errorOf(const std::string &json)
    {
        try {
            ModelConfig::fromJson(json, "dir/config.json");
        } catch (const Error &e) {
            return e.what();
        }
        return {};
    }

private slots:
    void acceptsGpt2()
    {
        const ModelConfig c = ModelConfig::fromJson(
            R"({"n_layer": 12, "n_head": 12, "n_embd": 768, "n_inner": null, "vocab_size": 50257, "n_ctx": 1024})",
            "gpt2/config.json");
        QCOMPARE(c.dModel, 768);
        QCOMPARE(c.dFF, 3072);
        QCOMPARE(c.context, 1024);
        QCOMPARE(ModelConfig::fromJson(c.toJson(), "again").dFF, 3072);
    }

    void refusesBadIntegers_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("key");
        // Found by probing: 4294967328 loaded as 32, 2^40 as 0, 2^30 overflowed 4 · n_embd.
        QTest::newRow("n_embd wraps to 32") << R"({"n_embd": 4294967328})"
                                            << "'n_embd'";
        QTest::newRow("n_layer 2^40") << R"({"n_layer": 1099511627776})"
                                      << "'n_layer'";
        QTest::newRow("n_embd 2^30") << R"({"n_embd": 1073741824, "n_head": 1})"
                                     << "'n_embd'";
        QTest::newRow("negative n_head") << R"({"n_head": -4})"
                                         << "'n_head'";
        QTest::newRow("float n_layer") << R"({"n_layer": 2.5})"
                                       << "'n_layer'";
        QTest::newRow("string vocab") << R"({"vocab_size": "256"})"
                                      << "'vocab_size'";
        QTest::newRow("n_positions 1e30") << R"({"n_positions": 1e30})"
                                          << "'n_positions'";
        QTest::newRow("too large for a double") << R"({"n_embd": 1e500})"
                                                << "'n_embd'";
        QTest::newRow("epsilon nan-like") << R"({"layer_norm_epsilon": -1})"
                                          << "'layer_norm_epsilon'";
        QTest::newRow("matrix too large") << R"({"vocab_size": 16000000, "n_embd": 65536, "n_head": 1})"
                                          << "vocab_size · n_embd";
        QTest::newRow("n_inner default too large") << R"({"n_embd": 65536, "n_head": 1, "n_inner": null})"
                                                   << "n_inner";
    }

    void refusesBadIntegers()
    {
        QFETCH(QString, json);
        QFETCH(QString, key);
        const std::string m = errorOf(json.toStdString());
        QVERIFY2(m.starts_with("dir/config.json: "), m.c_str());
        QVERIFY2(QString::fromStdString(m).contains(key), m.c_str());
        QVERIFY2(!QString::fromStdString(m).contains("[json.exception"), m.c_str());
    }

    // Model::random and new-model validate built configs with the same ranges.
    void validateChecksRanges()
    {
        ModelConfig c;
        c.dModel = 1 << 30;
        c.heads = 1;
        try {
            c.validate("new-model");
            QFAIL("n_embd 2^30 accepted");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("n_embd"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestModelConfig)
#include "tst_modelconfig.moc"
