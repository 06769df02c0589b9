#include "io/gguf.h"
#include "io/weightvalues.h"
#include "tensor/matrixproduct.h"
#include "tensor/packedrows.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <utility>

using namespace atlas;
using namespace atlas::testing;

namespace {

// A GGUF file written byte by byte, to make each malformed file the reader must refuse.
struct GgufBytes
{
    std::string bytes;

    GgufBytes &u32(uint32_t v) { return raw(&v, 4); }
    GgufBytes &u64(uint64_t v) { return raw(&v, 8); }
    GgufBytes &str(const std::string &s)
    {
        u64(s.size());
        bytes += s;
        return *this;
    }
    GgufBytes &raw(const void *p, size_t n)
    {
        bytes.append(static_cast<const char *>(p), n);
        return *this;
    }
    GgufBytes &header(uint64_t tensors, uint64_t keys, uint32_t version = 3)
    {
        bytes += "GGUF";
        return u32(version).u64(tensors).u64(keys);
    }
    GgufBytes &stringKey(const std::string &key, const std::string &value) { return str(key).u32(8).str(value); }
    GgufBytes &u32Key(const std::string &key, uint32_t value) { return str(key).u32(4).u32(value); }
    // A tensor info: name, ne (innermost first), ggml type, offset.
    GgufBytes &tensor(const std::string &name, std::initializer_list<uint64_t> ne, uint32_t type, uint64_t offset)
    {
        str(name).u32(uint32_t(ne.size()));
        for (uint64_t n : ne)
            u64(n);
        return u32(type).u64(offset);
    }
    GgufBytes &pad(size_t alignment = 32)
    {
        bytes.append((alignment - bytes.size() % alignment) % alignment, '\0');
        return *this;
    }
    GgufBytes &zeros(size_t n)
    {
        bytes.append(n, '\0');
        return *this;
    }
};

constexpr uint32_t kF32 = 0, kQ8_0 = 8, kIq2Xxs = 16;

} // namespace

class TestGguf : public QObject
{
    Q_OBJECT

private slots:
    void dequantizesEveryTypeAsGgufPyDoes();
    void readsEveryValueType();
    void namesTheKeyOfAWrongRead();
    void refusesWhatIsNotAGgufFile();
    void refusesATruncatedFileAtEveryByte();
    void refusesBadTensorInfos();
    void refusesBadTensorData();
    void refusesBadMetadata();
    void readsAFileOfTensorsOfOneRow();
    void keepsAMatrixPacked_data();
    void keepsAMatrixPacked();
    void readsATensorPacked();
    void multipliesAVectorByPackedRows();
    void placesEveryWeightOnItsBlocksLevels();

private:
    QTemporaryDir m_dir;
    std::string write(const std::string &name, const std::string &bytes);
    void expectRefusal(const std::string &bytes, const QString &expected, const char *what);
};

std::string TestGguf::write(const std::string &name, const std::string &bytes)
{
    const std::string path = m_dir.filePath(QString::fromStdString(name)).toStdString();
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes.data(), qint64(bytes.size())) != qint64(bytes.size()))
        qFatal("cannot write %s", path.c_str());
    return path;
}

void TestGguf::expectRefusal(const std::string &bytes, const QString &expected, const char *what)
{
    const std::string path = write("bad.gguf", bytes);
    try {
        GgufFile f(path);
        for (const auto &e : f.entries())
            f.tensor(e.name);
    } catch (const Error &e) {
        const QString message = QString::fromStdString(e.what());
        if (!message.startsWith(QString::fromStdString(path)) || !message.contains(expected))
            QFAIL(qPrintable(QString("%1: expected a message with '%2', got: %3").arg(what, expected, message)));
        return;
    }
    QFAIL(qPrintable(QString("%1: the file was accepted").arg(what)));
}

