// The neuron view's numbers (analysis/querykeyterms.h): the score of one query and key is the sum of the terms
// q_c·k_c over √d, plus the position bias of the kinds that add one, exactly as the traced scores; the weight is
// the traced probability; RoPE's terms are those of the turned q and k.
#include "analysis/querykeyterms.h"
#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "testbundle.h"

#include <QTest>

#include <cmath>

using namespace atlas;

namespace {

Trace traceOf(const std::string &model, const std::vector<int> &tokens)
{
    Engine e(loadModel(model), Input {tokens, {}, {}});
    e.runToEnd();
    return e.trace();
}

const std::vector<int> kTokens = {97, 98, 99, 100, 62, 100, 99, 98};

} // namespace

class TestQueryKeyTerms : public QObject
{
    Q_OBJECT

private slots:
    // An encoder-decoder's cross-attention: decoder queries, source keys, the same sum.
    void crossAttentionTermsReadDecoderQueriesAndSourceKeys()
    {
        Input input;
        input.source = {100, 115, 102, 97, 99, 100, 100}; // "dsfacdd"
        input.tokens = {62, 97, 99, 100, 100, 100, 102, 115}; // ">acdddfs"
        Engine e(loadModel("seq2seq-sort"), input);
        e.runToEnd();
        const Trace &trace = e.trace();
        const names::AttentionSite cross {names::kDecoderStack, true};
        std::string problem;
        const QueryKeyTerms t = queryKeyTerms(trace, 1, 3, 7, 6, &problem, cross);
        QVERIFY2(problem.empty(), problem.c_str());
        QVERIFY(std::abs(t.scaled - t.score) < 1e-5); // no position bias in cross-attention
        QCOMPARE(t.score, double(trace.tensor("dec.layer.1.cross.scores").slice(3)(7, 6)));
        QCOMPARE(t.weight, double(trace.tensor("dec.layer.1.cross.probs").slice(3)(7, 6)));
        QCOMPARE(t.k[0], trace.tensor("dec.layer.1.cross.k").slice(3)(6, 0));
        const QueryKeyTerms most = queryKeyTerms(trace, 1, 3, 0, -1, &problem, cross); // at '>', writing 'a'
        QCOMPARE(most.key, 3); // the source's 'a'
        queryKeyTerms(trace, 1, 3, 2, 7, &problem, cross); // the source has 7 tokens
        QVERIFY2(problem.find("the source 7") != std::string::npos, problem.c_str());
        const QueryKeyTerms encoder
            = queryKeyTerms(trace, 0, 0, 1, 5, &problem, {names::kEncoderStack, false}); // both ways: key after query
        QVERIFY2(problem.empty() && !encoder.masked, problem.c_str());
    }

    // T5 divides by nothing: the terms sum to the score, plus the bucket bias in self-attention and nothing in
    // cross-attention; read as if scaled, a fake "bias" of (1 − 1/√d)·q·k would appear.
    void unscaledScoresAreTheSumOfTheTerms()
    {
        Input input;
        input.source = {5, 17, 42, 8, 33, 25, 63, 11, 2, 9, 40, 12, 7, 1};
        input.tokens = {0, 21, 4, 56, 30, 14, 3, 48, 19};
        auto model = std::make_shared<Model>(Model::load(ATLAS_TEST_DATA "/t5_tiny"));
        Engine e(model, input);
        e.runToEnd();
        std::string problem;
        const QueryKeyTerms cross
            = queryKeyTerms(e.trace(), 1, 2, 8, 1, &problem, {names::kDecoderStack, true}, model->config.scaleScores);
        QVERIFY2(problem.empty(), problem.c_str());
        QVERIFY(cross.unscaled);
        QVERIFY(std::abs(cross.dot - cross.score) < 1e-4 * std::max(1.0, std::abs(cross.score)));
        QVERIFY(std::abs(cross.bias) < 1e-4);
        const QueryKeyTerms self
            = queryKeyTerms(e.trace(), 0, 1, 3, 10, &problem, {names::kEncoderStack, false}, false);
        QVERIFY2(problem.empty(), problem.c_str());
        QVERIFY(std::abs(self.bias - double(e.trace().tensor("enc.layer.0.attn.bias").slice(1)(3, 10))) < 1e-4);
    }

