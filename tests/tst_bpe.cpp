// GPT-2's byte-level BPE: ids equal the reference encoder's (tests/data/gpt2_bpe, made by
// tests/tools/make_bpe_fixture.sh), decoding inverts encoding, pieces are readable, bad files are reported.
#include "model/model.h"
#include "model/modeltokenizer.h"
#include "testbundle.h"
#include "tokenize/gpt2words.h"
#include "tokenize/huggingfacetokenizer.h"
#include "tokenize/pipeline.h"
#include "util/error.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <random>
#include <thread>

using namespace atlas;

namespace {

const std::string kBpeData = ATLAS_TEST_DATA "/gpt2_bpe/";

std::string readText(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeText(const std::string &path, const std::string &text)
{
    std::ofstream(path, std::ios::binary) << text;
}

// GPT-2's spelling of raw bytes in vocab.json and merges.txt.
std::string spell(const std::string &bytes)
{
    std::string out;
    for (unsigned char b : bytes) {
        const char32_t c = pipeline::byteLevelChar(b);
        if (c < 0x80)
            out += static_cast<char>(c);
        else
            out += {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
    }
    return out;
}

// A small vocabulary: the 256 bytes (ids 0..255 in byte order) then `extra` tokens (ids 256, 257, …).
std::string smallVocab(const std::vector<std::string> &extra)
{
    nlohmann::json j = nlohmann::json::object();
    for (int b = 0; b < 256; ++b)
        j[spell(std::string(1, static_cast<char>(b)))] = b;
    for (size_t i = 0; i < extra.size(); ++i)
        j[spell(extra[i])] = 256 + int(i);
    return j.dump();
}

bool isValidUtf8(const std::string &s)
{
    return unicode::firstInvalidUtf8(s) == std::string::npos;
}

} // namespace

class TestBpe : public QObject
{
    Q_OBJECT

    std::unique_ptr<HuggingFaceTokenizer> m_gpt2;
    QTemporaryDir m_tmp;

    std::string tmpPath(const char *name) const { return m_tmp.filePath(name).toStdString(); }

    // Loads a vocabulary and merges written into the temporary directory.
    std::unique_ptr<HuggingFaceTokenizer> small(const std::vector<std::string> &extra, const std::string &merges)
    {
        writeText(tmpPath("vocab.json"), smallVocab(extra));
        writeText(tmpPath("merges.txt"), merges);
        return HuggingFaceTokenizer::fromGpt2Files(tmpPath("vocab.json"), tmpPath("merges.txt"));
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_gpt2 = HuggingFaceTokenizer::fromGpt2Files(kBpeData + "vocab.json", kBpeData + "merges.txt");
        QCOMPARE(m_gpt2->vocabSize(), 50257);
    }

    void matchesReference_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QList<int>>("ids");
        const auto cases = nlohmann::json::parse(readText(kBpeData + "cases.json"));
        QVERIFY(cases.size() >= 40);
        int i = 0;
        for (const auto &c : cases) {
            const std::string text = c["text"].get<std::string>();
            // OpenAI's encoder reads <|endoftext|> as text; Hugging Face's GPT2TokenizerFast, which this follows,
            // as its special token.
            const std::vector<int> ids
                = text == "<|endoftext|>" ? std::vector<int> {50256} : c["ids"].get<std::vector<int>>();
            QTest::addRow("%d: %s", i++, text.substr(0, 30).c_str())
                << QByteArray::fromStdString(text) << QList<int>(ids.begin(), ids.end());
        }
    }

    void matchesReference()
    {
        QFETCH(QByteArray, text);
        QFETCH(QList<int>, ids);
        const std::vector<int> got = m_gpt2->encode(text.toStdString());
        QCOMPARE(QList<int>(got.begin(), got.end()), ids);
        QCOMPARE(QByteArray::fromStdString(m_gpt2->decode(got)), text);
        // A second pass is answered from the word cache and must agree.
        QCOMPARE(m_gpt2->encode(text.toStdString()), got);
    }

    void splitsLikeGpt2sPattern()
    {
        using V = std::vector<std::string_view>;
        QCOMPARE(splitGpt2Words("Hello   world\n\n"), (V {"Hello", "  ", " world", "\n\n"}));
        QCOMPARE(splitGpt2Words("a\t\tb "), (V {"a", "\t", "\t", "b", " "}));
        QCOMPARE(splitGpt2Words("IT'S it's 'll"), (V {"IT", "'", "S", " it", "'s", " '", "ll"}));
        QCOMPARE(splitGpt2Words("x  123abc!?  "), (V {"x", " ", " 123", "abc", "!?", "  "}));
        QCOMPARE(splitGpt2Words("cafe\xCC\x81 \xE4\xB8\xAD"), (V {"cafe", "\xCC\x81", " \xE4\xB8\xAD"}));
        // Malformed UTF-8 bytes count as punctuation-like characters and are kept.
        QCOMPARE(splitGpt2Words("a\xFF\xFE b"), (V {"a", "\xFF\xFE", " b"}));
    }

    void roundTripsAnyText()
    {
        std::mt19937 rng(11);
        // Even texts from whole characters, odd ones from random bytes (mostly not UTF-8).
        const char *alphabet[] = {"a", "Z", " ", " ", "\n", "\t", "'", "s", "7", ".", "\xC3\xA9", "\xE4\xB8\xAD",
            "\xF0\x9F\x98\x80", "\xCC\x81"};
        int refused = 0;
        for (int n = 0; n < 300; ++n) {
            std::string text;
            const int length = int(rng() % 40);
            for (int i = 0; i < length; ++i)
                text
                    += (n % 2) ? std::string(1, static_cast<char>(rng() % 256)) : alphabet[rng() % std::size(alphabet)];
            if (!isValidUtf8(text)) { // Unicode text only, as Hugging Face's tokenizers
                QVERIFY_THROWS_EXCEPTION(Error, m_gpt2->encode(text));
                ++refused;
                continue;
            }
            QCOMPARE(m_gpt2->decode(m_gpt2->encode(text)), text);
        }
        QVERIFY(refused > 100 && refused <= 150);
        const std::string longWord(20000, 'q'); // one 20,000-byte word: the merge loop must not be quadratic
        QCOMPARE(m_gpt2->decode(m_gpt2->encode(longWord)), longWord);
    }

    void piecesAreReadable()
    {
        QCOMPARE(m_gpt2->piece(m_gpt2->idOf(spell(" the"))), std::string("␣the"));
        QCOMPARE(m_gpt2->piece(198), std::string("↵"));
        QCOMPARE(m_gpt2->piece(197), std::string("⇥"));
        QCOMPARE(m_gpt2->piece(220), std::string("␣"));
        QCOMPARE(m_gpt2->piece(201), std::string("<0x0D>"));
        QCOMPARE(m_gpt2->piece(50256), std::string("<|endoftext|>"));
        QCOMPARE(m_gpt2->piece(m_gpt2->idOf(spell("\xE4"))), std::string("<0xE4>")); // the first byte of 中 alone
        QCOMPARE(m_gpt2->piece(m_gpt2->idOf(spell(" caf\xC3\xA9"))), std::string("␣café"));
        QCOMPARE(m_gpt2->piece(-1), std::string("#-1"));
        QCOMPARE(m_gpt2->piece(50257), std::string("#50257"));
        for (int id = 0; id < m_gpt2->vocabSize(); ++id) {
            const std::string p = m_gpt2->piece(id);
            QVERIFY2(!p.empty() && isValidUtf8(p), qPrintable(QString::number(id)));
            for (unsigned char c : p)
                QVERIFY2(c >= 0x20 && c != 0x7F, qPrintable(QString::number(id)));
        }
        // Invisible characters and lone combining marks (ids 256.. in the small vocabulary).
        const auto t = small({"\xCC\x81", "\xE2\x80\x8D", "\xC2\xA0", "\xC2\x85"}, "");
        QCOMPARE(t->piece(256), std::string("◌\xCC\x81"));
        QCOMPARE(t->piece(257), std::string("<U+200D>"));
        QCOMPARE(t->piece(258), std::string("<U+00A0>"));
        QCOMPARE(t->piece(259), std::string("<0xC2><0x85>"));
    }

    void decodeRejectsUnknownIds()
    {
        QVERIFY_THROWS_EXCEPTION(Error, m_gpt2->decode({15496, 50257}));
        QVERIFY_THROWS_EXCEPTION(Error, m_gpt2->decode({-3}));
    }

    void mergesFollowHuggingFacesOrder()
    {
        // One merge at a time, the best-ranked pair first and the leftmost among equals, so a pair a merge has just
        // made can win at once: "aaaa" is aaa|a. OpenAI's encoder.py merges every occurrence of the best pair
        // before looking again and gives aa|aa; the real GPT-2 merges give the same ids either way on every
        // reference text (tests/data/gpt2_bpe and tests/data/tokenizers/gpt2).
        const auto t = small({"aa", "aaa"}, "#version: 0.2\r\naa a\r\na a\r\n");
        QCOMPARE(t->encode("aaaa"), (std::vector<int> {257, 'a'}));
        QCOMPARE(t->encode("aaa"), (std::vector<int> {257}));
    }

    void mergeResultMissingFromVocabIsRefused()
    {
        // As Hugging Face's BPE: every merge makes a token of the vocabulary.
        writeText(tmpPath("vocab.json"), smallVocab({"abc"}));
        writeText(tmpPath("merges.txt"), "a b\nab c\n");
        QVERIFY_THROWS_EXCEPTION(
            Error, HuggingFaceTokenizer::fromGpt2Files(tmpPath("vocab.json"), tmpPath("merges.txt")));
        try {
            HuggingFaceTokenizer::fromGpt2Files(tmpPath("vocab.json"), tmpPath("merges.txt"));
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("merges.txt: line 1: 'ab' is not a token of"), e.what());
        }
    }

