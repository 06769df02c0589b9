// The measured attention sweep file (attention/attentionsweep.h): one parser for bench-attention and the Kernels
// view, validated, with errors that name the file and the field.
#include "attention/attentionsweep.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

using namespace atlas;
using namespace atlas::attention;

class TestAttentionSweep : public QObject
{
    Q_OBJECT

    static QString errorOf(const std::string &json)
    {
        try {
            parseAttentionSweep(json, "sweep.json");
        } catch (const Error &e) {
            return QString::fromStdString(e.what());
        }
        return {};
    }

    static std::string withKernel(const std::string &kernel)
    {
        return R"({"machine": "m", "date": "2026-11-23", "d_head": 64, "matrix_backend": "OpenBLAS", "kernels": [)"
            + kernel + "]}";
    }

private slots:
    void roundTripsAndReplacesAKernelsSweep()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("sweep.json").toStdString();
        AttentionSweepFile file {"AMD EPYC, 2 cores", "2026-11-23", 64, "OpenBLAS", {}};
        file.put({"full", "full", false, 5, 1.9, {{256, 0.3, 0.2, 0.4}, {512, 1.3, 1.2, 1.5}}});
        file.put({"lsh", "lsh (…)", false, 5, 0.9, {{256, 2.0, 1.9, 2.1}}});
        file.put({"full", "full", false, 3, 2.0, {{256, 0.31, 0.3, 0.32}}}); // replaces the first
        writeAttentionSweep(path, file);
        const AttentionSweepFile back = readAttentionSweep(path);
        QCOMPARE(back.machine, file.machine);
        QCOMPARE(back.dHead, 64);
        QCOMPARE(back.kernels.size(), size_t(2));
        QCOMPARE(back.kernels[1].kind, std::string("full"));
        QCOMPARE(back.kernels[1].repeat, 3);
        QCOMPARE(back.kernels[1].points.size(), size_t(1));
        QCOMPARE(back.kernels[1].points[0].medianMs, 0.31);
    }

    void theShippedFileReads()
    {
        const AttentionSweepFile f = readAttentionSweep(ATLAS_SOURCE_DIR "/resources/benchmarks/attention-sweep.json");
        QCOMPARE(f.kernels.size(), size_t(8));
        for (const KernelSweep &k : f.kernels)
            QVERIFY(k.points.size() >= 2);
    }

    void errorsNameTheFileAndTheField()
    {
        QVERIFY(errorOf("{").startsWith("sweep.json: not valid JSON"));
        QCOMPARE(errorOf(R"({"date": "x"})"), QString("sweep.json: key 'machine' is missing"));
        const QString point = R"({"kind": "full", "description": "full", "causal": false, "repeat": 5,
            "slope_upper_half": 2, "points": [{"n": 512, "median_ms": 1, "min_ms": 1, "max_ms": 1}, %1]})";
        QCOMPARE(
            errorOf(withKernel(point.arg(R"({"n": 256, "median_ms": 1, "min_ms": 1, "max_ms": 1})").toStdString())),
            QString("sweep.json: key 'kernels[0].points[1].n' must increase from point to point"));
        QVERIFY(
            errorOf(withKernel(point.arg(R"({"n": 1024, "median_ms": -1, "min_ms": 1, "max_ms": 1})").toStdString()))
                .startsWith("sweep.json: key 'kernels[0].points[1].median_ms' is out of range: -1 (allowed: 0.0 to "));
        QCOMPARE(
            errorOf(withKernel(R"({"kind": 3})")), QString("sweep.json: key 'kernels[0].kind' must be a string, is 3"));
        QCOMPARE(errorOf(withKernel("[]")), QString("sweep.json: key 'kernels[0]' must be an object, is []"));
    }
};

QTEST_GUILESS_MAIN(TestAttentionSweep)
#include "tst_attentionsweep.moc"
