// Widget tests of the views under "Pretraining": the Objectives view (what an objective makes of the input, the counts
// against BERT's rule, the mask it implies, its controls) and the Masked fills view (austen-mlm's first choices at
// each hidden position), drawn from runSpec as `render` draws them; and the spec keys and errors that go with them.
#include "analysis/objectiveexample.h"
#include "fills/fills.h"
#include "fills/fillsview.h"
#include "model/builtinmodels.h"
#include "model/model.h"
#include "model/modeltokenizer.h"
#include "objective/objectiveview.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"
#include "view/viewanalysis.h"
#include "views/fillcards.h"
#include "views/heatmapplot.h"
#include "viewtesting.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace atlas;

namespace {

const char *const kPassage = "It is a truth universally acknowledged, that a single man in possession of a good "
                             "fortune, must be in want of a wife.";

ViewSpec pretrainingSpec(const char *view, const char *model, const char *objective, int seed)
{
    ViewSpec spec;
    spec.view = view;
    spec.model = model;
    spec.text = kPassage;
    spec.objective = objective;
    spec.seed = seed;
    return spec;
}

int markedChips(const TokenChipStrip *strip)
{
    int n = 0;
    for (const TokenChipStrip::ChipMark &m : strip->marks())
        n += m.fill.isValid();
    return n;
}

} // namespace

class TestPretrainingViews : public QObject
{
    Q_OBJECT

private slots:
    void theSpecKeysParseAndRefuse()
    {
        const ViewSpec spec = ViewSpec::fromJson(R"({"view": "objective", "objective": "span", "seed": 9})", "t");
        QCOMPARE(spec.objective, std::string("span"));
        QCOMPARE(spec.seed, 9);
        QCOMPARE(ViewSpec::fromJson(spec.toJson(true), "t"), spec);
        for (const char *key : {"objective", "seed"}) {
            const std::string bad = std::string("{\"") + key + (key[0] == 'o' ? "\": \"bert\"}" : "\": -1}");
            try {
                (void)ViewSpec::fromJson(bad, "spec.json");
                QFAIL(bad.c_str());
            } catch (const Error &e) {
                QVERIFY2(QString(e.what()).contains(QStringLiteral("spec.json")) && QString(e.what()).contains(key),
                    e.what());
            }
        }
    }

    // austen-mlm's own objective, the masked LM: chips marked where chosen, [MASK]s in what the model reads, the
    // originals to name, the counts table, no mask panel (every key is read), and the button to fill with the model.
    void theObjectivesViewShowsTheMaskedLm()
    {
        const ViewSpec spec = pretrainingSpec("objective", "austen-mlm", "", 3);
        ObjectiveView view;
        view.resize(1100, 700);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const ObjectiveExample *e = view.example();
        QVERIFY(e != nullptr);
        QCOMPARE(e->text.objective, Objective::MaskedLm);
        const int chosen = e->chosen.measured;
        QCOMPARE(markedChips(view.textStrip()), chosen);
        QCOMPARE(markedChips(view.readStrip()), chosen);
        QCOMPARE(view.targetStrip()->marks().size(), size_t(chosen));
        QVERIFY(view.formula().contains(QStringLiteral("= %1 positions are chosen").arg(chosen)));
        QVERIFY2(view.counts().contains("80 % of the chosen"), qPrintable(view.counts()));
        QVERIFY(view.counts().contains(QString::number(e->masked.measured)));
        // An encoder's input, every key read: no mask panel, the strip's title says it.
        QVERIFY(std::all_of(e->mask.begin(), e->mask.end(), [](uint8_t m) { return m == 1; }));
        QVERIFY(view.maskPlot()->isHidden());
        QVERIFY(view.readStrip()->isVisibleTo(&view));
        QVERIFY(view.fillButton()->isVisibleTo(&view));
        QVERIFY(view.readStrip()->isVisibleTo(&view));
    }