    void malformedFilesNameTheFile_data()
    {
        QTest::addColumn<QByteArray>("vocab");
        QTest::addColumn<QByteArray>("merges");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("reason");
        const QByteArray good = QByteArray::fromStdString(smallVocab({"ab"}));
        QTest::newRow("not json") << QByteArray("{\"a\": 1,") << QByteArray() << "vocab.json"
                                  << "not valid JSON";
        QTest::newRow("array") << QByteArray("[1, 2]") << QByteArray() << "vocab.json"
                               << "JSON object";
        QTest::newRow("string id") << QByteArray("{\"a\": \"1\"}") << QByteArray() << "vocab.json"
                                   << "has id";
        QTest::newRow("negative id") << QByteArray("{\"a\": -1}") << QByteArray() << "vocab.json"
                                     << "has id";
        QTest::newRow("fractional id") << QByteArray("{\"a\": 1.5}") << QByteArray() << "vocab.json"
                                       << "has id";
        QTest::newRow("duplicate id") << QByteArray("{\"a\": 1, \"b\": 1}") << QByteArray() << "vocab.json"
                                      << "given to two tokens";
        QTest::newRow("missing byte") << QByteArray("{\"a\": 0}") << QByteArray() << "vocab.json"
                                      << "has no token";
        QTest::newRow("one part") << good << QByteArray("#version: 0.2\na b\nab\n") << "merges.txt"
                                  << "line 3";
        QTest::newRow("three parts") << good << QByteArray("a b c\n") << "merges.txt"
                                     << "two symbols";
        QTest::newRow("two spaces") << good << QByteArray("a  b\n") << "merges.txt"
                                    << "two symbols";
        QTest::newRow("unknown symbol") << good << QByteArray("a \xE2\x98\x83\n") << "merges.txt"
                                        << "U+2603 is not one of GPT-2's 256 byte symbols";
        QTest::newRow("raw tab") << good << QByteArray("a \tb\n") << "merges.txt"
                                 << "U+0009";
        QTest::newRow("bad utf-8") << good << QByteArray("\xFF b\n") << "merges.txt"
                                   << "not valid UTF-8";
    }

