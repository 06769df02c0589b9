// FNet's mixing (fourier/fouriermixing.h): Y and each row's shares against PyTorch's FFT and complex arithmetic
// (tests/tools/make_fourier_reference.py), on an odd and an even length; the block input it mixes in a pre-norm and a
// post-norm model; the head beside it equal to the traced probabilities; and the request's refusals.
#include "engine/engine.h"
#include "fourier/fourier.h"
#include "io/npy.h"
#include "model/builtinmodels.h"
#include "testbundle.h"
#include "trace/names.h"
#include "util/error.h"

#include <QTest>

#include <cmath>

using namespace atlas;

namespace {

FourierMatrix fixture(const std::string &name)
{
    const Tensor t = readNpy(ATLAS_TEST_DATA "/fourier/" + name + ".npy");
    return t.matrix();
}

double largestDifference(const FourierMatrix &a, const FourierMatrix &b)
{
    return (a - b).cwiseAbs().maxCoeff();
}

std::shared_ptr<const Trace> traced(const std::shared_ptr<const Model> &model, const std::vector<int> &tokens)
{
    Engine e(model, {tokens, {}, {}});
    e.runToEnd();
    return std::make_shared<const Trace>(e.trace());
}

} // namespace

class TestFourierMixing : public QObject
{
    Q_OBJECT

private slots:
    void mixingIsTheRealPartOfTheTwoDimensionalTransform_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("T = 9, d = 6") << "odd9x6";
        QTest::newRow("T = 8, d = 5") << "even8x5";
    }

    // Y = Re(fftn(X)) to float precision, every row's shares those of the complex terms, each row summing to 1, and the
    // means the caption quotes those of the shares.
    void mixingIsTheRealPartOfTheTwoDimensionalTransform()
    {
        QFETCH(QString, name);
        const std::string n = name.toStdString();
        const FourierMatrix x = fixture(n + "_x"), y = fixture(n + "_y"), share = fixture(n + "_share");
        const FourierMixing m = fourierMix(x);
        QCOMPARE(m.tokens, int(x.rows()));
        QCOMPARE(m.width, int(x.cols()));
        QVERIFY2(largestDifference(m.output, y) < 2e-5 * y.cwiseAbs().maxCoeff(),
            qPrintable(QString::number(largestDifference(m.output, y))));
        QVERIFY2(
            largestDifference(m.share, share) < 1e-5, qPrintable(QString::number(largestDifference(m.share, share))));
        const int T = m.tokens;
        double later = 0, largest = 0;
        for (int i = 0; i < T; ++i) {
            QVERIFY(std::abs(m.share.row(i).sum() - 1.0f) < 1e-5f);
            later += share.row(i).tail(T - 1 - i).sum() / T;
            largest += share.row(i).maxCoeff() / T;
            for (int j = 0; j < T; ++j)
                QVERIFY(std::abs(m.cosine(i, j) - std::cos(2 * M_PI * i * j / T)) < 1e-6);
        }
        QVERIFY(std::abs(m.laterShare - later) < 1e-5);
        QVERIFY(std::abs(m.largestShare - largest) < 1e-5);
        QVERIFY(m.fourierWork > 0 && m.attentionWork > m.fourierWork);
    }

    // The input mixed is the attention sub-layer's own: LN₁'s output in a pre-norm block, the stream in a post-norm
    // one; the head beside it is the trace's probabilities.
    void mixesTheAttentionInputAndShowsTheTracedHead()
    {
        const auto gpt2 = std::make_shared<const Model>(Model::load(ATLAS_TEST_DATA "/gpt2_tiny"));
        QCOMPARE(fourierMixingInput(gpt2->config, 1), names::layerTensor(1, "ln_1"));
        const auto bert = std::make_shared<const Model>(Model::load(ATLAS_TEST_DATA "/bert_tiny"));
        QCOMPARE(fourierMixingInput(bert->config, 1), names::residualStream(1));

        const std::vector<int> tokens = {3, 17, 42, 8, 0, 25, 49, 11, 5, 30, 12};
        const auto trace = traced(gpt2, tokens);
        const FourierMixing m = fourierMixing(*gpt2, *trace, 1, 2);
        QCOMPARE(m.input, names::layerTensor(1, "ln_1"));
        QCOMPARE(m.head, 2);
        const FourierMixing direct = fourierMix(trace->tensor(m.input).matrix());
        QCOMPARE(largestDifference(m.output, direct.output), 0.0);
        const Tensor &probs = trace->tensor(names::attentionTensor({}, 1, "probs"));
        const int T = int(tokens.size());
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
                QCOMPARE(m.attention(i, j), probs.data()[(2 * T + i) * T + j]);
        QVERIFY(m.largestWeight > 0 && m.largestWeight <= 1);
        QVERIFY(m.laterShare > 0.1); // a causal head reads nothing later; FNet's rows do
    }

    // An encoder–decoder and an input too long to draw are refused by the request, with the reason.
    void refusesTwoStacksAndLongInputs()
    {
        const std::shared_ptr<const Model> s2s = loadModel("seq2seq-sort");
        QVERIFY_THROWS_EXCEPTION(Error, fourierMixingInput(s2s->config, 0));

        const auto gpt2 = std::make_shared<const Model>(Model::load(ATLAS_TEST_DATA "/gpt2_tiny"));
        const std::vector<int> tokens = {3, 17, 42};
        Engine e(gpt2, {tokens, {}, {}});
        e.runToEnd();
        ViewSpec spec;
        spec.view = "fourier";
        spec.layer = 1;
        AnalysisContext c {std::make_shared<const Trace>(e.trace()), std::make_shared<const Program>(e.program()),
            FourierMixingAnalysis::kMaxTokens + 1, 2, true, {}};
        c.model = gpt2;
        QVERIFY(analysisRequest(spec, c).problem.find("Shorten the text") != std::string::npos);
        c.tokens = int(tokens.size());
        const AnalysisRequest r = analysisRequest(spec, c);
        QVERIFY2(r.problem.empty(), r.problem.c_str());
        std::string problem;
        const auto result = runAnalysisNow(r, &problem);
        QVERIFY2(dynamic_cast<const FourierMixingAnalysis *>(result.get()), problem.c_str());
    }
};

QTEST_GUILESS_MAIN(TestFourierMixing)
#include "tst_fouriermixing.moc"