// tests/data/gguf/types.gguf holds a tensor of every type read, written by llama.cpp's gguf-py, and
// types-expected.gguf gguf-py's dequantization of each in F32 (tests/tools/make_gguf_fixtures.py).
void TestGguf::dequantizesEveryTypeAsGgufPyDoes()
{
    const GgufFile file(dataPath("gguf/types.gguf").toStdString());
    const GgufFile expected(dataPath("gguf/types-expected.gguf").toStdString());
    std::set<std::string> typesSeen;
    for (const GgufFile::Entry &e : file.entries()) {
        const std::string type = ggmlTypeInfo(e.type).name;
        QCOMPARE(e.name.substr(0, e.name.find('.')), type);
        typesSeen.insert(type);
        const Tensor got = file.tensor(e.name), want = expected.tensor(e.name);
        QCOMPARE(got.shape(), (Shape {2, 512}));
        QCOMPARE(want.shape(), got.shape());
        for (int64_t i = 0; i < got.numel(); ++i)
            if (std::bit_cast<uint32_t>(got.data()[i]) != std::bit_cast<uint32_t>(want.data()[i]))
                QFAIL(qPrintable(QString("%1, element %2: %3 (bits %4) against gguf-py's %5 (bits %6)")
                                     .arg(QString::fromStdString(e.name))
                                     .arg(i)
                                     .arg(double(got.data()[i]), 0, 'g', 9)
                                     .arg(std::bit_cast<uint32_t>(got.data()[i]), 8, 16)
                                     .arg(double(want.data()[i]), 0, 'g', 9)
                                     .arg(std::bit_cast<uint32_t>(want.data()[i]), 8, 16)));
    }
    std::set<std::string> read;
    const std::string names = readGgmlTypeNames();
    for (size_t at = 0; at < names.size();) {
        const size_t comma = names.find(", ", at);
        read.insert(names.substr(at, comma - at));
        at = comma == std::string::npos ? names.size() : comma + 2;
    }
    QCOMPARE(read.size(), size_t(16)); // the list
    QVERIFY(typesSeen == read);
}

void TestGguf::readsEveryValueType()
{
    const GgufFile f(dataPath("gguf/types.gguf").toStdString());
    QCOMPARE(f.version(), 3u);
    QCOMPARE(f.alignment(), uint64_t(32));
    QCOMPARE(f.string("general.architecture"), std::string("atlas-test"));
    QCOMPARE(f.unsignedValue("test.uint8"), uint64_t(200));
    QCOMPARE(f.number("test.int8"), -100.0);
    QCOMPARE(f.unsignedValue("test.uint16"), uint64_t(60000));
    QCOMPARE(f.number("test.int16"), -30000.0);
    QCOMPARE(f.unsignedValue("test.uint32"), uint64_t(4000000000u));
    QCOMPARE(f.number("test.int32"), -2000000000.0);
    QCOMPARE(f.number("test.float32"), double(0.1f));
    QCOMPARE(f.unsignedValue("test.uint64"), uint64_t(18000000000000000000u));
    QCOMPARE(f.number("test.int64"), -9000000000000000000.0);
    QCOMPARE(f.number("test.float64"), 0.1);
    QCOMPARE(f.boolean("test.bool"), true);
    QCOMPARE(f.string("test.string"), std::string("naïve “quotes” 🙂"));
    QCOMPARE(f.strings("test.strings"), (std::vector<std::string> {"", "a", "β", "longer text"}));
    QCOMPARE(f.integers("test.int32s"), (std::vector<int64_t> {-1, 0, 7}));
    QCOMPARE(f.numbers("test.float32s"), (std::vector<double> {0.5, -2.25}));
    QCOMPARE(f.metadata().at("test.strings").describe(), std::string("array of 4 string"));
}

void TestGguf::namesTheKeyOfAWrongRead()
{
    const GgufFile f(dataPath("gguf/types.gguf").toStdString());
    const auto message = [&](auto read) {
        try {
            read();
        } catch (const Error &e) {
            return QString::fromStdString(e.what());
        }
        return QString("no error");
    };
    const QString path = dataPath("gguf/types.gguf");
    QCOMPARE(
        message([&] { f.unsignedValue("llama.block_count"); }), path + ": metadata key 'llama.block_count': missing");
    QCOMPARE(message([&] { f.unsignedValue("test.int8"); }),
        path + ": metadata key 'test.int8': expected a non-negative integer, found a int8");
    QCOMPARE(message([&] { f.string("test.strings"); }),
        path + ": metadata key 'test.strings': expected a string, found a array of 4 string");
    QCOMPARE(message([&] { f.strings("test.float32s"); }),
        path + ": metadata key 'test.float32s': expected an array of strings, found a array of 2 float32");
    QCOMPARE(message([&] { f.tensor("nothing"); }), path + ": tensor 'nothing': no such tensor in the file");
}

