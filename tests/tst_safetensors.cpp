#include "io/atomicfile.h"
#include "io/safetensors.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <bit>
#include <cmath>
#include <csignal>
#include <cstring>
#include <limits>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace atlas;
using namespace atlas::testing;

namespace {

// A safetensors file from a header text and raw data; headerLength overrides the 8-byte length field.
std::string buildFile(const std::string &header, const std::string &data, int64_t headerLength = -1)
{
    const uint64_t n = headerLength < 0 ? header.size() : static_cast<uint64_t>(headerLength);
    std::string out(reinterpret_cast<const char *>(&n), 8);
    return out + header + data;
}

std::string u16Bytes(std::initializer_list<uint16_t> values)
{
    std::string out;
    for (uint16_t v : values)
        out.append(reinterpret_cast<const char *>(&v), 2);
    return out;
}

Tensor sequenceFrom(Shape shape, float start)
{
    Tensor t(std::move(shape));
    for (int64_t i = 0; i < t.numel(); ++i)
        t.data()[i] = start + 0.25f * static_cast<float>(i);
    return t;
}

uint32_t bits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

QStringList tempFiles(const QString &dir)
{
    return QDir(dir).entryList({"*.tmp-*"}, QDir::Files | QDir::Hidden);
}

} // namespace

class TestSafetensors : public QObject
{
    Q_OBJECT

private slots:
    void roundTrip();
    void metadataAndLayout();
    void readsF16();
    void readsBF16();
    void readsLargeTensorsWhole();
    void listsOtherDtypes();
    void rejectsMalformed_data();
    void rejectsMalformed();
    void rejectsShortFile();
    void unknownName();
    void missingFile();
    void failedWriteKeepsPreviousFile();
    void writeIntoReadOnlyDirectory();
    void writeOverDirectory();

private:
    QTemporaryDir m_dir;
    std::string path(const char *name) const { return m_dir.filePath(name).toStdString(); }
    void expectError(const std::string &file, const std::string &tensorName, const QString &expected);
};

void TestSafetensors::expectError(const std::string &file, const std::string &tensorName, const QString &expected)
{
    try {
        SafetensorsFile f(file);
        f.tensor(tensorName);
    } catch (const Error &e) {
        const QString message = QString::fromStdString(e.what());
        QVERIFY2(message.startsWith(QString::fromStdString(file) + ": "), qPrintable(message));
        QVERIFY2(message.contains(expected), qPrintable(message + " lacks: " + expected));
        return;
    }
    QFAIL("no atlas::Error thrown");
}

void TestSafetensors::roundTrip()
{
    QVERIFY(m_dir.isValid());
    Tensor scalar(Shape {}, -3.5f);
    Tensor vector = sequenceFrom({7}, 1.0f);
    Tensor matrix = sequenceFrom({3, 4}, -2.0f);
    Tensor cube = sequenceFrom({2, 3, 5}, 0.5f);
    Tensor empty(Shape {0, 3});
    // Values whose bits a lossy path would change: NaN payload, -0, a float32 subnormal, infinity.
    matrix.data()[0] = std::bit_cast<float>(0x7FC01234u);
    matrix.data()[1] = -0.0f;
    matrix.data()[2] = std::numeric_limits<float>::denorm_min();
    matrix.data()[3] = -std::numeric_limits<float>::infinity();

    const std::string file = path("roundtrip.safetensors");
    writeSafetensors(
        file, {{"scalar", &scalar}, {"a.vector", &vector}, {"m", &matrix}, {"z.cube", &cube}, {"empty", &empty}});
    SafetensorsFile f(file);
    QCOMPARE(f.entries().size(), size_t(5));
    QVERIFY(f.metadata().empty());
    QVERIFY(sameBits(f.tensor("scalar"), scalar));
    QCOMPARE(f.tensor("scalar").rank(), 0);
    QCOMPARE(f.tensor("scalar").numel(), int64_t(1));
    QVERIFY(sameBits(f.tensor("a.vector"), vector));
    QVERIFY(sameBits(f.tensor("m"), matrix));
    QCOMPARE(bits(f.tensor("m").data()[0]), 0x7FC01234u);
    QVERIFY(sameBits(f.tensor("z.cube"), cube));
    QVERIFY(sameBits(f.tensor("empty"), empty));
    QCOMPARE(f.tensor("empty").shape(), (Shape {0, 3}));
    QCOMPARE(f.entries().at("z.cube").dtype, std::string("F32"));
    QVERIFY(tempFiles(m_dir.path()).isEmpty());
}

