// Tokenizer files that make the work or the output grow without bound, and degenerate ones (issue 66, items 5, 6, 7,
// 13 and 16): each is refused at once with a message naming the file and the component, or finishes in time linear
// in its input. Every input is built here; the Qwen2.5 fixture is the tests' cut of the real file.
#include "analysis/tokenizercomparison.h"
#include "clitesting.h"
#include "errortesting.h"
#include "testbundle.h"
#include "tokenize/huggingfacetokenizer.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace atlas;
using atlas::testing::errorFrom;
using Json = nlohmann::json;

namespace {

// A byte-level-free BPE over a few letters, with its unknown token.
Json letters()
{
    return {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"aa", 2}, {"<unk>", 3}}}, {"merges", Json::array({"a a"})},
        {"unk_token", "<unk>"}};
}

Json replace(const std::string &from, const std::string &to)
{
    return {{"type", "Replace"}, {"pattern", {{"String", from}}}, {"content", to}};
}

} // namespace

class TestTokenizerBounds : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_files = 0;

    // tokenizer.json in a directory of its own; its path.
    std::string write(const Json &json)
    {
        const QString dir = m_tmp.filePath(QString::number(++m_files));
        QDir().mkpath(dir);
        const std::string path = (dir + "/tokenizer.json").toStdString();
        std::ofstream(path) << json.dump();
        return path;
    }

    std::string withNormalizer(const Json &normalizer)
    {
        return write({{"model", letters()}, {"normalizer", normalizer}});
    }

    static void expectRefusal(const QString &message, const std::string &path, const QStringList &words)
    {
        QVERIFY2(message.startsWith(QString::fromStdString(path)), qPrintable(message));
        for (const QString &word : words)
            QVERIFY2(message.contains(word), qPrintable(word + " not in: " + message));
    }