void TestGguf::refusesWhatIsNotAGgufFile()
{
    expectRefusal("", "header (the magic GGUF): needs 4 bytes at offset 0", "an empty file");
    expectRefusal(
        GgufBytes().u32(0x67676a74).u32(3).zeros(16).bytes, "not a GGUF file: it begins with 'tjgg'", "a GGJT file");
    GgufBytes v1;
    v1.bytes = "GGUF";
    expectRefusal(v1.u32(1).zeros(16).bytes, "GGUF version 1 (a 2023 file)", "version 1");
    GgufBytes big;
    big.bytes = "GGUF";
    expectRefusal(big.u32(0x03000000).zeros(16).bytes, "a big-endian GGUF file", "big-endian");
    expectRefusal(
        GgufBytes().header(0, 0, 4).bytes, "GGUF version 4; this program reads versions 2 and 3", "a future version");
    // A version-2 file reads as version 3 does.
    const std::string v2 = write("v2.gguf", GgufBytes().header(0, 1, 2).stringKey("general.architecture", "x").bytes);
    QCOMPARE(GgufFile(v2).version(), 2u);
}

void TestGguf::refusesATruncatedFileAtEveryByte()
{
    QFile whole(dataPath("gguf/types.gguf"));
    QVERIFY(whole.open(QIODevice::ReadOnly));
    const QByteArray all = whole.readAll();
    const GgufFile f(dataPath("gguf/types.gguf").toStdString());
    uint64_t dataEnd = 0;
    for (const auto &e : f.entries())
        dataEnd = std::max(dataEnd, e.offset + e.bytes);
    const size_t headerBytes = size_t(all.size()) - size_t(dataEnd);
    // Every cut inside the magic, the counts, the metadata and the tensor infos, then some inside the data.
    for (size_t cut = 0; cut < headerBytes + size_t(dataEnd); cut += cut < headerBytes ? 1 : 997) {
        const std::string path = write("cut.gguf", std::string(all.constData(), cut));
        try {
            GgufFile g(path);
            QFAIL(qPrintable(QString("cut at %1 of %2 bytes: accepted").arg(cut).arg(all.size())));
        } catch (const Error &e) {
            const QString message = QString::fromStdString(e.what());
            QVERIFY2(message.contains("truncated"), qPrintable(QString("cut at %1: %2").arg(cut).arg(message)));
        }
    }
}

void TestGguf::refusesBadTensorInfos()
{
    const auto oneTensor = [](std::initializer_list<uint64_t> ne, uint32_t type, uint64_t offset = 0) {
        return GgufBytes().header(1, 0).tensor("w", ne, type, offset).pad().zeros(64).bytes;
    };
    expectRefusal(oneTensor({4, 2}, 99), "tensor 0 'w': type 99, which ggml does not define (it reads F32, F16, Q4_0",
        "an unknown type");
    expectRefusal(oneTensor({256}, kIq2Xxs),
        "tensor 0 'w': type IQ2_XXS, which this program does not read (it reads F32", "a type not read");
    expectRefusal(oneTensor({40}, kQ8_0), "tensor 0 'w': its rows of 40 elements are not whole blocks of 32 (Q8_0)",
        "a row of part of a block");
    expectRefusal(oneTensor({uint64_t(1) << 40, uint64_t(1) << 40}, kF32),
        "tensor 0 'w': its dimensions' product overflows", "a product that overflows");
    expectRefusal(
        GgufBytes().header(1, 0).str("w").u32(5).zeros(64).bytes, "tensor 0 'w': 5 dimensions", "five dimensions");
    expectRefusal(oneTensor({4, 2}, kF32, 4096),
        "tensor 0 'w': its 32 bytes at offset 4096 lie outside the data section", "an offset outside the file");
    expectRefusal(
        oneTensor({4}, kF32, 8), "tensor 0 'w': offset 8 is not a multiple of the alignment 32", "a misaligned offset");
    expectRefusal(GgufBytes().header(2, 0).tensor("a", {16}, kF32, 0).tensor("b", {4}, kF32, 32).pad().zeros(96).bytes,
        "tensor 1 'b': its data overlaps that of tensor 'a'", "overlapping tensors");
    expectRefusal(GgufBytes().header(2, 0).tensor("a", {4}, kF32, 0).tensor("a", {4}, kF32, 32).pad().zeros(96).bytes,
        "tensor 1 'a': a second tensor of that name", "a duplicate tensor");
    expectRefusal(GgufBytes().header(uint64_t(1) << 40, 0).zeros(64).bytes,
        "header (tensor count): a count of 1099511627776", "a tensor count beyond the file");
}

