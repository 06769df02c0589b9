#include "model/ggufmodel.h"
#include "model/model.h"
#include "model/modeltokenizer.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "tokenize/huggingfacetokenizer.h"
#include "tokenize/llamacppunigram.h"
#include "util/error.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

using namespace atlas;
using namespace atlas::testing;

// tests/data/gguf/vocab/NAME.gguf: llama.cpp's own vocabulary files cut to what its test texts need
// (make_gguf_vocab_fixtures.py), and NAME.cases.json the ids llama.cpp gives each text on them, checked there against
// the whole vocabulary's .out file (gguf_vocab_reference.mjs). llama.cpp has no 't5' vocabulary of its own:
// t5-nfkc.gguf is a SentencePiece Unigram trained here and written as its converter writes T5's, with NFKC's charsmap,
// and its cases (llama.cpp's texts and more) hold llama.cpp's ids and decoded text (make_gguf_t5_vocab.py).
class TestGgufTokenizers : public QObject
{
    Q_OBJECT

private slots:
    void encodesAsLlamaCpp_data();
    void encodesAsLlamaCpp();
    void aGgufModelHasItsTokenizer();
    void refusesATokenizerItDoesNotRead();
    void refusesABrokenCharsmap();
    void refusesACharsmapThatGrowsTextPastItsBound();
};

void TestGgufTokenizers::encodesAsLlamaCpp_data()
{
    QTest::addColumn<QString>("name");
    const QStringList files = QDir(dataPath("gguf/vocab")).entryList({"*.cases.json"});
    QCOMPARE(files.size(), 7);
    for (const QString &file : files)
        QTest::newRow(qPrintable(file.section('.', 0, 0))) << file.section('.', 0, 0);
}