private slots:
    // Issue 66 #5: "a" -> 10,000 "b"s over 10 KB made 100 M tokens (3.1 GB, 24 s); thirty chained "a" -> "aa" reached
    // 2^30 characters. Both are refused at once, naming the file and the normalizer.
    void normalizationIsBounded()
    {
        const std::string wide = withNormalizer(replace("a", std::string(10000, 'b')));
        QString message = errorFrom([&] { HuggingFaceTokenizer::fromFile(wide)->encode(std::string(10000, 'a')); });
        expectRefusal(message, wide, {"normalizer", "Replace", "161024 bytes"});

        const std::string chain
            = withNormalizer({{"type", "Sequence"}, {"normalizers", std::vector<Json>(30, replace("a", "aa"))}});
        message = errorFrom([&] { HuggingFaceTokenizer::fromFile(chain)->encode("a"); });
        expectRefusal(message, chain, {"normalizer.normalizers[10]", "Replace", "1040 bytes"});

        // Real growth passes: Llama's space -> ▁ triples a run of spaces, NFKC of U+FDFA gives 33 bytes for 3.
        const std::string llama = withNormalizer(replace(" ", "\xE2\x96\x81"));
        QCOMPARE(HuggingFaceTokenizer::fromFile(llama)->encode(std::string(100000, ' ')).size(), size_t(100000));
        const std::string nfkc = withNormalizer({{"type", "NFKC"}});
        QVERIFY(!HuggingFaceTokenizer::fromFile(nfkc)->encode(std::string(1000, 'a') + "\xEF\xB7\xBA").empty());
    }

    // The same bound holds for pre-tokenizers (each byte-level pass doubles a non-ASCII text) and decoders.
    void preTokenizersAndDecodersAreBounded()
    {
        const Json byteLevel = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}};
        const std::string path = write({{"model", letters()},
            {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", std::vector<Json>(6, byteLevel)}}}});
        std::string accents; // each pass doubles: 2,000 bytes, then 4,000, … 64,000 past 33,024 at the fifth
        for (int i = 0; i < 1000; ++i)
            accents += "\xC3\xA9";
        const QString message = errorFrom([&] { HuggingFaceTokenizer::fromFile(path)->encode(accents); });
        expectRefusal(message, path, {"pre_tokenizer.pretokenizers[4]", "ByteLevel", "pre-tokenizer"});

        const std::string decoder = write({{"model", letters()},
            {"decoder", {{"type", "Sequence"}, {"decoders", std::vector<Json>(30, replace("a", "aa"))}}}});
        const QString decoded = errorFrom([&] { HuggingFaceTokenizer::fromFile(decoder)->decode({0}); });
        expectRefusal(decoded, decoder, {"decoder.decoders[10]", "Replace", "decoder"});
    }

    // Issue 66 #6: a Unigram piece of 100,000 "a"s made encoding quadratic (12 s for 50,000 characters, 263 s for
    // 200,000); the lattice is now walked once.
    void longPiecesAreLinear()
    {
        const std::string path = write({{"model",
            {{"type", "Unigram"}, {"unk_id", 0},
                {"vocab",
                    Json::array({Json::array({"<unk>", 0.0}), Json::array({"a", -1.0}),
                        Json::array({std::string(100000, 'a'), -2.0}), Json::array({"b", -1.0})})}}}});
        const auto tokenizer = HuggingFaceTokenizer::fromFile(path);
        QCOMPARE(tokenizer->encode(std::string(200000, 'a')), (std::vector<int> {2, 2}));
        QCOMPARE(tokenizer->encode(std::string(50000, 'a') + "b").size(), size_t(50001));
        QCOMPARE(tokenizer->encode("ab\xC3\xA9" + std::string(99999, 'a') + "a"), (std::vector<int> {1, 3, 0, 2}));

        // WordPiece tried every end of a word, longest first: a word of 200,000 characters under a large
        // max_input_chars_per_word cost its length cubed. No candidate is longer than the longest token now.
        const std::string wordPiece = write({{"model",
            {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"max_input_chars_per_word", 1 << 30},
                {"vocab", {{"[UNK]", 0}, {"a", 1}, {"##a", 2}}}}}});
        const std::vector<int> ids = HuggingFaceTokenizer::fromFile(wordPiece)->encode(std::string(200000, 'a'));
        QCOMPARE(ids.size(), size_t(200000));
        QCOMPARE(ids.front() * 10 + ids.back(), 12);

        // Added tokens were looked for by a walk from each byte: the same quadratic time with a long one.
        const std::string addedPath = write({{"model", letters()},
            {"added_tokens", {{{"id", 4}, {"content", std::string(100000, 'a')}, {"normalized", false}}}}});
        const auto withAdded = HuggingFaceTokenizer::fromFile(addedPath);
        QCOMPARE(withAdded->encode(std::string(99999, 'a')).size(), size_t(50000)); // "aa"s and one "a"
        QCOMPARE(withAdded->encode("b" + std::string(100001, 'a')), (std::vector<int> {1, 4, 0}));
    }

    // Issue 66 #6: Qwen2.5's split regex on a 5 MB run of spaces hit PCRE2's match limit ("match limit exceeded",
    // naming no file). It splits now; a pattern that backtracks without end is still refused, naming the file and
    // the pattern.
    void splitRegexesRunOnLongRuns()
    {
        const std::string qwen = std::string(ATLAS_TEST_DATA) + "/tokenizers/qwen2_5/tokenizer.json";
        const std::string spaces(5 << 20, ' ');
        const std::vector<int> ids = HuggingFaceTokenizer::fromFile(qwen)->encode(spaces);
        QVERIFY(!ids.empty());
        QCOMPARE(HuggingFaceTokenizer::fromFile(qwen)->decode(ids), spaces);

        const std::string hostile = write({{"model", letters()},
            {"pre_tokenizer",
                {{"type", "Split"}, {"pattern", {{"Regex", "(a|aa)+$"}}}, {"behavior", "Isolated"},
                    {"invert", false}}}});
        const QString message
            = errorFrom([&] { HuggingFaceTokenizer::fromFile(hostile)->encode(std::string(60, 'a').append("b")); });
        expectRefusal(message, hostile, {"pre_tokenizer.pattern.Regex", "(a|aa)+$", "match limit"});
    }

    // PCRE2's limits count backtracking, not the characters a repeat reads: a lookahead that reads to the end of the
    // text at every position took time growing with the square of the text (8 s for 100 KB, about 70 s for these
    // 300 KB), within every limit, in one search or across matches. Matching a text is now bounded in time too
    // (0.05 s and 2 µs a byte: 0.65 s here), and the refusal names the file, the component and the pattern.
    void regexWorkGrowingFasterThanTheTextIsStopped()
    {
        for (const std::string pattern : {"(?=.*c)", "a(?=[^b]*c)|a"}) {
            const std::string hostile = write({{"model", letters()},
                {"pre_tokenizer",
                    {{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"},
                        {"invert", false}}}});
            const QString message
                = errorFrom([&] { HuggingFaceTokenizer::fromFile(hostile)->encode(std::string(300000, 'a')); });
            expectRefusal(message, hostile,
                {"pre_tokenizer.pattern.Regex", QString::fromStdString(pattern), "300000 bytes took more than 0.65 s",
                    "grows faster"});
        }

        // The bound's callout goes after the option verbs PCRE2 reads only at a pattern's start.
        const std::string verbs = write({{"model", letters()},
            {"pre_tokenizer",
                {{"type", "Split"}, {"pattern", {{"Regex", "(*UTF)(*LIMIT_MATCH=100000)a"}}}, {"behavior", "Isolated"},
                    {"invert", false}}}});
        QCOMPARE(HuggingFaceTokenizer::fromFile(verbs)->encode("aaab"), (std::vector<int> {0, 0, 0, 1}));
        // A pattern PCRE2 refuses is reported at its offset in the file, not in the pattern with the callout.
        const std::string unclosed = write({{"model", letters()},
            {"pre_tokenizer",
                {{"type", "Split"}, {"pattern", {{"Regex", "(*UTF)ab(c"}}}, {"behavior", "Isolated"},
                    {"invert", false}}}});
        expectRefusal(errorFrom([&] { HuggingFaceTokenizer::fromFile(unclosed)->encode("a"); }), unclosed,
            {"'(*UTF)ab(c'", "missing closing parenthesis at offset 10"});
    }

    // Issue 66 #7: a vocab.txt of 10 million lines took 13 s and 4.8 GB. Past 2^21 lines it is refused before any
    // is read; below, its lines no longer pass through a JSON object.
    void vocabularySizeIsBounded()
    {
        const QString dir = m_tmp.filePath("vocab");
        QDir().mkpath(dir);
        const std::string path = (dir + "/vocab.txt").toStdString();
        {
            std::ofstream out(path);
            for (int i = 0; i <= (1 << 21); ++i)
                out << "a\n";
        }
        const QString message = errorFrom([&] { HuggingFaceTokenizer::fromWordPieceVocab(path, true); });
        expectRefusal(message, path, {"2097153 tokens", "2097152"});

        {
            std::ofstream out(path);
            out << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n##s\nhello\n";
        }
        // GPT-2's vocab.json: its keys are counted as they are parsed, before the vocabulary is built.
        const std::string vocabJson = (dir + "/vocab.json").toStdString();
        {
            std::ofstream out(vocabJson);
            out << "{";
            for (int i = 0; i <= (1 << 21); ++i)
                out << "\"a\":0,";
            out << "\"b\":1}";
        }
        expectRefusal(
            errorFrom([&] { HuggingFaceTokenizer::fromGpt2Files(vocabJson, path); }), vocabJson, {"2097153 tokens"});

        const auto bert = HuggingFaceTokenizer::fromWordPieceVocab(path, true);
        QCOMPARE(bert->encode("Hellos"), (std::vector<int> {5, 6})); // the repeated line keeps its first id
        QCOMPARE(bert->encodeWithSpecialTokens("x"), (std::vector<int> {2, 1, 3}));
    }

    // Issue 66 #16: degenerate files are refused at load, naming the file.
    void degenerateFilesAreRefused()
    {
        const std::string empty
            = write({{"model", {{"type", "BPE"}, {"vocab", Json::object()}, {"merges", Json::array()}}}});
        expectRefusal(errorFrom([&] { HuggingFaceTokenizer::fromFile(empty); }), empty, {"model.vocab", "empty"});

        const std::string taken
            = write({{"model", letters()}, {"added_tokens", {{{"id", 1}, {"content", "<x>"}, {"special", true}}}}});
        expectRefusal(errorFrom([&] { HuggingFaceTokenizer::fromFile(taken); }), taken,
            {"added_tokens[0]", "\"<x>\"", "id 1", "\"b\""});
        // The same id for the same token is how files list their special tokens.
        const std::string same
            = write({{"model", letters()}, {"added_tokens", {{{"id", 3}, {"content", "<unk>"}, {"special", true}}}}});
        QCOMPARE(HuggingFaceTokenizer::fromFile(same)->encode("ab<unk>"), (std::vector<int> {0, 1, 3}));

        for (const bool given : {true, false}) { // "unk_id": null, and no unk_id
            Json model = {{"type", "Unigram"}, {"vocab", Json::array({Json::array({"a", -1.0})})}};
            if (given)
                model["unk_id"] = nullptr;
            const std::string path = write({{"model", model}});
            const auto tokenizer = HuggingFaceTokenizer::fromFile(path);
            QCOMPARE(tokenizer->encode("aa"), (std::vector<int> {0, 0}));
            expectRefusal(errorFrom([&] { tokenizer->encode("ab"); }), path, {"model.unk_id", "\"b\"", "<unk>"});
        }
    }

    // Issue 66 #13: a text the compared tokenizer fails on is an error of the Tokenizer view (render and lesson check
    // exit non-zero), not its picture.
    void aFailedSplitIsAnError()
    {
        const std::string path = withNormalizer(replace("a", std::string(10000, 'b')));
        const auto tokenizer = HuggingFaceTokenizer::fromFile(path);
        expectRefusal(errorFrom([&] { splitText(*tokenizer, "hostile", std::string(1000, 'a')); }), path,
            {"normalizer", "Replace"});
        QCOMPARE(splitText(*tokenizer, "hostile", "b").ids, (std::vector<int> {1}));
    }

    // Issue 66 #13 and #14: render, lesson render and lesson check exited 0 on a step whose compared tokenizer fails
    // on the text (the view drew the message as its picture); the check passed a step whose render ran out of memory.
    void commandsFailOnAFailedSplit_data()
    {
        QTest::addColumn<QByteArray>("tokenizer");
        QTest::addColumn<QString>("reason");
        QTest::newRow("Replace past the bound") << QByteArray::fromStdString(
            Json({{"model", letters()}, {"normalizer", replace("a", std::string(10000, 'b'))}}).dump())
                                                << "Replace normalizer";
        QTest::newRow("Unigram without unk_id") << QByteArray::fromStdString(Json(
            {{"model", {{"type", "Unigram"}, {"unk_id", nullptr}, {"vocab", Json::array({Json::array({"b", -1.0})})}}}})
                                                                                 .dump())
                                                << "model.unk_id";
    }

    void commandsFailOnAFailedSplit()
    {
        QFETCH(QByteArray, tokenizer);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        QDir().mkpath(dir.filePath("other"));
        QFile file(dir.filePath("other/tokenizer.json"));
        QVERIFY(file.open(QIODevice::WriteOnly) && file.write(tokenizer) == tokenizer.size());
        file.close();
        const QByteArray spec = QByteArray::fromStdString(Json(
            {{"view", "tokenizer"}, {"model", "tiny-bytes"}, {"text", "aaaa"},
                {"compare_tokenizer",
                    dir.filePath("other").toStdString()}}).dump());
        testing::CliResult r = testing::renderSpec(dir.path(), spec, "out.png");
        QVERIFY2(r.code == 1 && r.err.contains(file.fileName()) && r.err.contains(reason), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath("out.png")));

        const QString lesson = dir.filePath("bad.md");
        QFile md(lesson);
        QVERIFY(md.open(QIODevice::WriteOnly));
        md.write(
            "---\ntitle: Bad\nlecture: none\nminutes: 1\nmodels: tiny-bytes\n---\n\n## A step\n\nText.\n\n```view\n"
            + spec + "\n```\n");
        md.close();
        r = testing::runCli({"lesson", "check", lesson});
        QVERIFY2(r.code == 1 && r.err.contains("bad.md:8:") && r.err.contains(file.fileName()), qPrintable(r.err));
        r = testing::runCli({"lesson", "render", lesson, "--out", dir.filePath("steps")});
        QVERIFY2(r.code == 1 && r.err.contains(reason), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath("steps/step-01.png")));
    }
};

QTEST_GUILESS_MAIN(TestTokenizerBounds)
#include "tst_tokenizerbounds.moc"