void TestGguf::refusesBadTensorData()
{
    // A tensor of NaN, asked for as a model's weights are.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    GgufBytes bytes;
    bytes.header(1, 0).tensor("w", {2}, kF32, 0).pad().raw(&nan, 4).zeros(4);
    const std::string path = write("nan.gguf", bytes.bytes);
    const GgufFile f(path);
    QVERIFY(std::isnan(f.tensor("w").data()[0]));
    try {
        f.tensor("w", SafetensorsFile::NonFinite::Refuse);
        QFAIL("a NaN weight was accepted");
    } catch (const Error &e) {
        QVERIFY2(
            QString(e.what()).contains("tensor 'w': holds 1 value that is not a finite number, the first element 0"),
            e.what());
    }
}

void TestGguf::refusesBadMetadata()
{
    expectRefusal(GgufBytes().header(0, 2).stringKey("k", "a").stringKey("k", "b").bytes,
        "metadata key 'k': appears twice", "a duplicate key");
    expectRefusal(GgufBytes().header(0, 1).str("k").u32(8).u64(1000).bytes, "metadata key 'k': needs 1000 bytes",
        "a string past the end");
    expectRefusal(GgufBytes().header(0, 1).str("k").u32(9).u32(4).u64(uint64_t(1) << 60).bytes,
        "metadata key 'k''s length: a count of 1152921504606846976", "an array longer than the file");
    expectRefusal(GgufBytes().header(0, 1).str("k").u32(9).u32(9).u64(1).zeros(16).bytes,
        "metadata key 'k': an array of arrays", "nested arrays");
    expectRefusal(GgufBytes().header(0, 1).str("k").u32(13).zeros(8).bytes,
        "metadata key 'k': value type 13, which GGUF does not define", "an unknown value type");
    expectRefusal(GgufBytes().header(0, 1).str("k").u32(7).raw("\x02", 1).bytes, "metadata key 'k': a bool holding 2",
        "a bool of 2");
    expectRefusal(GgufBytes().header(0, 1).u32Key("general.alignment", 24).bytes,
        "metadata key 'general.alignment': must be a power of two up to 2^30, not a uint32", "an alignment of 24");
    expectRefusal(GgufBytes().header(0, uint64_t(1) << 50).bytes, "header (metadata count): a count of",
        "a key count beyond the file");
    expectRefusal(GgufBytes().header(0, 1).u64(uint64_t(1) << 20).zeros(64).bytes,
        "metadata entry 0's key: a string of 1048576 bytes, more than the 65535 allowed", "a long key");
}

// Alignment 64 from general.alignment, a tensor per row type: the data section starts where the key says.
void TestGguf::readsAFileOfTensorsOfOneRow()
{
    GgufBytes bytes;
    bytes.header(2, 1).u32Key("general.alignment", 64).tensor("a", {3}, kF32, 0).tensor("b", {2, 2}, kF32, 64).pad(64);
    const float a[3] = {1, 2, 3}, b[4] = {-1, -2, -3, -4};
    bytes.raw(a, 12).zeros(52).raw(b, 16);
    const GgufFile f(write("aligned.gguf", bytes.bytes));
    QCOMPARE(f.alignment(), uint64_t(64));
    const Tensor ta = f.tensor("a"), tb = f.tensor("b");
    QCOMPARE(ta.shape(), (Shape {3}));
    QCOMPARE(tb.shape(), (Shape {2, 2}));
    QCOMPARE(ta.data()[2], 3.0f);
    QCOMPARE(tb.data()[3], -4.0f);
}

