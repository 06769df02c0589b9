// The Objectives and Masked fills views' core (analysis/objectiveexample.h, analysis/maskedfills.h): an objective
// applied to an input with the model's special tokens or, for a model without them, named ones past its vocabulary;
// the masked LM's counts against the 80/10/10 rule; the mask each objective implies; what austen-mlm names at hidden
// positions, against a separate run of the engine.
#include "analysis/maskedfills.h"
#include "analysis/mostprobable.h"
#include "analysis/objectiveexample.h"
#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace atlas;
using namespace atlas::testing;

namespace {

const std::string kPassage = "It is a truth universally acknowledged, that a single man in possession of a good "
                             "fortune, must be in want of a wife.";

} // namespace

class TestObjectiveExample : public QObject
{
    Q_OBJECT

private slots:
    void theMaskedLmCountsAgainstTheRule()
    {
        const auto model = loadModel("austen-mlm");
        const std::vector<int> tokens = encode(*model, kPassage);
        const int T = int(tokens.size());
        const ObjectiveExample e = objectiveExample(*model, *tokenizerForModel(*model), tokens, Objective::MaskedLm, 3);
        QVERIFY(e.specialsInVocabulary);
        QCOMPARE(e.specialNames.at(256), std::string("[MASK]"));
        QCOMPARE(e.chosen.measured, int(std::lround(0.15 * T)));
        QCOMPARE(e.chosen.expected, 0.15 * T);
        QCOMPARE(e.masked.measured + e.random.measured + e.unchanged.measured, e.chosen.measured);
        const int n = e.chosen.measured;
        QCOMPARE(e.masked.expected, 0.8 * n);
        QVERIFY(std::abs(e.masked.spread - std::sqrt(n * 0.8 * 0.2)) < 1e-12);
        QVERIFY(std::abs(e.random.spread - std::sqrt(n * 0.1 * 0.9)) < 1e-12);
        int masked = 0;
        for (int t = 0; t < T; ++t) {
            const bool chosen = e.text.fates[size_t(t)] != CorruptedText::Fate::Kept;
            QCOMPARE(e.text.targets[size_t(t)], chosen ? tokens[size_t(t)] : -1);
            masked += e.text.input[size_t(t)] == 256;
        }
        QCOMPARE(masked, e.masked.measured);
        QCOMPARE(e.mask, std::vector<uint8_t>(size_t(T) * size_t(T), 1)); // an encoder's input: both ways
        // The same draw as `dump --objective mlm` makes with the model's own tokens.
        const CorruptedText direct = applyObjective(*model, tokens, Objective::MaskedLm, 3);
        QCOMPARE(direct.input, e.text.input);
    }

    void aModelWithoutTheTokensShowsThemByName()
    {
        const auto model = loadModel("tiny-bytes");
        const std::vector<int> tokens = encode(*model, kPassage);
        const ObjectiveExample mlm
            = objectiveExample(*model, *tokenizerForModel(*model), tokens, Objective::MaskedLm, 1);
        QVERIFY(!mlm.specialsInVocabulary);
        QCOMPARE(mlm.specialNames.at(model->config.vocab), std::string("[MASK]"));
        QVERIFY(std::count(mlm.text.input.begin(), mlm.text.input.end(), model->config.vocab) == mlm.masked.measured);
        try {
            (void)applyObjective(*model, tokens, Objective::MaskedLm, 1);
            QFAIL("a model without [MASK] took the masked LM");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("tiny-bytes has no [MASK] token"), e.what());
        }