void TestGgufTokenizers::encodesAsLlamaCpp()
{
    QFETCH(QString, name);
    const auto tokenizer = HuggingFaceTokenizer::fromGguf(dataPath("gguf/vocab/" + name + ".gguf").toStdString());
    QFile f(dataPath("gguf/vocab/" + name + ".cases.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonArray cases = QJsonDocument::fromJson(f.readAll()).array();
    QVERIFY(cases.size() >= 47); // llama.cpp's test texts, and the t5 vocabulary's own
    const bool unigram = tokenizer->kind() == "Unigram";
    for (const QJsonValue &c : cases) {
        const std::string text = c["text"].toString().toStdString();
        std::vector<int> expected;
        for (const QJsonValue &id : c["ids"].toArray())
            expected.push_back(id.toInt());
        const std::vector<int> got = tokenizer->encode(text);
        if (got != expected) {
            QString shown;
            for (int id : got)
                shown += QString::number(id) + " ";
            QFAIL(qPrintable(QString("%1: \"%2\": got %3").arg(name, QString::fromStdString(text), shown)));
        }
        if (unigram) { // NFKC and the squeezed spaces do not give the text back: llama.cpp's decoded text, where
                       // no control or unknown token is in it (llama.cpp leaves those out)
            if (std::none_of(got.begin(), got.end(), [&](int id) { return tokenizer->role(id) != TokenRole::Text; }))
                QCOMPARE(QString::fromStdString(tokenizer->decode(got)), c["decoded"].toString());
        } else if (tokenizer->kind() != "WordPiece") { // byte-level BPE gives the text back; BERT's lowercases it
            QCOMPARE(tokenizer->decode(got), text);
        }
    }
    if (tokenizer->kind() == "WordPiece") { // llama.cpp puts [CLS] before the text and [SEP] after it
        const std::vector<int> ids = tokenizer->encodeWithSpecialTokens("Hello world");
        QCOMPARE(ids.size(), size_t(4));
        QCOMPARE(tokenizer->tokenString(ids.front()), std::string("[CLS]"));
        QCOMPARE(tokenizer->tokenString(ids.back()), std::string("[SEP]"));
        QCOMPARE(tokenizer->decode({ids[1], ids[2]}), std::string("hello world"));
    }
    if (unigram) { // llama.cpp's 't5' adds </s> after the text and nothing before it
        const std::vector<int> ids = tokenizer->encodeWithSpecialTokens("the end");
        QCOMPARE(std::vector<int>(ids.begin(), ids.end() - 1), tokenizer->encode("the end"));
        QCOMPARE(tokenizer->tokenString(ids.back()), std::string("</s>"));
    }
}

// A model file's tokenizer is the one embedded in it: the tiny models' character vocabulary with its two merges.
void TestGgufTokenizers::aGgufModelHasItsTokenizer()
{
    Model model;
    model.directory = dataPath("gguf/models/qwen2_tiny-f32.gguf").toStdString();
    model.config.tokenizer = "gpt2";
    const auto tokenizer = tokenizerForModel(model);
    QVERIFY(tokenizer->canEncode());
    // letters and digits are ids 0 to 61, then "ab" and "cd", the two merges' tokens
    QCOMPARE(tokenizer->encode("abcd"), (std::vector<int> {62, 63}));
    QCOMPARE(tokenizer->encode("ba"), (std::vector<int> {1, 0}));
    QCOMPARE(tokenizer->decode({62, 63, 2}), std::string("abcdc"));
}

void TestGgufTokenizers::refusesATokenizerItDoesNotRead()
{
    // Each case is a vocabulary file with one name or value changed to another of the same length, so that every
    // offset stays; each refusal names the file and the key.
    const auto refused = [](const QString &vocabulary, const QByteArray &after, const QByteArray &from,
                             const QByteArray &to, const QString &expected) {
        QFile f(dataPath("gguf/vocab/" + vocabulary));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray bytes = f.readAll();
        const qsizetype at = bytes.indexOf(from, bytes.indexOf(after));
        QVERIFY(at > 0);
        bytes.replace(at, from.size(), to);
        QTemporaryDir dir;
        const QString path = dir.filePath("changed.gguf");
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(bytes);
        out.close();
        try {
            HuggingFaceTokenizer::fromGguf(path.toStdString());
            QFAIL(qPrintable("accepted: " + expected));
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).startsWith(path + ": metadata key '" + expected), e.what());
        }
    };
    refused("gpt-2.gguf", "tokenizer.ggml.pre", "gpt-2", "gpt-9",
        "tokenizer.ggml.pre': 'gpt-9' is a pre-tokenizer this program does not know (it knows default, llama3");
    refused("gpt-2.gguf", "tokenizer.ggml.model", "gpt2", "rwkv",
        "tokenizer.ggml.model': 'rwkv' tokenizers are not read by this version");
    refused("phi-3.gguf", "", "tokenizer.ggml.scores", "tokenizer.ggml.scorez", "tokenizer.ggml.scores': missing");
    // phi-3's BOS id (a uint32 after its key and its type) made one past its 698 tokens
    QByteArray outside("\x04\x00\x00\x00\xba\x02\x00\x00", 8);
    QFile phi(dataPath("gguf/vocab/phi-3.gguf"));
    QVERIFY(phi.open(QIODevice::ReadOnly));
    const QByteArray whole = phi.readAll();
    const qsizetype key = whole.indexOf("tokenizer.ggml.bos_token_id") + 27;
    refused("phi-3.gguf", "tokenizer.ggml.bos_token_id", whole.mid(key, 8), outside,
        "tokenizer.ggml.bos_token_id': 698 is outside the vocabulary of 698");
}

