#include "io/atomicfile.h"
#include "io/npy.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace atlas;
using namespace atlas::testing;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");

Tensor npySequence(Shape shape)
{
    Tensor t(std::move(shape));
    for (int64_t i = 0; i < t.numel(); ++i)
        t.data()[i] = 0.5f * static_cast<float>(i) - 3.0f;
    return t;
}

std::string preambleOf(const std::string &dict, size_t total)
{
    const size_t headerLength = total - 10;
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(headerLength & 0xFF);
    out += static_cast<char>(headerLength >> 8);
    out += dict;
    out.append(total - out.size() - 1, ' ');
    return out + '\n';
}

bool haveNumpy()
{
    static const bool have = QProcess::execute(kPython, {"-c", "import numpy"}) == 0;
    return have;
}

// Runs a Python snippet with numpy; the arguments are in sys.argv[1:].
QString runPython(const QString &script, const QStringList &args)
{
    QProcess p;
    p.start(kPython, QStringList {"-c", script} + args);
    if (!p.waitForFinished(60000) || p.exitCode() != 0)
        return "python failed: " + QString::fromLocal8Bit(p.readAllStandardError());
    return QString::fromLocal8Bit(p.readAllStandardOutput()).trimmed();
}

} // namespace

class TestNpy : public QObject
{
    Q_OBJECT

private slots:
    void roundTrip_data();
    void roundTrip();
    void preambleIsNumpys();
    void numpyReadsOurFiles_data();
    void numpyReadsOurFiles();
    void weReadNumpyFiles();
    void rejectsMalformed_data();
    void rejectsMalformed();

private:
    QTemporaryDir m_dir;
    std::string path(const char *name) const { return m_dir.filePath(name).toStdString(); }
};

void TestNpy::roundTrip_data()
{
    QTest::addColumn<Shape>("shape");
    QTest::newRow("scalar") << Shape {};
    QTest::newRow("vector") << Shape {5};
    QTest::newRow("matrix") << Shape {3, 4};
    QTest::newRow("rank3") << Shape {2, 3, 7};
    QTest::newRow("empty") << Shape {0, 3};
}

void TestNpy::roundTrip()
{
    QFETCH(Shape, shape);
    const Tensor t = npySequence(shape);
    const std::string file = path("rt.npy");
    writeNpy(file, t);
    const std::string raw = readFile(file);
    QCOMPARE(raw.size() % 64, t.bytes() % 64);
    QVERIFY(sameBits(readNpy(file), t));
}

void TestNpy::preambleIsNumpys()
{
    // Numpy pads the dict with spare spaces (21 minus the digits of the first dimension) so the first
    // dimension can grow in place, then with spaces and a newline to a 64-byte boundary.
    const std::string dict34 = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" + std::string(20, ' ');
    const std::string dict5 = "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }" + std::string(20, ' ');
    const std::string dictScalar = "{'descr': '<f4', 'fortran_order': False, 'shape': (), }";
    const std::string dictLong = "{'descr': '<f4', 'fortran_order': False, 'shape': (123456, 1, 1, 1, 1, 1, 1, 1, "
                                 "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }"
        + std::string(15, ' ');
    const std::pair<Shape, std::string> cases[] = {
        {{3, 4}, preambleOf(dict34, 128)},
        {{5}, preambleOf(dict5, 128)},
        {{}, preambleOf(dictScalar, 128)},
        {{123456, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, preambleOf(dictLong, 192)},
    };
    for (const auto &[shape, expected] : cases) {
        Tensor t(shape, 0.0f);
        writeNpy(path("p.npy"), t);
        const std::string raw = readFile(path("p.npy"));
        QCOMPARE(raw.size(), expected.size() + t.bytes());
        QCOMPARE(QByteArray::fromStdString(raw.substr(0, expected.size())), QByteArray::fromStdString(expected));
        QCOMPARE(expected.size() % 64, size_t(0));
    }
}

void TestNpy::numpyReadsOurFiles_data()
{
    roundTrip_data();
}

void TestNpy::numpyReadsOurFiles()
{
    if (!haveNumpy())
        QSKIP("numpy is not installed for /usr/bin/python3");
    QFETCH(Shape, shape);
    const Tensor t = npySequence(shape);
    const std::string ours = path("ours.npy");
    const std::string theirs = path("theirs.npy");
    writeNpy(ours, t);

    // numpy loads our file with the same shape, dtype and values, and np.save of the same array is identical.
    const QString script = R"(
import sys, numpy as np
a = np.load(sys.argv[1])
shape = tuple(int(d) for d in sys.argv[3].split(',') if d)
b = ((np.arange(int(np.prod(shape)), dtype=np.float32) * 0.5) - 3.0).astype(np.float32).reshape(shape)
np.save(sys.argv[2], b)
print(a.dtype, a.shape, repr(float(a.astype(np.float64).sum())), bool(np.array_equal(a, b)))
)";
    QStringList dims;
    for (int64_t d : shape)
        dims << QString::number(d);
    double sum = 0;
    for (float v : t.values())
        sum += v;
    const QString shapeText = "(" + dims.join(", ") + (dims.size() == 1 ? ",)" : ")");
    const QString out
        = runPython(script, {QString::fromStdString(ours), QString::fromStdString(theirs), dims.join(',')});
    QCOMPARE(out, "float32 " + shapeText + " " + QString::number(sum, 'f', 1) + " True");
    QCOMPARE(QByteArray::fromStdString(readFile(ours)), QByteArray::fromStdString(readFile(theirs)));
}

