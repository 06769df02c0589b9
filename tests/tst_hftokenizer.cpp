// Hugging Face tokenizer.json and BERT's vocab.txt: ids, tokens and decoded text equal those of Hugging Face's
// own JavaScript implementation (@huggingface/tokenizers) on real files of each kind: byte-level BPE (GPT-2,
// Qwen2.5), byte-fallback BPE (Mistral), WordPiece (BERT uncased) and Unigram (trained here with SentencePiece).
// SentencePiece models through libsentencepiece equal python3-sentencepiece's ids, pieces and decoded text.
// The fixtures and the script that made them: tests/data/tokenizers/README.md. Bad files are refused by name.
#include "errortesting.h"
#include "io/atomicfile.h"
#include "model/modeltokenizer.h"
#include "testbundle.h"
#include "tokenize/huggingfacetokenizer.h"
#include "tokenize/sentencepiecetokenizer.h"
#include "tokenize/sentencepiecetraining.h"
#include "tokenize/tokenizer.h"
#include "tokenize/unicodetext.h"
#include "train/corpus.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <sstream>

using namespace atlas;
using atlas::testing::errorFrom;

namespace {

const std::string kTokenizerData = std::string(ATLAS_TEST_DATA) + "/tokenizers/";
const std::string kBuiltin = std::string(ATLAS_SOURCE_DIR) + "/resources/tokenizers/";

// Where a fixture's tokenizer files are: the real, whole ones ship with the app (resources/tokenizers), the cut
// and trained ones are the tests' own.
std::string tokenizerDir(const std::string &fixture)
{
    if (fixture == "gpt2")
        return kBuiltin + "gpt2/";
    if (fixture == "mistral")
        return kBuiltin + "mistral-7b/";
    if (fixture == "bert_uncased")
        return kBuiltin + "bert-base-uncased/";
    return kTokenizerData + fixture + "/";
}

nlohmann::json readJson(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return nlohmann::json::parse(s.str());
}

QString shown(const std::vector<int> &ids)
{
    QStringList parts;
    for (int id : ids)
        parts << QString::number(id);
    return parts.join(',');
}

void writeTokenizerFile(const QString &path, const std::string &text)
{
    std::ofstream(path.toStdString(), std::ios::binary) << text;
}

} // namespace

class TestHfTokenizer : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;

    // Loads tests/data/tokenizers/<name>/tokenizer.json, or (for WordPiece) vocab.txt. `expectedIds` picks the
    // reference ids of a case (tokenizers.js's "ids" unless said otherwise).
    void checkCases(const std::string &name, bool fromVocabTxt = false,
        std::function<nlohmann::json(const nlohmann::json &)> expectedIds = {})
    {
        if (!expectedIds)
            expectedIds = [](const nlohmann::json &c) { return c["ids"]; };
        const std::unique_ptr<HuggingFaceTokenizer> tokenizer = fromVocabTxt
            ? HuggingFaceTokenizer::fromWordPieceVocab(tokenizerDir(name) + "vocab.txt", true)
            : HuggingFaceTokenizer::fromFile(tokenizerDir(name) + "tokenizer.json");
        const nlohmann::json cases = readJson(kTokenizerData + name + "/cases.json");
        QVERIFY(cases.size() >= 60);
        int checked = 0;
        for (const auto &c : cases) {
            const std::string text = c["text"];
            const QByteArray label = QByteArray::fromStdString(name + ": " + c["text"].dump());
            const std::vector<int> ids = tokenizer->encode(text);
            const auto expected = expectedIds(c).get<std::vector<int>>();
            QVERIFY2(ids == expected,
                (label + " gave " + shown(ids).toUtf8() + ", expected " + shown(expected).toUtf8()).constData());
            ++checked;
            if (expected != c["ids"].get<std::vector<int>>())
                continue; // tokenizers.js's tokens, special ids and decoded text are of its own ids
            const std::vector<int> special = tokenizer->encodeWithSpecialTokens(text);
            QVERIFY2(special == c["ids_special"].get<std::vector<int>>(),
                (label + " with special tokens gave " + shown(special).toUtf8()).constData());
            const auto tokens = c["tokens"].get<std::vector<std::string>>();
            for (size_t i = 0; i < ids.size(); ++i)
                QCOMPARE(tokenizer->tokenString(ids[i]), tokens[i]);
            if (!ids.empty()) {
                const std::string decoded = tokenizer->decode(ids);
                QVERIFY2(decoded == c["decoded"].get<std::string>(),
                    (label + " decoded to " + QByteArray::fromStdString(nlohmann::json(decoded).dump())).constData());
            }
        }
        QCOMPARE(checked, int(cases.size()));
    }