    // Gemma 2 divides by √query_pre_attn_scalar (10 here, not d = 12), then soft-caps: with the model's divisor the
    // terms sum to the traced score with no "bias", and the capped score is c · tanh(score / c) as traced.
    void gemmaScoresDivideByTheirScalarAndAreCapped()
    {
        auto model = std::make_shared<Model>(Model::load(ATLAS_TEST_DATA "/gemma2_tiny"));
        Engine e(model, Input {{3, 17, 42, 8, 0, 25, 63, 11}, {}, {}});
        e.runToEnd();
        std::string problem;
        const QueryKeyTerms t
            = queryKeyTerms(e.trace(), 1, 2, 7, 4, &problem, {}, true, double(model->config.queryScaleBase));
        QVERIFY2(problem.empty(), problem.c_str());
        QCOMPARE(t.divisor, 10.0);
        QVERIFY(std::abs(t.scaled - t.score) < 1e-5 * std::max(1.0, std::abs(t.score)));
        QVERIFY(std::abs(t.bias) < 1e-5);
        QVERIFY(t.capped);
        QCOMPARE(t.cappedScore, double(e.trace().tensor("layer.1.attn.capped").slice(2)(7, 4)));
        QVERIFY(std::abs(t.cappedScore - 1.5 * std::tanh(t.score / 1.5)) < 1e-5);
    }

    void termsSumToTheTracedScore()
    {
        for (const char *model : {"reverse", "reverse-rope", "reverse-alibi"}) {
            const Trace trace = traceOf(model, kTokens);
            std::string problem;
            const QueryKeyTerms t = queryKeyTerms(trace, 1, 2, 6, 2, &problem);
            QVERIFY2(problem.empty(), problem.c_str());
            QCOMPARE(t.dim, 16);
            QCOMPARE(int(t.product.size()), 16);
            double sum = 0;
            for (int c = 0; c < t.dim; ++c) {
                QCOMPARE(t.product[size_t(c)], t.q[size_t(c)] * t.k[size_t(c)]);
                sum += t.product[size_t(c)];
            }
            QVERIFY(std::abs(sum - t.dot) < 1e-5);
            const double bias
                = trace.contains("layer.1.attn.bias") ? trace.tensor("layer.1.attn.bias").slice(2)(6, 2) : 0.0;
            QVERIFY2(std::abs(t.scaled + bias - t.score) < 1e-5, model);
            QVERIFY2(std::abs(t.bias - bias) < 1e-5, model);
            QCOMPARE(t.rotated, std::string(model) == "reverse-rope");
            QCOMPARE(t.weight, double(trace.tensor("layer.1.attn.probs").slice(2)(6, 2)));
            QVERIFY(!t.masked);
            // largest terms first
            for (size_t i = 1; i < t.largestTerms.size(); ++i)
                QVERIFY(std::abs(t.product[size_t(t.largestTerms[i - 1])])
                    >= std::abs(t.product[size_t(t.largestTerms[i])]));
        }
    }

    void mostWeightedKeyAndTheMask()
    {
        const Trace trace = traceOf("reverse", kTokens);
        std::string problem;
        const QueryKeyTerms most = queryKeyTerms(trace, 0, 1, 5, -1, &problem);
        QVERIFY(problem.empty());
        const ConstMatrixMap w = trace.tensor("layer.0.attn.probs").slice(1);
        for (int j = 0; j < 8; ++j)
            QVERIFY(w(5, j) <= w(5, most.key));
        const QueryKeyTerms future = queryKeyTerms(trace, 0, 1, 2, 6, &problem); // causal: key after the query
        QVERIFY(future.masked);
        QCOMPARE(future.weight, 0.0);
        queryKeyTerms(trace, 0, 9, 2, 1, &problem);
        QVERIFY(QString::fromStdString(problem).contains("no head 9"));
        queryKeyTerms(trace, 0, 0, 8, 1, &problem);
        QVERIFY(QString::fromStdString(problem).contains("8 tokens"));
        queryKeyTerms(trace, 5, 0, 1, 1, &problem);
        QVERIFY(QString::fromStdString(problem).contains("Not computed yet"));
    }
};

QTEST_GUILESS_MAIN(TestQueryKeyTerms)
#include "tst_querykeyterms.moc"