void TestNpy::weReadNumpyFiles()
{
    if (!haveNumpy())
        QSKIP("numpy is not installed for /usr/bin/python3");
    const QString script = R"(
import sys, numpy as np
a = np.array([[1.5, -2.0, 3.25], [0.0, 2.0**-140, np.inf]], dtype=np.float32)
np.save(sys.argv[1], a)
with open(sys.argv[2], 'wb') as f:
    np.lib.format.write_array(f, a, version=(2, 0))
np.save(sys.argv[3], np.asfortranarray(a))
np.save(sys.argv[4], a.astype(np.float64))
)";
    const std::string v1 = path("np1.npy"), v2 = path("np2.npy"), fortran = path("npf.npy"), f8 = path("np8.npy");
    QCOMPARE(runPython(script,
                 {QString::fromStdString(v1), QString::fromStdString(v2), QString::fromStdString(fortran),
                     QString::fromStdString(f8)}),
        QString());
    const float expected[] = {1.5f, -2.0f, 3.25f, 0.0f, std::ldexp(1.0f, -140), std::numeric_limits<float>::infinity()};
    for (const std::string &file : {v1, v2}) {
        const Tensor t = readNpy(file);
        QCOMPARE(t.shape(), (Shape {2, 3}));
        QVERIFY(std::memcmp(t.data(), expected, sizeof expected) == 0);
    }
    QVERIFY_THROWS_EXCEPTION(Error, readNpy(fortran));
    QVERIFY_THROWS_EXCEPTION(Error, readNpy(f8));
}

void TestNpy::rejectsMalformed_data()
{
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QString>("expected");
    const auto npy = [](const std::string &dict, size_t dataBytes, char major = 1) {
        std::string header = dict + "\n";
        std::string out("\x93NUMPY", 6);
        out += major;
        out += '\0';
        out += static_cast<char>(header.size() & 0xFF);
        out += static_cast<char>(header.size() >> 8);
        if (major != 1)
            out += std::string(2, '\0');
        return QByteArray::fromStdString(out + header + std::string(dataBytes, '\0'));
    };
    const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    QTest::newRow("ok") << npy(good, 24) << QString();
    QTest::newRow("empty") << QByteArray() << "not an .npy file";
    QTest::newRow("bad magic") << QByteArray("\x93NUMPZ\x01\x00\x00\x00", 10) << "not an .npy file";
    QTest::newRow("version 9") << npy(good, 24, 9) << "unsupported .npy version 9.0";
    QTest::newRow("truncated data") << npy(good, 20) << "needs 24 bytes of data but the file holds 20";
    QTest::newRow("trailing data") << npy(good, 28) << "needs 24 bytes of data but the file holds 28";
    QTest::newRow("header past end") << npy(good, 24).left(40) << "header length 60 exceeds the file size";
    QTest::newRow("f8") << npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48)
                        << "dtype '<f8' is not supported";
    QTest::newRow("big endian") << npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24)
                                << "dtype '>f4' is not supported";
    QTest::newRow("fortran") << npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24)
                             << "Fortran-order arrays are not supported";
    QTest::newRow("no shape") << npy("{'descr': '<f4', 'fortran_order': False, }", 24) << "missing";
    QTest::newRow("negative dim") << npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", 24)
                                  << "expected a non-negative integer";
    QTest::newRow("huge dims") << npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
        24) << "is too large";
    QTest::newRow("not a dict") << npy("[1, 2]", 24) << "header: expected '{'";
    QTest::newRow("unknown key") << npy("{'descr': '<f4', 'x': 1}", 24) << "header: unexpected key 'x'";
}

void TestNpy::rejectsMalformed()
{
    QFETCH(QByteArray, file);
    QFETCH(QString, expected);
    const std::string name = path("bad.npy");
    writeFileAtomically(name, file.toStdString());
    try {
        const Tensor t = readNpy(name);
        QVERIFY2(expected.isEmpty(), "no atlas::Error thrown");
        QCOMPARE(t.shape(), (Shape {2, 3}));
    } catch (const Error &e) {
        const QString message = QString::fromStdString(e.what());
        QVERIFY2(!expected.isEmpty(), qPrintable(message));
        QVERIFY2(message.startsWith(QString::fromStdString(name) + ": "), qPrintable(message));
        QVERIFY2(message.contains(expected), qPrintable(message + " lacks: " + expected));
    }
}

QTEST_GUILESS_MAIN(TestNpy)
#include "tst_npy.moc"