private slots:
    void byteLevelBpeGpt2() { checkCases("gpt2"); }
    void byteLevelBpeWithSplitRegexQwen() { checkCases("qwen2_5"); }
    void byteLevelBpeQwen3WithThinkTokens() { checkCases("qwen3"); }
    void byteLevelBpeO200kOfPhi4Mini() { checkCases("o200k"); }
    void byteFallbackBpeMistral() { checkCases("mistral"); }

    // A SentencePiece-style vocabulary's ▁ shows as the visible space, wherever it stands in the piece; a byte-fallback
    // piece shows its byte.
    void mistralPiecesShowTheirSpaces()
    {
        const auto mistral = tokenizerForDirectory(tokenizerDir("mistral"));
        const std::vector<int> ids = mistral->encode("Hello world\t");
        QCOMPARE(int(ids.size()), 3);
        QCOMPARE(mistral->piece(ids[0]), std::string("\u2423Hello"));
        QCOMPARE(mistral->piece(ids[1]), std::string("\u2423world"));
        QCOMPARE(mistral->piece(ids[2]), std::string("\u21E5")); // <0x09>, a byte-fallback piece
    }

    // Llama 3's option (its file is not committed, see tests/data/tokenizers/README.md): a word that is itself in
    // the vocabulary is taken whole, whatever the merges would make of it.
    void ignoreMergesTakesWholeWords()
    {
        const QString path = m_tmp.filePath("ignore_merges.json");
        nlohmann::json model = {{"type", "BPE"},
            {"vocab", {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"abc", 4}, {"bc", 5}}}, {"merges", {"b c", "a b"}}};
        writeTokenizerFile(path, nlohmann::json {{"model", model}}.dump());
        QCOMPARE(HuggingFaceTokenizer::fromFile(path.toStdString())->encode("abc"), (std::vector<int> {0, 5}));
        model["ignore_merges"] = true;
        writeTokenizerFile(path, nlohmann::json {{"model", model}}.dump());
        QCOMPARE(HuggingFaceTokenizer::fromFile(path.toStdString())->encode("abc"), (std::vector<int> {4}));
    }
    void wordPieceBertTokenizerJson() { checkCases("bert_uncased"); }
    void wordPieceBertVocabTxt() { checkCases("bert_uncased", true); }
    // tokenizers.js 0.2.0's Unigram ignores byte_fallback (one <unk> where the Rust crate and SentencePiece give
    // <0xNN> bytes), so the reference ids there are SentencePiece's own; SentencePiece in turn reads the added
    // tokens <s>, </s> and <unk> as plain text, where the tokenizer.json splits them off first.
    void unigram()
    {
        checkCases("unigram", false, [](const nlohmann::json &c) {
            const std::string text = c["text"];
            for (const char *added : {"<s>", "</s>", "<unk>"})
                if (text.find(added) != std::string::npos)
                    return c["ids"];
            return c["spm_ids"];
        });
    }

    void sentencePieceMatchesPython_data()
    {
        QTest::addColumn<QString>("model");
        QTest::newRow("unigram") << "unigram/spiece.model";
        QTest::newRow("bpe") << "spm_bpe/tokenizer.model";
    }

    void sentencePieceMatchesPython()
    {
        QFETCH(QString, model);
        const SentencePieceTokenizer tokenizer(kTokenizerData + model.toStdString());
        const std::string dir = kTokenizerData + model.section('/', 0, 0).toStdString();
        const nlohmann::json cases = readJson(dir + "/cases.json");
        QVERIFY(cases.size() >= 60);
        for (const auto &c : cases) {
            const std::string text = c["text"];
            const QByteArray label = QByteArray::fromStdString(c["text"].dump());
            const std::vector<int> ids = tokenizer.encode(text);
            QVERIFY2(ids == c["spm_ids"].get<std::vector<int>>(), (label + " gave " + shown(ids).toUtf8()).constData());
            const auto pieces = c["spm_pieces"].get<std::vector<std::string>>();
            for (size_t i = 0; i < ids.size(); ++i)
                QCOMPARE(tokenizer.pieceString(ids[i]), pieces[i]);
            QCOMPARE(tokenizer.decode(ids), c["spm_decoded"].get<std::string>());
        }
    }

    void sentencePieceSpecialTokensFollowTheConfig()
    {
        // spm_bpe's tokenizer_config.json: LlamaTokenizer with add_bos_token; the unigram one names no class.
        const auto llama = tokenizerForDirectory(kTokenizerData + "spm_bpe");
        QCOMPARE(llama->kind(), std::string("SentencePiece"));
        const std::vector<int> ids = llama->encode("Hello world");
        std::vector<int> withBos {1};
        withBos.insert(withBos.end(), ids.begin(), ids.end());
        QCOMPARE(llama->encodeWithSpecialTokens("Hello world"), withBos);
        QCOMPARE(llama->piece(ids[0]).substr(0, 3), std::string("␣"));
        QCOMPARE(llama->piece(1), std::string("<s>"));
        QVERIFY(errorFrom([] {
            SentencePieceTokenizer(kBuiltin + "gpt2/tokenizer.json");
        }).contains("not a SentencePiece model"));
        QVERIFY(errorFrom([&] { llama->decode({1 << 20}); }).contains("is not in"));
    }

    void gpt2LosslessRoundTrip()
    {
        const auto tokenizer = HuggingFaceTokenizer::fromFile(kBuiltin + "gpt2/tokenizer.json");
        for (const auto &c : readJson(kTokenizerData + "gpt2/cases.json")) {
            const std::string text = c["text"];
            const auto ids = tokenizer->encode(text);
            if (!ids.empty() && text.find(" .") == std::string::npos && text.find(" ,") == std::string::npos
                && text.find(" '") == std::string::npos && text.find(" !") == std::string::npos
                && text.find(" ?") == std::string::npos)
                QCOMPARE(tokenizer->decode(ids), text);
        }
    }

    void piecesAreReadable()
    {
        const auto gpt2 = HuggingFaceTokenizer::fromFile(kBuiltin + "gpt2/tokenizer.json");
        QCOMPARE(gpt2->piece(gpt2->encode(" the")[0]), std::string("␣the"));
        QCOMPARE(gpt2->piece(gpt2->encode("\n")[0]), std::string("↵"));
        QCOMPARE(gpt2->piece(50256), std::string("<|endoftext|>"));
        QCOMPARE(gpt2->piece(-1), std::string("#-1"));
        const auto llama = HuggingFaceTokenizer::fromFile(kBuiltin + "mistral-7b/tokenizer.json");
        QCOMPARE(llama->piece(llama->encode("Hello")[0]), std::string("␣Hello"));
        QCOMPARE(llama->piece(llama->encode("\n").back()), std::string("↵"));
        const auto bert = HuggingFaceTokenizer::fromWordPieceVocab(kBuiltin + "bert-base-uncased/vocab.txt", true);
        const auto ids = bert->encode("tokenization");
        QVERIFY(ids.size() >= 2);
        QVERIFY(bert->piece(ids[1]).starts_with("##"));
        QVERIFY(bert->isSpecial(bert->encode("[MASK]")[0]));
    }

    void badFilesAreRefusedByName()
    {
        const QString path = m_tmp.filePath("tokenizer.json");
        auto refused = [&](const nlohmann::json &json) {
            writeTokenizerFile(path, json.dump());
            return errorFrom([&] { HuggingFaceTokenizer::fromFile(path.toStdString()); });
        };
        const nlohmann::json bpe = {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}}, {"merges", {"a b"}}};
        QVERIFY(refused({{"model", bpe}}).isEmpty());
        QVERIFY(refused({{"model", bpe}, {"normalizer", {{"type", "Precompiled"}}}})
                    .contains("normalizer: the normalizer \"Precompiled\" is not supported"));
        QVERIFY(refused({{"model", bpe}, {"pre_tokenizer", {{"type", "UnicodeScripts"}}}})
                    .contains("pre_tokenizer: the pre-tokenizer \"UnicodeScripts\" is not supported"));
        QVERIFY(
            refused({{"model", {{"type", "WordLevel"}}}}).contains("model: the model \"WordLevel\" is not supported"));
        QVERIFY(refused({{"model", bpe}, {"decoder", {{"type", "CTC"}}}}).contains("the decoder \"CTC\""));
        nlohmann::json badMerge = bpe;
        badMerge["merges"] = {"a b", "a c"};
        QVERIFY(refused({{"model", badMerge}}).contains("model.merges[1]: \"c\" is not in model.vocab"));
        nlohmann::json dropout = bpe;
        dropout["dropout"] = 0.1;
        QVERIFY(refused({{"model", dropout}}).contains("model.dropout"));
        QVERIFY(refused(
            {{"model", bpe},
                {"pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "(a"}}}, {"behavior", "Isolated"}}}})
                    .contains("pre_tokenizer.pattern"));
        QVERIFY(refused({{"model", bpe}, {"added_tokens", {{{"id", -3}, {"content", "x"}}}}})
                    .contains("added_tokens[0].id"));
        QVERIFY(refused(nlohmann::json::array()).contains("expected a JSON object"));
        // model.vocab is read beside the tree: a member that is not a number is still named
        nlohmann::json nested = bpe;
        nested["vocab"]["c"] = {{"x", 1}};
        QVERIFY2(refused({{"model", nested}}).contains("model.vocab: token \"c\" has id {}"),
            qPrintable(refused({{"model", nested}})));
        nested["vocab"]["c"] = "2";
        QVERIFY(refused({{"model", nested}}).contains("model.vocab: token \"c\" has id \"2\""));
        nlohmann::json sparse = bpe; // one token at the largest id would cost a table of 16 million strings
        sparse["vocab"]["c"] = (1 << 24) - 1;
        QVERIFY2(refused({{"model", sparse}}).contains("ids this sparse are refused"),
            qPrintable(refused({{"model", sparse}})));
        QVERIFY(refused({{"normalizer", nullptr}}).contains("model: missing"));
    }

    void invalidUtf8TextIsRefused()
    {
        const auto gpt2 = HuggingFaceTokenizer::fromFile(kBuiltin + "gpt2/tokenizer.json");
        QVERIFY(errorFrom([&] { gpt2->encode("ok \xff"); }).contains("not valid UTF-8 (byte 3)"));
    }

    void directoriesPickTheirOwnTokenizer()
    {
        QCOMPARE(tokenizerForDirectory(kBuiltin + "mistral-7b")->kind(), std::string("BPE"));
        QCOMPARE(tokenizerForDirectory(kTokenizerData + "unigram")->kind(), std::string("Unigram"));
        QCOMPARE(tokenizerForDirectory(kBuiltin + "bert-base-uncased")->kind(), std::string("WordPiece"));
    }

    // train-tokenizer's trainer: the same text and options give the same bytes; the result is a SentencePiece model
    // of that many pieces whose byte fallback leaves nothing unknown; the shipped austen-words is what it makes of the
    // corpus's training part (resources/tokenizers/README.md). Bad options are refused by name.
    void aTrainedSentencePieceTokenizerIsTheSameEveryTime()
    {
        const std::string text = corpusTraining().substr(0, 60000);
        for (const char *kind : {"bpe", "unigram"}) {
            SentencePieceTraining o;
            o.vocab = 600;
            o.kind = kind;
            const std::string model = trainSentencePiece(text, o);
            QCOMPARE(trainSentencePiece(text, o), model);
            QTemporaryDir dir;
            const std::string path = dir.path().toStdString() + "/tokenizer.model";
            writeFileAtomically(path, model);
            const SentencePieceTokenizer t(path);
            QCOMPARE(t.vocabSize(), 600);
            QCOMPARE(t.decode(t.encode("Mr. Darcy — ünïcode")), std::string("Mr. Darcy — ünïcode"));
        }
        QVERIFY(errorFrom([&] { trainSentencePiece(text, {299, "bpe"}); }).contains("300..65536"));
        QVERIFY(errorFrom([&] { trainSentencePiece(text, {300, "wordpiece"}); }).contains("bpe or unigram"));
        QVERIFY(errorFrom([&] { trainSentencePiece("\n \n", {}); }).contains("every line is empty"));
        const QString tooMany = errorFrom([&] { trainSentencePiece("ab ab", {4000, "unigram"}); });
        QVERIFY2(tooMany.contains("SentencePiece's trainer refused: Vocabulary size too high"), qPrintable(tooMany));
        // the shipped tokenizer, made again from the corpus (one thread, the input in order: the same on any machine)
        const std::string shipped = readFile(kBuiltin + "austen-words/tokenizer.model");
        QCOMPARE(trainSentencePiece(corpusTraining(), {2048, "bpe"}) == shipped, true);
    }
};

QTEST_GUILESS_MAIN(TestHfTokenizer)
#include "tst_hftokenizer.moc"