void TestGguf::keepsAMatrixPacked_data()
{
    QTest::addColumn<int>("type");
    QTest::newRow("F16") << int(GgmlType::F16);
    QTest::newRow("Q8_0") << int(GgmlType::Q8_0);
    QTest::newRow("Q4_K") << int(GgmlType::Q4_K);
}

// A matrix of 301 rows (no tile size divides it) kept in a GGUF encoding: its products, decoded a tile at a time,
// equal the products of its decoded values; its rows reorder and split without decoding; a tensor made of it reads its
// decoded values and gets values of its own when written.
void TestGguf::keepsAMatrixPacked()
{
    QFETCH(int, type);
    const GgmlType ggml = GgmlType(type);
    const int64_t O = 301, I = 256;
    std::mt19937 random(7);
    std::normal_distribution<float> normal;
    std::vector<float> values(size_t(O * I));
    for (float &v : values)
        v = normal(random);
    const std::string encoded = quantizeGgml(ggml, values.data(), O * I);
    const auto rows = std::make_shared<const PackedRows>(
        O, I, encoded.size() / size_t(O), ggmlTypeInfo(ggml).name,
        [ggml](const unsigned char *e, int64_t n, float *out) { dequantizeGgml(ggml, e, n, out); },
        std::vector<unsigned char>(encoded.begin(), encoded.end()),
        [ggml](const unsigned char *e, int64_t count, int64_t columns, const float *x, float *out, bool accumulate) {
            return dotGgmlRows(ggml, e, count, columns, x, out, accumulate);
        });
    std::vector<float> decoded(values.size());
    dequantizeGgml(ggml, reinterpret_cast<const unsigned char *>(encoded.data()), O * I, decoded.data());
    QVERIFY(std::equal(decoded.begin(), decoded.end(), rows->decoded().begin()));
    QCOMPARE(rows->bytes(), encoded.size());

    for (const int64_t T : {int64_t(1), int64_t(3), int64_t(70)}) {
        Tensor x({T, I});
        for (float &v : x.values())
            v = normal(random);
        for (const bool accumulate : {false, true}) {
            Tensor out({T, O}, 1.0f);
            packedWeightProduct(out.matrix(), std::as_const(x).matrix(), *rows, accumulate);
            for (int64_t t = 0; t < T; ++t)
                for (int64_t o = 0; o < O; ++o) {
                    double expected = accumulate ? 1.0 : 0.0;
                    for (int64_t i = 0; i < I; ++i)
                        expected += double(x.data()[t * I + i]) * double(decoded[size_t(o * I + i)]);
                    const double got = out.data()[t * O + o];
                    if (!(std::fabs(got - expected) <= 1e-4 * (1.0 + std::fabs(expected))))
                        QFAIL(qPrintable(QString("T %1, row %2, column %3: %4 against %5")
                                             .arg(T)
                                             .arg(t)
                                             .arg(o)
                                             .arg(got)
                                             .arg(expected)));
                }
        }
    }

    std::vector<int64_t> reversed(static_cast<size_t>(O));
    for (int64_t r = 0; r < O; ++r)
        reversed[size_t(r)] = O - 1 - r;
    const auto backwards = rows->reordered(reversed);
    const auto middle = rows->rowRange(100, 50);
    std::vector<float> row(static_cast<size_t>(I));
    backwards->decodeRows(0, 1, row.data());
    QVERIFY(std::equal(row.begin(), row.end(), decoded.begin() + (O - 1) * I));
    middle->decodeRows(49, 1, row.data());
    QVERIFY(std::equal(row.begin(), row.end(), decoded.begin() + 149 * I));
    QVERIFY_THROWS_EXCEPTION(Error, middle->decodeRows(49, 2, row.data()));

    const Tensor packed = Tensor::packed(rows);
    QCOMPARE(packed.shape(), (Shape {O, I}));
    QCOMPARE(packed.numel(), O * I);
    QCOMPARE(packed.storedBytes(), encoded.size());
    QVERIFY(packed.packing() != nullptr);
    QCOMPARE(packed.data()[5], decoded[5]);
    Tensor written = packed;
    written.data()[5] = 123.0f;
    QVERIFY(written.packing() == nullptr);
    QCOMPARE(written.storedBytes(), size_t(O * I) * sizeof(float));
    QCOMPARE(written.data()[6], decoded[6]);
    QVERIFY(packed.packing() != nullptr);
    QCOMPARE(packed.data()[5], decoded[5]);
}