void TestSafetensors::metadataAndLayout()
{
    Tensor b = sequenceFrom({3}, 1.0f);
    Tensor a = sequenceFrom({2, 2}, 5.0f);
    const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", "héllo \"quoted\""}};
    const std::string file = path("meta.safetensors");
    writeSafetensors(file, {{"b", &b}, {"a", &a}}, metadata);

    SafetensorsFile f(file);
    QCOMPARE(f.metadata(), metadata);
    QVERIFY(!f.contains("__metadata__"));
    // Sorted names, contiguous offsets from 0, a header padded to 8 bytes so the data starts aligned.
    QCOMPARE(f.entries().at("a").begin, uint64_t(0));
    QCOMPARE(f.entries().at("a").end, uint64_t(16));
    QCOMPARE(f.entries().at("b").begin, uint64_t(16));
    QCOMPARE(f.entries().at("b").end, uint64_t(28));
    const std::string raw = readFile(file);
    uint64_t headerLength = 0;
    std::memcpy(&headerLength, raw.data(), 8);
    QCOMPARE(headerLength % 8, uint64_t(0));
    QCOMPARE(raw.size(), 8 + headerLength + 28);
    QVERIFY(raw.find("\"a\"") < raw.find("\"b\""));
    QVERIFY(sameBits(f.tensor("a"), a));
}

void TestSafetensors::readsF16()
{
    // 1.0, -2.0, +inf, smallest subnormal 2^-24, largest subnormal, -0, NaN, 65504 (max half), 0.5
    const std::string data = u16Bytes({0x3C00, 0xC000, 0x7C00, 0x0001, 0x03FF, 0x8000, 0x7E00, 0x7BFF, 0x3800});
    const std::string header = R"({"h":{"dtype":"F16","shape":[3,3],"data_offsets":[0,18]}})";
    const std::string file = path("f16.safetensors");
    writeFileAtomically(file, buildFile(header, data));
    const Tensor t = SafetensorsFile(file).tensor("h");
    QCOMPARE(t.shape(), (Shape {3, 3}));
    const float *v = t.data();
    QCOMPARE(v[0], 1.0f);
    QCOMPARE(v[1], -2.0f);
    QVERIFY(std::isinf(v[2]) && v[2] > 0);
    QCOMPARE(v[3], std::ldexp(1.0f, -24));
    QCOMPARE(v[4], 1023.0f * std::ldexp(1.0f, -24));
    QCOMPARE(bits(v[5]), 0x80000000u);
    QVERIFY(std::isnan(v[6]));
    QCOMPARE(v[7], 65504.0f);
    QCOMPARE(v[8], 0.5f);
}

void TestSafetensors::readsBF16()
{
    // 1.0, -5.0, -inf, 3.140625 (0x4049), and a header padded with spaces as the Python writer does.
    const std::string data = u16Bytes({0x3F80, 0xC0A0, 0xFF80, 0x4049});
    const std::string header = R"({"b":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}}   )";
    const std::string file = path("bf16.safetensors");
    writeFileAtomically(file, buildFile(header, data));
    const Tensor t = SafetensorsFile(file).tensor("b");
    QCOMPARE(t.shape(), (Shape {4}));
    QCOMPARE(t.data()[0], 1.0f);
    QCOMPARE(t.data()[1], -5.0f);
    QVERIFY(std::isinf(t.data()[2]) && t.data()[2] < 0);
    QCOMPARE(t.data()[3], 3.140625f);
}

// Tensors of millions of elements are converted in parallel blocks, from data at an odd offset, and the file's pages
// are released once read: every element arrives, and a second read gives the same bits.
void TestSafetensors::readsLargeTensorsWhole()
{
    const int64_t nb = 3 * (int64_t(1) << 20) + 5, nf = 2 * (int64_t(1) << 20) + 3;
    const auto bf16 = [](int64_t i) { return uint16_t(0x3F80 + (i * 7919) % 0x3000); }; // finite values
    std::string data(1, '\0'); // the BF16 tensor starts one byte in: unaligned
    for (int64_t i = 0; i < nb; ++i) {
        const uint16_t v = bf16(i);
        data.append(reinterpret_cast<const char *>(&v), 2);
    }
    data.append(1, '\0');
    const int64_t f32Begin = int64_t(data.size());
    for (int64_t i = 0; i < nf; ++i) {
        const float v = float(i) * 0.5f - 7.0f;
        data.append(reinterpret_cast<const char *>(&v), 4);
    }
    const std::string header = R"({"pad":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"BF16","shape":[)"
        + std::to_string(nb) + R"(],"data_offsets":[1,)" + std::to_string(1 + 2 * nb)
        + R"(]},"f":{"dtype":"F32","shape":[)" + std::to_string(nf) + R"(],"data_offsets":[)" + std::to_string(f32Begin)
        + "," + std::to_string(data.size()) + "]}}";
    const std::string file = path("large.safetensors");
    writeFileAtomically(file, buildFile(header, data));
    SafetensorsFile f(file);
    const Tensor b = f.tensor("b"), fl = f.tensor("f");
    for (int64_t i = 0; i < nb; ++i)
        if (bits(b.data()[i]) != uint32_t(bf16(i)) << 16)
            QFAIL(qPrintable(QString("BF16 element %1").arg(i)));
    for (int64_t i = 0; i < nf; ++i)
        if (fl.data()[i] != float(i) * 0.5f - 7.0f)
            QFAIL(qPrintable(QString("F32 element %1").arg(i)));
    QVERIFY(sameBits(f.tensor("b"), b));
    QVERIFY(sameBits(f.tensor("f"), fl));
}