        const ObjectiveExample span
            = objectiveExample(*model, *tokenizerForModel(*model), tokens, Objective::SpanCorruption, 5);
        QVERIFY(!span.specialsInVocabulary);
        std::vector<int> sentinels;
        for (const auto &[id, name] : span.specialNames) {
            QVERIFY(id >= model->config.vocab);
            QCOMPARE(name, "<extra_id_" + std::to_string(sentinels.size()) + ">");
            sentinels.push_back(id);
        }
        QVERIFY(sentinels.size() > span.text.spans.size());
        QCOMPARE(fillSpans(span.text.input, span.text.targets, sentinels), tokens); // round-trips
        QVERIFY(span.text.input.size() < tokens.size());
        QCOMPARE(span.chosen.measured, 0); // counts are the masked LM's
    }

    void eachObjectiveImpliesItsMask()
    {
        const auto model = loadModel("austen");
        const std::vector<int> tokens = encode(*model, "Mr. Darcy");
        const int T = int(tokens.size());
        const ObjectiveExample next
            = objectiveExample(*model, *tokenizerForModel(*model), tokens, Objective::NextToken, 0);
        const ObjectiveExample prefix
            = objectiveExample(*model, *tokenizerForModel(*model), tokens, Objective::PrefixLm, 4);
        QCOMPARE(ownObjective(model->config), Objective::NextToken);
        QCOMPARE(ownObjective(loadModel("austen-mlm")->config), Objective::MaskedLm);
        QVERIFY(prefix.text.prefix >= 1 && prefix.text.prefix < T);
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j) {
                QCOMPARE(bool(next.mask[size_t(i * T + j)]), j <= i);
                const bool bothWays = i < prefix.text.prefix && j < prefix.text.prefix;
                QCOMPARE(bool(prefix.mask[size_t(i * T + j)]), j <= i || bothWays);
            }
        try {
            (void)objectiveExample(*model, *tokenizerForModel(*model), {65}, Objective::NextToken, 0);
            QFAIL("one token took the next-token objective");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("at least 2 tokens"), e.what());
        }
    }

    // Sentences end after . ! or ? followed by white space; austen-mlm joins two of them with its own [CLS] and [SEP],
    // tiny-bytes with ones named past its vocabulary.
    void nextSentenceUsesTheModelsSeparators()
    {
        const auto mlm = loadModel("austen-mlm");
        const std::string text = "Mr. Darcy bowed. \"Who?\" said she! It was 3.5 miles off. Then rain.";
        const std::vector<int> tokens = encode(*mlm, text);
        const std::vector<bool> ends = sentenceEnds(*tokenizerForModel(*mlm), tokens);
        std::string cut;
        for (size_t t = 0; t < tokens.size(); ++t)
            cut += std::string(1, char(tokens[t])) + (ends[t] ? "|" : "");
        QCOMPARE(cut, std::string("Mr.| Darcy bowed.| \"Who?\"| said she!| It was 3.5 miles off.| Then rain.|"));
        const ObjectiveExample own
            = objectiveExample(*mlm, *tokenizerForModel(*mlm), tokens, Objective::NextSentence, 7);
        QVERIFY(own.specialsInVocabulary);
        QCOMPARE(own.text.input.front(), mlm->config.specialToken("[CLS]"));
        QCOMPARE(own.text.input.back(), mlm->config.specialToken("[SEP]"));
        const auto tiny = loadModel("tiny-bytes");
        const ObjectiveExample named
            = objectiveExample(*tiny, *tokenizerForModel(*tiny), tokens, Objective::NextSentence, 7);
        QVERIFY(!named.specialsInVocabulary);
        QCOMPARE(named.specialNames.at(named.text.input.front()), std::string("[CLS]"));
        QCOMPARE(named.text.sentenceA, own.text.sentenceA); // the same draw, other ids
        QVERIFY_THROWS_EXCEPTION(Error, applyObjective(*tiny, tokens, Objective::NextSentence, 7));
    }

    void mostProbableKeepsTheLowerIdOnTies()
    {
        const float row[] = {0.1f, 0.3f, 0.3f, 0.05f};
        const auto top = mostProbable(row, 4, 3);
        QCOMPARE(top.size(), size_t(3));
        QCOMPARE(top[0].first, 1);
        QCOMPARE(top[1].first, 2);
        QCOMPARE(top[2].first, 0);
        QCOMPARE(mostProbable(row, 4, 9).size(), size_t(4));
    }

    // The fills of the [MASK]s typed in austen-mlm's sample: its output rows at those positions, as a separate run
    // of the engine reads them; the three hidden characters of "wh[MASK]t", "s[MASK]nses", "m[MASK]n" named first.
    void austenMlmFillsTheTypedMasks()
    {
        const auto model = loadModel("austen-mlm");
        const std::vector<int> tokens = encode(*model, model->config.sample);
        const MaskedFills fills = maskedFills(model, tokens, {}, std::nullopt, 5);
        QCOMPARE(fills.fills.size(), size_t(3));
        QCOMPARE(fills.known, 0);
        Input input;
        input.tokens = tokens;
        Engine engine(model, input);
        engine.runToEnd();
        const Tensor &probs = engine.trace().tensor("next_probs");
        const int V = int(probs.dim(1));
        const char expected[] = {'a', 'e', 'a'};
        for (size_t i = 0; i < fills.fills.size(); ++i) {
            const MaskedFill &f = fills.fills[i];
            QCOMPARE(tokens[size_t(f.position)], 256);
            QCOMPARE(f.top.size(), size_t(5));
            QCOMPARE(f.top, mostProbable(probs.data() + int64_t(f.position) * V, V, 5));
            QCOMPARE(f.top[0].first, int(expected[i]));
        }
    }

    // A masked LM corruption drawn from a seed: every chosen position read, its original known and ranked; over a
    // passage and ten seeds austen-mlm names most of them first (its held-out score is 80.7 %).
    void austenMlmNamesMostOfACorruption()
    {
        const auto model = loadModel("austen-mlm");
        const std::vector<int> tokens = encode(*model, kPassage);
        int known = 0, named = 0;
        for (uint64_t seed = 0; seed < 10; ++seed) {
            const MaskedFills fills = maskedFills(model, tokens, {}, seed, 5);
            const CorruptedText c = applyObjective(*model, tokens, Objective::MaskedLm, seed);
            QCOMPARE(fills.read, c.input);
            QCOMPARE(fills.fills.size(), size_t(std::lround(0.15 * double(tokens.size()))));
            for (const MaskedFill &f : fills.fills) {
                QCOMPARE(f.original, tokens[size_t(f.position)]);
                QCOMPARE(f.original == f.top[0].first, f.originalRank == 0);
                QVERIFY(f.originalProbability > 0 && f.originalProbability <= f.top[0].second);
            }
            known += fills.known;
            named += fills.named;
        }
        QVERIFY2(named > known / 2, qPrintable(QStringLiteral("%1 of %2 named").arg(named).arg(known)));
    }

    void fillsRefuseWhatCannotBeFilled()
    {
        for (const char *name : {"tiny-bytes", "austen"}) {
            const auto model = loadModel(name);
            QVERIFY(!maskedFillsProblem(model->config, model->name).empty());
            QVERIFY_THROWS_EXCEPTION(Error, maskedFills(model, encode(*model, "abc"), {}, 0, 5));
        }
        const auto mlm = loadModel("austen-mlm");
        try {
            (void)maskedFills(mlm, encode(*mlm, "no mask here"), {}, std::nullopt, 5);
            QFAIL("an input without [MASK] was filled");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("no [MASK] to fill"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestObjectiveExample)
#include "tst_objectiveexample.moc"
