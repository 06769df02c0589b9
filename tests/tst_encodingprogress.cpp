// The progress of a long text's encoding (tokenize/encodingprogress.h): GPT-2's and Mistral's tokenizers report as
// they go, from the first bytes to the whole text, never backwards (Mistral's, with no pre-tokenizer, from its
// merges); the ids are those of an encoding nobody listens
// to; a listener's false stops the encoding at once; special tokens split the text into parts that each fill their
// own span.
#include "testbundle.h"
#include "tokenize/encodingprogress.h"
#include "tokenize/specialtokenstokenizer.h"
#include "tokenize/tokenizer.h"

#include <QTest>

using namespace atlas;

namespace {

std::string longText(size_t bytes, const std::string &between = {})
{
    const std::string sentence = "It is a truth universally acknowledged, that a single man in possession of a good "
                                 "fortune, must be in want of a wife. Ça va? 3,141 apples;\n";
    std::string text;
    for (int i = 0; text.size() < bytes; ++i)
        text += sentence + (i % 7 == 6 ? between : std::string());
    return text;
}

struct Heard
{
    std::vector<std::pair<size_t, size_t>> reports;
    EncodingProgress::Listener listener(size_t stopPast = SIZE_MAX)
    {
        return [this, stopPast](size_t done, size_t total) {
            reports.emplace_back(done, total);
            return done <= stopPast;
        };
    }
};

} // namespace

class TestEncodingProgress : public QObject
{
    Q_OBJECT

private slots:
    void aTokenizerReportsFromStartToEndWithTheSameIds_data()
    {
        QTest::addColumn<QString>("directory");
        QTest::addColumn<QString>("added"); // an added token of the tokenizer, spliced into the text
        QTest::newRow("gpt2") << ATLAS_SOURCE_DIR "/resources/tokenizers/gpt2"
                              << "<|endoftext|>";
        // no pre-tokenizer: the text is one word, and its merges report
        QTest::newRow("mistral-7b") << ATLAS_SOURCE_DIR "/resources/tokenizers/mistral-7b"
                                    << "";
        QTest::newRow("mistral-7b, </s> between") << ATLAS_SOURCE_DIR "/resources/tokenizers/mistral-7b"
                                                  << "</s>";
    }
    void aTokenizerReportsFromStartToEndWithTheSameIds()
    {
        QFETCH(QString, directory);
        QFETCH(QString, added);
        const std::unique_ptr<Tokenizer> tokenizer = directoryTokenizer(directory.toStdString());
        QVERIFY(tokenizer);
        const std::string text = longText(200'000, added.toStdString());
        const std::vector<int> unheard = tokenizer->encodeWithSpecialTokens(text);
        Heard heard;
        std::vector<int> ids;
        {
            const EncodingProgress progress(text.size(), heard.listener());
            ids = tokenizer->encodeWithSpecialTokens(text);
        }
        QCOMPARE(ids, unheard);
        QVERIFY2(heard.reports.size() >= 20 && heard.reports.size() <= 1001,
            qPrintable(QString::number(heard.reports.size())));
        QVERIFY(heard.reports.front().first <= text.size() / 20);
        QCOMPARE(heard.reports.back(), std::make_pair(text.size(), text.size()));
        for (size_t i = 1; i < heard.reports.size(); ++i)
            QVERIFY(heard.reports[i].first > heard.reports[i - 1].first);
        // once closed, nobody hears the next encoding
        const size_t reports = heard.reports.size();
        QCOMPARE(tokenizer->encodeWithSpecialTokens(text), unheard);
        QCOMPARE(heard.reports.size(), reports);
    }

    // A listener that answers false stops the encoding where it is: nothing more is encoded or heard.
    void falseStopsTheEncoding()
    {
        const std::unique_ptr<Tokenizer> tokenizer = directoryTokenizer(ATLAS_SOURCE_DIR "/resources/tokenizers/gpt2");
        const std::string text = longText(100'000);
        Heard heard;
        const EncodingProgress progress(text.size(), heard.listener(text.size() / 3));
        QVERIFY_THROWS_EXCEPTION(EncodingCancelled, tokenizer->encode(text));
        QVERIFY(heard.reports.back().first > text.size() / 3);
        QVERIFY(heard.reports.back().first <= text.size() / 3 + text.size() / 500);
    }

    // A tokenizer that hands the text between special tokens to another reports each part inside its own span.
    void partsBetweenSpecialTokensFillTheirSpans()
    {
        auto inner = directoryTokenizer(ATLAS_SOURCE_DIR "/resources/tokenizers/gpt2");
        const SpecialTokensTokenizer tokenizer(std::move(inner), {{"<sep>", 50256}});
        const std::string first = longText(30'000), second = longText(90'000);
        const std::string text = first + "<sep>" + second;
        Heard heard;
        std::vector<int> ids;
        {
            const EncodingProgress progress(text.size(), heard.listener());
            ids = tokenizer.encode(text);
        }
        QCOMPARE(ids, tokenizer.encode(text));
        const auto inFirst = std::ranges::count_if(heard.reports, [&](auto r) { return r.first <= first.size(); });
        // reports fall where the bytes are: a quarter of them in the first quarter of the text
        QVERIFY2(inFirst >= 200 && inFirst <= 300, qPrintable(QString::number(inFirst)));
        QCOMPARE(heard.reports.back().first, text.size());
        for (size_t i = 1; i < heard.reports.size(); ++i)
            QVERIFY(heard.reports[i].first > heard.reports[i - 1].first);
    }
};

QTEST_GUILESS_MAIN(TestEncodingProgress)
#include "tst_encodingprogress.moc"