    void malformedFilesNameTheFile()
    {
        QFETCH(QByteArray, vocab);
        QFETCH(QByteArray, merges);
        QFETCH(QString, file);
        QFETCH(QString, reason);
        writeText(tmpPath("vocab.json"), vocab.toStdString());
        writeText(tmpPath("merges.txt"), merges.toStdString());
        try {
            HuggingFaceTokenizer::fromGpt2Files(tmpPath("vocab.json"), tmpPath("merges.txt"));
            QFAIL("no error");
        } catch (const Error &e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.contains(m_tmp.filePath(file)) && message.contains(reason), e.what());
        }
    }

    void missingFileIsAnError()
    {
        try {
            HuggingFaceTokenizer::fromGpt2Files(tmpPath("nowhere.json"), kBpeData + "merges.txt");
            QFAIL("no error");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("nowhere.json: cannot open"), e.what());
        }
    }

    void forModelPicksBpe()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        for (const char *f : {"config.json", "model.safetensors"})
            QVERIFY(QFile::copy(QString(ATLAS_TEST_DATA "/gpt2_tiny/") + f, dir.filePath(f)));
        const Model plain = Model::load(d);
        QCOMPARE(tokenizerForModel(plain)->kind(), std::string("ids"));

        for (const char *f : {"vocab.json", "merges.txt"})
            QVERIFY(QFile::copy(QString::fromStdString(kBpeData + f), dir.filePath(f)));
        const Model model = Model::load(d);
        const auto tokenizer = tokenizerForModel(model);
        QCOMPARE(tokenizer->kind(), std::string("BPE"));
        QCOMPARE(tokenizer->encode("Hello world"), (std::vector<int> {15496, 995}));
        QCOMPARE(tokenizer->piece(995), std::string("␣world"));

        Model bytes = model; // atlas_tokenizer: bytes wins over the files beside it
        bytes.config.tokenizer = "bytes";
        QCOMPARE(tokenizerForModel(bytes)->kind(), std::string("bytes"));
    }

    void encodesFromSeveralThreads()
    {
        const std::string text = readText(kBpeData + "cases.json");
        const std::vector<int> expected = m_gpt2->encode(text);
        writeText(tmpPath("vocab.json"), readText(kBpeData + "vocab.json")); // other files: a tokenizer of its own
        writeText(tmpPath("merges.txt"), readText(kBpeData + "merges.txt"));
        const auto fresh = HuggingFaceTokenizer::fromGpt2Files(tmpPath("vocab.json"), tmpPath("merges.txt"));
        std::vector<std::vector<int>> got(4);
        std::vector<std::thread> threads;
        for (auto &g : got)
            threads.emplace_back([&] { g = fresh->encode(text); });
        for (auto &t : threads)
            t.join();
        for (const auto &g : got)
            QCOMPARE(g, expected);
    }
};

QTEST_GUILESS_MAIN(TestBpe)
#include "tst_bpe.moc"