// GgufFile::packedTensor: the file's blocks copied, [rows, columns] with the outer dimensions in the rows, and a value
// that is not a finite number refused by its row.
void TestGguf::readsATensorPacked()
{
    std::vector<uint16_t> halves(2 * 3 * 32);
    for (size_t i = 0; i < halves.size(); ++i)
        halves[i] = floatToHalf(float(i) / 8.0f - 10.0f);
    GgufBytes bytes;
    bytes.header(2, 0).tensor("m", {32, 3, 2}, 1, 0).tensor("bad", {32, 3}, 1, 384).pad();
    bytes.raw(halves.data(), 384);
    std::vector<uint16_t> bad(halves.begin(), halves.begin() + 96);
    bad[32 + 7] = 0x7E00; // NaN in row 1
    bytes.raw(bad.data(), 192);
    const GgufFile f(write("packed.gguf", bytes.bytes));
    const Tensor m = f.packedTensor("m");
    QCOMPARE(m.shape(), (Shape {6, 32}));
    QCOMPARE(m.packing()->encoding(), std::string("F16"));
    const Tensor plain = f.tensor("m");
    QVERIFY(std::equal(plain.data(), plain.data() + plain.numel(), m.data()));
    try {
        f.packedTensor("bad");
        QFAIL("a NaN weight was accepted");
    } catch (const Error &e) {
        QVERIFY2(QString(e.what()).contains("tensor 'bad': row 1 holds 1 value that is not a finite number, the first "
                                            "element 7"),
            e.what());
    }
}

// dotGgmlRows, a vector times rows decoded a little at a time, for every type of the fixture: the types with a kernel
// give the sum of the products of the decoded values (to float32's rounding of a sum of 512, or 96 with an odd
// 32-element block), added to out when accumulating; the others compute nothing and say so.
void TestGguf::multipliesAVectorByPackedRows()
{
    const GgufFile file(dataPath("gguf/types.gguf").toStdString());
    std::mt19937 random(3);
    std::normal_distribution<float> normal;
    std::set<std::string> multiplied;
    const auto check
        = [&](GgmlType type, const unsigned char *rows, int64_t count, int64_t columns, const std::string &what) {
              std::vector<float> decoded(static_cast<size_t>(count * columns)), x(static_cast<size_t>(columns));
              dequantizeGgml(type, rows, count * columns, decoded.data());
              for (float &v : x)
                  v = normal(random);
              for (const bool accumulate : {false, true}) {
                  std::vector<float> out(size_t(count), 2.0f);
                  if (!dotGgmlRows(type, rows, count, columns, x.data(), out.data(), accumulate)) {
                      QVERIFY2(std::all_of(out.begin(), out.end(), [](float v) { return v == 2.0f; }), what.c_str());
                      return;
                  }
                  multiplied.insert(ggmlTypeInfo(type).name);
                  for (int64_t r = 0; r < count; ++r) {
                      double expected = accumulate ? 2.0 : 0.0, magnitude = 2.0;
                      for (int64_t j = 0; j < columns; ++j) {
                          const double p = double(x[size_t(j)]) * double(decoded[size_t(r * columns + j)]);
                          expected += p;
                          magnitude += std::fabs(p);
                      }
                      QVERIFY2(std::fabs(out[size_t(r)] - expected) <= 1e-6 * magnitude,
                          qPrintable(QString("%1, row %2: %3 against %4")
                                         .arg(QString::fromStdString(what))
                                         .arg(r)
                                         .arg(double(out[size_t(r)]), 0, 'g', 9)
                                         .arg(expected, 0, 'g', 9)));
                  }
              }
          };
    for (const GgufFile::Entry &e : file.entries()) {
        Tensor t;
        try {
            t = file.packedTensor(e.name);
        } catch (const Error &) { // random blocks with values that are not finite (MXFP4's; the set below has the rest)
            continue;
        }
        if (t.packing() == nullptr) // F32, kept as floats
            continue;
        const PackedRows &rows = *t.packing();
        check(e.type, rows.row(0), rows.rows(), rows.columns(), e.name);
    }
    QCOMPARE(multiplied,
        (std::set<std::string> {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
            "Q6_K", "IQ4_NL", "IQ4_XS", "MXFP4"}));
    std::vector<float> values(5 * 96);
    for (float &v : values)
        v = normal(random);
    const std::string odd = quantizeGgml(GgmlType::Q8_0, values.data(), int64_t(values.size()));
    check(GgmlType::Q8_0, reinterpret_cast<const unsigned char *>(odd.data()), 5, 96, "Q8_0, three blocks a row");
}