// t5-nfkc.gguf's precompiled charsmap changed in place (its header, its double array, its replacement strings): the
// file is refused when it is read, or the text when a change is reached, naming the file and the key; nothing reads
// outside the map.
void TestGgufTokenizers::refusesABrokenCharsmap()
{
    QFile f(dataPath("gguf/vocab/t5-nfkc.gguf"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray whole = f.readAll();
    const QByteArray key = "tokenizer.ggml.precompiled_charsmap";
    // the key, then the value's type (array), the elements' type (uint8) and their count (uint64)
    const qsizetype at = whole.indexOf(key) + key.size() + 4 + 4;
    QVERIFY(at > key.size());
    const qint64 bytes = qFromLittleEndian<qint64>(whole.constData() + at);
    const qsizetype map = at + 8;
    const quint32 arrayBytes = qFromLittleEndian<quint32>(whole.constData() + map);
    QVERIFY(arrayBytes > 0 && arrayBytes + 4 < bytes);
    QTemporaryDir dir;
    const auto refused = [&](const char *name, qsizetype from, qsizetype count, char fill, const QString &expected) {
        QByteArray changed = whole;
        changed.replace(from, count, QByteArray(count, fill));
        const QString path = dir.filePath(QString(name) + ".gguf");
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(changed);
        out.close();
        try {
            HuggingFaceTokenizer::fromGguf(path.toStdString())->encode("\xEF\xAC\x81ne"); // "ﬁne", which NFKC rewrites
            QFAIL(qPrintable(QString("accepted: ") + name));
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).startsWith(path + ": metadata key '" + key + "': " + expected), e.what());
        }
    };
    refused("header", map + 3, 1, '\x7f', "its header gives");
    refused("nodes", map + 4, arrayBytes, '\xff', "a node points to node");
    refused("unterminated", map + 4 + arrayBytes, bytes - 4 - arrayBytes, 'x', "the replacement at");
}

// A charsmap made by hand that rewrites 'a' as forty 'x's: one double-array node for 'a' (its byte, a leaf, BASE 1),
// whose value node (97 XOR 1) gives replacement 0. Text may grow 16-fold plus 1024 bytes: 20 'a's (800 bytes, under
// 1344) are normalized and tokenized; 100 (4000 bytes, past 2624) are refused, naming the file and the key.
void TestGgufTokenizers::refusesACharsmapThatGrowsTextPastItsBound()
{
    std::vector<uint32_t> nodes(98, 0);
    nodes[97] = uint32_t('a') | 1u << 8 | 1u << 10;
    nodes[96] = 1u << 31;
    const auto littleEndian = [](std::string &to, uint32_t v) {
        for (int shift = 0; shift < 32; shift += 8)
            to += char((v >> shift) & 0xFF);
    };
    std::string charsmap;
    littleEndian(charsmap, uint32_t(4 * nodes.size()));
    for (const uint32_t n : nodes)
        littleEndian(charsmap, n);
    charsmap += std::string(40, 'x') + '\0';
    LlamaCppUnigramVocabulary vocabulary;
    vocabulary.file = "grows.gguf";
    vocabulary.tokens = {"<pad>", "</s>", "<unk>", "x", "xx", "xxxx"};
    vocabulary.scores = {0, 0, 0, -3, -2, -1};
    vocabulary.types = {3, 3, 2, 1, 1, 1}; // control, control, unknown, normal
    vocabulary.charsmap = charsmap;
    const auto model = makeLlamaCppUnigram(std::move(vocabulary));
    std::vector<int> ids;
    model->tokenize(std::string(20, 'a'), ids);
    QCOMPARE(ids, std::vector<int>(200, 5)); // 800 'x's as "xxxx"
    try {
        ids.clear();
        model->tokenize(std::string(100, 'a'), ids);
        QFAIL("a text grown 40-fold was accepted");
    } catch (const Error &e) {
        QVERIFY2(QString(e.what()).startsWith("grows.gguf: metadata key 'tokenizer.ggml.precompiled_charsmap': its "
                                              "replacements grow a text of 100 bytes past 2624 bytes"),
            e.what());
    }
}

QTEST_GUILESS_MAIN(TestGgufTokenizers)
#include "tst_gguftokenizers.moc"