void TestSafetensors::listsOtherDtypes()
{
    const std::string header = R"({"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
                               R"("w":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}})";
    const float one = 1.0f;
    const std::string file = path("mixed.safetensors");
    const std::string data = std::string(16, '\0') + std::string(reinterpret_cast<const char *>(&one), 4);
    writeFileAtomically(file, buildFile(header, data));
    SafetensorsFile f(file);
    QCOMPARE(f.entries().at("ids").dtype, std::string("I64"));
    QCOMPARE(f.entries().at("ids").shape, (Shape {2}));
    QCOMPARE(f.tensor("w").data()[0], 1.0f);
    expectError(file, "ids", "tensor 'ids': dtype I64 is not supported");
}

void TestSafetensors::rejectsMalformed_data()
{
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<QString>("expected");
    const auto row = [](const char *tag, const std::string &file, const char *tensor, const char *expected) {
        QTest::newRow(tag) << QByteArray::fromStdString(file) << tensor << expected;
    };
    const std::string ok = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    const std::string eight(8, '\0');

    row("truncated data", buildFile(ok, std::string(5, '\0')), "t",
        "tensor 't': data_offsets [0, 8] exceed the data section of 5 bytes");
    row("header length beyond file", buildFile(ok, eight, 4096), "t", "header: length 4096 exceeds the");
    row("header length huge", buildFile(ok, eight, int64_t(1) << 62), "t", "header: length 4611686018427387904");
    row("header not json", buildFile("{\"t\": [1, 2", eight), "t", "header: not valid JSON");
    row("header not object", buildFile("[1, 2, 3]", eight), "t", "header: not a JSON object");
    row("header empty", buildFile("", eight), "t", "header: not valid JSON");
    row("duplicate name",
        buildFile(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                  R"("t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
            eight),
        "t", "header: duplicate entry 't'");
    row("offsets out of range", buildFile(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", eight), "t",
        "tensor 't': data_offsets [8, 16] exceed the data section of 8 bytes");
    row("offsets reversed", buildFile(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", eight), "t",
        "tensor 't': data_offsets [8, 0] begin after they end");
    row("offsets negative", buildFile(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})", eight), "t",
        "tensor 't': data_offsets is not a pair of non-negative integers");
    row("offsets overlap",
        buildFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
            eight),
        "a", "tensor 'b': data_offsets overlap those of tensor 'a'");
    row("size not shape", buildFile(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight + "1234"), "t",
        "tensor 't': shape [3] of F32 needs 12 bytes but data_offsets [0, 8] hold 8");
    row("size not dtype", buildFile(R"({"t":{"dtype":"F16","shape":[2],"data_offsets":[0,8]}})", eight), "t",
        "tensor 't': shape [2] of F16 needs 4 bytes");
    row("numel overflow",
        buildFile(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", eight), "t",
        "tensor 't': shape [4294967296, 4294967296] of F32 needs more than 2^64");
    row("negative dim", buildFile(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight), "t",
        "tensor 't': shape element -2 is not a non-negative integer");
    row("fractional dim", buildFile(R"({"t":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", eight), "t",
        "shape element 2.0 is not a non-negative integer");
    row("unknown dtype", buildFile(R"({"t":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", eight), "t",
        "tensor 't': unknown dtype 'F33'");
    row("missing dtype", buildFile(R"({"t":{"shape":[2],"data_offsets":[0,8]}})", eight), "t",
        "tensor 't': missing or non-string dtype");
    row("missing shape", buildFile(R"({"t":{"dtype":"F32","data_offsets":[0,8]}})", eight), "t",
        "tensor 't': missing or non-array shape");
    row("entry not object", buildFile(R"({"t":[1]})", eight), "t", "tensor 't': entry is not an object");
    row("metadata not strings", buildFile(R"({"__metadata__":{"n":1}})", eight), "t",
        "header: __metadata__ value of 'n' is not a string");
    row("unsupported dtype", buildFile(R"({"i":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", eight), "i",
        "tensor 'i': dtype I64 is not supported");
}

void TestSafetensors::rejectsMalformed()
{
    QFETCH(QByteArray, file);
    QFETCH(QString, tensor);
    QFETCH(QString, expected);
    const std::string name = path("bad.safetensors");
    writeFileAtomically(name, file.toStdString());
    expectError(name, tensor.toStdString(), expected);
}

void TestSafetensors::rejectsShortFile()
{
    for (size_t n : {0, 1, 7}) {
        const std::string name = path("short.safetensors");
        writeFileAtomically(name, std::string(n, '\x01'));
        expectError(name, "t", "header: file is " + QString::number(n) + " bytes, shorter than");
    }
}

void TestSafetensors::unknownName()
{
    Tensor t(Shape {2}, 1.0f);
    const std::string file = path("names.safetensors");
    writeSafetensors(file, {{"present", &t}});
    QVERIFY(SafetensorsFile(file).contains("present"));
    expectError(file, "absent", "tensor 'absent': no such tensor");
}

void TestSafetensors::missingFile()
{
    expectError(path("does-not-exist.safetensors"), "t", "cannot open");
}

void TestSafetensors::failedWriteKeepsPreviousFile()
{
    Tensor small(Shape {2}, 7.0f);
    const std::string file = path("keep.safetensors");
    writeSafetensors(file, {{"w", &small}});
    const std::string before = readFile(file);

    // Make the write itself fail part way (EFBIG past a file size limit), after the temporary file exists.
    Tensor big(Shape {4096}, 1.0f);
    rlimit old;
    QCOMPARE(getrlimit(RLIMIT_FSIZE, &old), 0);
    const auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = old;
    limited.rlim_cur = 1024;
    QCOMPARE(setrlimit(RLIMIT_FSIZE, &limited), 0);
    QString message;
    try {
        writeSafetensors(file, {{"w", &big}});
    } catch (const Error &e) {
        message = e.what();
    }
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, oldHandler);

    QVERIFY2(message.startsWith(QString::fromStdString(file) + ": cannot write"), qPrintable(message));
    QCOMPARE(readFile(file), before);
    QVERIFY(tempFiles(m_dir.path()).isEmpty());
    QCOMPARE(SafetensorsFile(file).tensor("w").data()[1], 7.0f);
}