    void theObjectivesViewShowsSpansPrefixAndNext()
    {
        ObjectiveView view;
        view.resize(1100, 700);
        const ViewSpec span = pretrainingSpec("objective", "tiny-bytes", "span", 2);
        view.setSpec(span);
        view.setInput(testing::forSpec(span));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QVERIFY(view.formula().contains("has no sentinels"));
        QCOMPARE(view.example()->text.objective, Objective::SpanCorruption);
        QVERIFY(view.readStrip()->marks().size() == view.example()->text.input.size());
        QCOMPARE(markedChips(view.readStrip()), int(view.example()->text.spans.size())); // one sentinel per span
        QVERIFY(!view.fillButton()->isVisibleTo(&view));
        QVERIFY(view.counts().isEmpty());

        const ViewSpec prefix = pretrainingSpec("objective", "austen", "prefix", 4);
        view.setSpec(prefix);
        view.setInput(testing::forSpec(prefix));
        const int P = view.example()->text.prefix;
        QCOMPARE(markedChips(view.textStrip()), P);
        QVERIFY(!view.readStrip()->isVisibleTo(&view)); // the model reads the text as it is
        QCOMPARE(view.targetStrip()->marks().size(), view.example()->original.size() - size_t(P));
        QVERIFY(view.maskPlot()->pooled().hasNegInf); // causal after the prefix

        ViewSpec nsp = pretrainingSpec("objective", "austen-mlm", "nsp", 1);
        nsp.text = "It is a truth. A single man must want a wife. The neighbours know it. So they say.";
        view.setSpec(nsp);
        view.setInput(testing::forSpec(nsp));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(markedChips(view.readStrip()), int(view.example()->text.input.size())); // every token has a segment
        QCOMPARE(view.targetStrip()->marks().size(), size_t(1));
        QVERIFY(view.formula().contains(view.example()->text.isNext ? "This draw: IsNext" : "This draw: NotNext"));

        const ViewSpec next = pretrainingSpec("objective", "austen", "", 0);
        view.setSpec(next);
        view.setInput(testing::forSpec(next));
        QCOMPARE(view.example()->text.objective, Objective::NextToken);
        QVERIFY(view.formula().startsWith("GPT's next-token objective"));
    }

