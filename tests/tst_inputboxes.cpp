// What the app's input boxes read (engine/inputbuilder.h: text, or "#ids", "##" for a text that starts with '#'), and
// what each view keeps of its own settings while others are shown (view/viewsettings.h).
#include "engine/inputbuilder.h"
#include "experts/experts.h"
#include "model/model.h"
#include "model/modeltokenizer.h"
#include "patching/patching.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"
#include "util/text.h"
#include "view/viewsettings.h"

#include <QTest>

using namespace atlas;

class TestInputBoxes : public QObject
{
    Q_OBJECT

private slots:
    void boxesReadTextOrIds()
    {
        QCOMPARE(readBoxInput("#464,3290 318").tokens, (std::vector<int> {464, 3290, 318}));
        QVERIFY(readBoxInput("#464,3290").text.empty());
        QCOMPARE(readBoxInput("The cat").text, std::string("The cat"));
        QVERIFY(readBoxInput("The cat").tokens.empty());
        // A '#' that starts anything but ids is text; "##" writes a text that starts with one '#'.
        QCOMPARE(readBoxInput("#hashtag 2").text, std::string("#hashtag 2"));
        QCOMPARE(readBoxInput("##12").text, std::string("#12"));
        QVERIFY(readBoxInput("##12").tokens.empty());
        QVERIFY_THROWS_EXCEPTION(Error, readBoxInput("#12,,3"));
        QVERIFY_THROWS_EXCEPTION(Error, readBoxInput("#"));
        QVERIFY_THROWS_EXCEPTION(Error, readBoxInput("# ,"));
        // What the box shows reads back as the same input.
        for (const std::string text : {"The cat", "#12", "##x", "#hashtag", ""})
            QCOMPARE(readBoxInput(boxInputText(text, {})).text, text);
        QCOMPARE(boxInputText("ignored", {5, 7}), std::string("#5,7"));
        QCOMPARE(readBoxInput(boxInputText("", {5, 7})).tokens, (std::vector<int> {5, 7}));
    }

    // A model whose directory has no tokenizer reads ids; text gets the app's syntax in its message, not the
    // command line's.
    void aModelWithoutATokenizerAsksForIdsInTheBoxesSyntax()
    {
        const Model model = Model::load(ATLAS_TEST_DATA "/llama_tiny");
        const std::unique_ptr<Tokenizer> tokenizer = tokenizerForModel(model);
        QVERIFY(!tokenizer->canEncode());
        QVERIFY(tokenizer->noTextReason().find("no tokenizer.json") != std::string::npos);
        QCOMPARE(boxTokens(*tokenizer, readBoxInput("#3,1,4")), (std::vector<int> {3, 1, 4}));
        try {
            boxTokens(*tokenizer, readBoxInput("hello"));
            QFAIL("text was encoded without a tokenizer");
        } catch (const Error &e) {
            const QString message = e.what();
            QVERIFY2(message.contains("#0,1,2") && !message.contains("--tokens"), e.what());
        }
        // T5's Decoder box too: ids as given.
        QCOMPARE(boxDecoderTokens(*tokenizer, readBoxInput("#0,5"), 0), (std::vector<int> {0, 5}));
        QVERIFY_THROWS_EXCEPTION(Error, boxDecoderTokens(*tokenizer, readBoxInput("abc"), 0));
    }

    // The Logit lens's tracked token is not Patching's target: each view keeps its own, the shared keys follow.
    void eachViewKeepsItsOwnSettings()
    {
        ViewSpec lens;
        lens.view = "logit-lens";
        lens.target = "e";
        lens.layer = 1;
        ViewSpec asked = lens;
        asked.view = "patching";
        ViewSpec patching = withViewSettings(asked, lens, nullptr); // never shown: its defaults
        QCOMPARE(patching.target, std::string());
        QCOMPARE(patching.layer, 1); // shared
        patching.target = "x";
        patching.set(views::patching::kCorruptedText, "the dog");
        asked = patching;
        asked.view = "logit-lens";
        const ViewSpec back = withViewSettings(asked, patching, &lens);
        QCOMPARE(back.target, std::string("e"));
        QCOMPARE(
            back.get(views::patching::kCorruptedText), std::string("the dog")); // the lens does not read it: it stays
        // A key the caller sets as it switches views is the caller's.
        asked = lens;
        asked.view = "patching";
        asked.target = "#7";
        QCOMPARE(withViewSettings(asked, lens, &patching).target, std::string("#7"));
        asked.target = lens.target;
        QCOMPARE(withViewSettings(asked, lens, &patching).target, std::string("x"));
    }

    void anotherModelStartsWithoutTheLastOnesTokensAndExperts()
    {
        ViewSpec spec;
        spec.view = "experts";
        spec.set(views::experts::kCapacityFactor, 2.5);
        spec.set(views::patching::kCorruptedText, "the dog");
        spec.set(views::patching::kNoisePositions, {1, 2});
        spec.target = "e";
        spec.layer = 1;
        spec.text = "kept";
        resetModelSettings(spec);
        QCOMPARE(spec.get(views::experts::kCapacityFactor), 0.0);
        QVERIFY(spec.get(views::patching::kCorruptedText).empty() && spec.get(views::patching::kNoisePositions).empty()
            && spec.target.empty());
        QCOMPARE(spec.layer, 1);
        QCOMPARE(spec.text, std::string("kept"));
    }

    void countsAndShownTextReadAsEnglish()
    {
        QCOMPARE(countOf(1, "token"), std::string("1 token"));
        QCOMPARE(countOf(0, "token"), std::string("0 tokens"));
        QCOMPARE(countOf(2, "query", "queries"), std::string("2 queries"));
        QCOMPARE(shownText("a\nb"), std::string("a?b"));
        const std::string longText(70, 'x');
        QCOMPARE(shownText(longText), std::string(60, 'x') + "…");
        const std::string accents = std::string(59, 'x') + "éé"; // cut at a character, not inside one
        QCOMPARE(shownText(accents), std::string(59, 'x') + "é…");
    }
};

QTEST_GUILESS_MAIN(TestInputBoxes)
#include "tst_inputboxes.moc"