void TestSafetensors::writeIntoReadOnlyDirectory()
{
    if (geteuid() == 0)
        QSKIP("root ignores directory permissions");
    QTemporaryDir dir;
    const std::string file = dir.filePath("ro.safetensors").toStdString();
    Tensor t(Shape {2}, 3.0f);
    writeSafetensors(file, {{"w", &t}});
    const std::string before = readFile(file);
    QVERIFY(chmod(dir.path().toLocal8Bit().constData(), 0555) == 0);
    Tensor other(Shape {3}, 4.0f);
    QString message;
    try {
        writeSafetensors(file, {{"w", &other}});
    } catch (const Error &e) {
        message = e.what();
    }
    chmod(dir.path().toLocal8Bit().constData(), 0755);
    QVERIFY2(
        message.startsWith(QString::fromStdString(file) + ": cannot create a temporary file"), qPrintable(message));
    QCOMPARE(readFile(file), before);
}

void TestSafetensors::writeOverDirectory()
{
    const QString dirPath = m_dir.filePath("adir");
    QVERIFY(QDir().mkpath(dirPath + "/inside"));
    Tensor t(Shape {2}, 3.0f);
    try {
        writeSafetensors(dirPath.toStdString(), {{"w", &t}});
        QFAIL("writing over a directory succeeded");
    } catch (const Error &e) {
        QCOMPARE(QString(e.what()), dirPath + ": is a directory");
    }
    QVERIFY(QDir(dirPath + "/inside").exists());
    QVERIFY(tempFiles(m_dir.path()).isEmpty());

    const std::string missing = m_dir.filePath("no/such/dir/x.safetensors").toStdString();
    try {
        writeSafetensors(missing, {{"w", &t}});
        QFAIL("writing into a missing directory succeeded");
    } catch (const Error &e) {
        QVERIFY2(QString(e.what()).startsWith(QString::fromStdString(missing) + ": cannot create"), e.what());
    }
}

QTEST_GUILESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