    void theObjectivesControlsEditTheSpec()
    {
        const ViewSpec spec = pretrainingSpec("objective", "austen-mlm", "mlm", 3);
        ObjectiveView view;
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QSignalSpy edited(&view, &View::specEdited);
        view.seedBox()->setValue(7);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().seed, 7);
        emit view.objectiveBox()->activated(view.objectiveBox()->findData(QStringLiteral("prefix")));
        QCOMPARE(edited.last().at(0).value<ViewSpec>().objective, std::string("prefix"));
        view.fillButton()->click();
        const ViewSpec fills = edited.last().at(0).value<ViewSpec>();
        QCOMPARE(fills.view, std::string("fills"));
        QCOMPARE(fills.objective, std::string("mlm"));
        QCOMPARE(fills.seed, 3);
    }

    // The [MASK]s typed in austen-mlm's sample, then a corruption from a seed: a card per position, the original's
    // bar marked when the corruption knows it.
    void theFillsViewDrawsACardPerHiddenPosition()
    {
        ViewSpec spec = pretrainingSpec("fills", "austen-mlm", "", 0);
        spec.text = loadModel("austen-mlm")->config.sample;
        FillsView view;
        view.resize(1000, 650);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.cards()->cards().size(), size_t(3));
        QCOMPARE(view.cards()->cards()[0].rows.size(), size_t(5));
        QCOMPARE(view.cards()->cards()[0].rows[0].label, QStringLiteral("a")); // wh[MASK]t
        QVERIFY(view.formula().contains("hides 3 tokens"));

        const ViewSpec corrupted = pretrainingSpec("fills", "austen-mlm", "mlm", 3);
        view.setSpec(corrupted);
        view.setInput(testing::forSpec(corrupted));
        const auto *analysis = view.input().analysisAs<FillsAnalysis>();
        QVERIFY(analysis != nullptr);
        QCOMPARE(view.cards()->cards().size(), analysis->fills.fills.size());
        int marked = 0;
        for (const FillCards::Card &card : view.cards()->cards())
            for (const FillCards::Row &row : card.rows)
                marked += row.original;
        QVERIFY(marked >= analysis->fills.named); // every named original is on its card's first bar
        QVERIFY(view.formula().contains(QStringLiteral("first at %1 of them").arg(analysis->fills.named)));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.cards()->cardRect(1).left() > view.cards()->cardRect(0).left()); // cards side by side
    }

    // A Hugging Face BERT names its [MASK] in its tokenizer, not its config: the fills view finds it there, shows
    // BERT's own head formula, and joins WordPiece pieces back into words around the hidden one.
    void theFillsViewReadsABertCheckpoint()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        ModelConfig c = ModelConfig::fromJson(R"({"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 1,
            "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 30522})",
            "bert/config.json");
        Model::random(c, 3).save(dir.path().toStdString());
        const QString tokenizer = QString::fromStdString(resolveTokenizer("bert-base-uncased"));
        for (const QString &file : QDir(tokenizer).entryList(QDir::Files))
            QVERIFY(QFile::copy(tokenizer + "/" + file, dir.filePath(file)));
        const std::shared_ptr<const Model> model = loadModel(dir.path().toStdString());
        QCOMPARE(model->config.specialToken("[MASK]"), 103);
        QCOMPARE(model->config.specialToken("[CLS]"), 101);
        QCOMPARE(model->config.ordinaryTokens(), 30522); // random replacements from the whole vocabulary

        ViewSpec spec = pretrainingSpec("fills", "", "", 0);
        spec.model = dir.path().toStdString();
        spec.text = "The capital of France is [MASK].";
        FillsView view;
        view.resize(1000, 650);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.cards()->cards().size(), size_t(1));
        QVERIFY2(view.formula().contains("W_teᵀ + b_out"), qPrintable(view.formula()));
        QVERIFY2(view.cards()->cards()[0].before.endsWith("france is "), qPrintable(view.cards()->cards()[0].before));
        QCOMPARE(view.cards()->cards()[0].after, QStringLiteral(" . [SEP]"));
    }

    // A T5 checkpoint's sentinels are named in its tokenizer (added tokens past the SentencePiece pieces, <extra_id_0>
    // highest), and span corruption, its pretraining objective, is its own: the Objectives view replaces spans of the
    // source with those real sentinels.
    void theObjectivesViewReadsAT5CheckpointsSentinels()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const ModelConfig c = ModelConfig::fromJson(R"({"model_type": "t5", "d_model": 32, "d_kv": 8, "num_heads": 4,
            "num_layers": 1, "d_ff": 64, "vocab_size": 1003})",
            "t5/config.json");
        Model::random(c, 3).save(dir.path().toStdString());
        const QString unigram = ATLAS_TEST_DATA "/tokenizers/unigram/";
        QVERIFY(QFile::copy(unigram + "tokenizer_config.json", dir.filePath("tokenizer_config.json")));
        QFile in(unigram + "tokenizer.json");
        QVERIFY(in.open(QIODevice::ReadOnly));
        QJsonObject tokenizer = QJsonDocument::fromJson(in.readAll()).object();
        QJsonArray added = tokenizer["added_tokens"].toArray();
        for (int i = 0; i < 3; ++i)
            added.append(
                QJsonObject {{"id", 1002 - i}, {"content", QString("<extra_id_%1>").arg(i)}, {"single_word", false},
                    {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"special", true}});
        tokenizer["added_tokens"] = added;
        QFile out(dir.filePath("tokenizer.json"));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(tokenizer).toJson());
        out.close();
        const std::shared_ptr<const Model> model = loadModel(dir.path().toStdString());
        QCOMPARE(model->config.sentinelTokens(), (std::vector<int> {1002, 1001, 1000}));
        QCOMPARE(model->config.specialToken("</s>"), 2);
        QCOMPARE(ownObjective(model->config), Objective::SpanCorruption);

        ViewSpec spec = pretrainingSpec("objective", "", "", 1);
        spec.model = dir.path().toStdString();
        spec.text = "the quick brown fox jumps over the lazy dog";
        spec.decoderText = "der";
        ObjectiveView view;
        view.resize(1100, 700);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.example()->text.objective, Objective::SpanCorruption);
        QVERIFY(view.example()->specialsInVocabulary);
        QVERIFY(!view.formula().contains("has no sentinels"));
        // the source without its </s>, which T5 appends after corrupting
        std::vector<int> source = tokenizerForModel(*model)->encodeWithSpecialTokens(spec.text);
        QCOMPARE(source.back(), 2);
        source.pop_back();
        QCOMPARE(view.example()->original, source);
    }

    void whatCannotBeShownSaysWhy()
    {
        FillsView view;
        const ViewSpec decoder = pretrainingSpec("fills", "tiny-bytes", "", 0);
        view.setSpec(decoder);
        view.setInput(testing::forSpec(decoder));
        QVERIFY2(view.message().contains("no [MASK] token"), qPrintable(view.message()));
        QVERIFY(QString::fromStdString(drawProblem(decoder, runSpec(decoder), "spec.json"))
                    .startsWith("spec.json: key 'model'"));
        const ViewSpec span = pretrainingSpec("fills", "austen-mlm", "span", 0);
        view.setSpec(span);
        view.setInput(testing::forSpec(span));
        QVERIFY2(view.message().contains("hides nothing"), qPrintable(view.message()));
        QVERIFY(QString::fromStdString(drawProblem(span, runSpec(span), "spec.json")).contains("key 'objective'"));
        const ViewSpec typed = pretrainingSpec("fills", "austen-mlm", "", 0); // the passage has no [MASK]
        QVERIFY(QString::fromStdString(drawProblem(typed, runSpec(typed), "spec.json")).contains("key 'text'"));
        ViewSpec tooShort = pretrainingSpec("objective", "austen", "next", 0);
        tooShort.text = "A";
        QVERIFY(QString::fromStdString(drawProblem(tooShort, runSpec(tooShort), "spec.json")).contains("at least 2"));
    }
};

QTEST_MAIN(TestPretrainingViews)
#include "tst_pretrainingviews.moc"