// What the Quantization view shows of a block (ggmlBlockScales): every decoded weight of every block of every
// quantized type in types.gguf, gguf-py's quantized values and random blocks alike, lies on one of the levels its
// sub-block's scale and minimum give (scale · q − min, or scale · v of the type's table).
void TestGguf::placesEveryWeightOnItsBlocksLevels()
{
    const GgufFile file(dataPath("gguf/types.gguf").toStdString());
    std::set<std::string> shown;
    for (const GgufFile::Entry &e : file.entries()) {
        const GgmlTypeInfo &info = ggmlTypeInfo(e.type);
        if (info.blockElements == 1)
            continue;
        const unsigned char *blocks = file.data(e);
        std::vector<float> w(static_cast<size_t>(info.blockElements));
        for (int64_t b = 0; b < Tensor::count(e.shape) / info.blockElements; ++b) {
            const unsigned char *block = blocks + b * info.blockBytes;
            const GgmlBlockScales s = ggmlBlockScales(e.type, block);
            QVERIFY2(!s.formula.empty() && s.subBlock > 0, e.name.c_str());
            QCOMPARE(int64_t(s.scales.size()), info.blockElements / s.subBlock);
            QVERIFY(s.mins.empty() || s.mins.size() == s.scales.size());
            const std::vector<float> levels = s.levelMultipliers();
            QVERIFY2(!levels.empty(), e.name.c_str());
            dequantizeGgml(e.type, block, info.blockElements, w.data());
            for (int64_t i = 0; i < info.blockElements; ++i) {
                const double scale = s.scales[size_t(i / s.subBlock)],
                             min = s.mins.empty() ? 0.0 : s.mins[size_t(i / s.subBlock)];
                if (!std::isfinite(w[size_t(i)]) || !std::isfinite(scale) || !std::isfinite(min))
                    continue; // a random block's scale that is not a number
                double nearest = INFINITY, largest = 0;
                for (const float v : levels) {
                    nearest = std::min(nearest, std::fabs(double(w[size_t(i)]) - (scale * v - min)));
                    largest = std::max(largest, std::fabs(double(v)));
                }
                if (nearest > 1e-6 * (std::fabs(scale) * largest + std::fabs(min)))
                    QFAIL(qPrintable(QString("%1, block %2, weight %3: %4 is on no level of scale %5, minimum %6")
                                         .arg(QString::fromStdString(e.name))
                                         .arg(b)
                                         .arg(i)
                                         .arg(double(w[size_t(i)]), 0, 'g', 9)
                                         .arg(scale, 0, 'g', 9)
                                         .arg(min, 0, 'g', 9)));
            }
        }
        shown.insert(info.name);
    }
    QCOMPARE(shown,
        (std::set<std::string> {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
            "IQ4_NL", "IQ4_XS", "MXFP4"}));
}

QTEST_GUILESS_MAIN(TestGguf)
#include "tst_gguf.moc"
