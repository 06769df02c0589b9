// The RNN of the RNN vs attention view (recurrence/rnnreach.h): its states and its reach ‖∂h_i/∂x_j‖ against
// PyTorch's torch.nn.RNN and autograd (tests/tools/make_rnn_reference.py); the bound it is drawn under; the weights it
// draws; thousands of steps without leaving double's range; the comparison read from a traced model; the refusals.
#include "engine/engine.h"
#include "io/npy.h"
#include "model/builtinmodels.h"
#include "recurrence/recurrence.h"
#include "testbundle.h"
#include "trace/names.h"
#include "util/error.h"
#include "view/viewanalysis.h"

#include <QTest>

#include <cmath>

using namespace atlas;

namespace {

RnnMatrix rnnFixture(const std::string &name)
{
    const Tensor t = readNpy(ATLAS_TEST_DATA "/rnn/" + name + ".npy");
    if (t.rank() == 1)
        return Eigen::Map<const Eigen::VectorXf>(t.data(), t.shape()[0]).cast<double>().transpose();
    return t.matrix().cast<double>();
}

} // namespace

class TestRnnReach : public QObject
{
    Q_OBJECT

private slots:
    // h_t and log₁₀‖∂h_10/∂x_j‖ as PyTorch computes them, on a general W (‖W‖₂ ≈ 1.18) and inputs that saturate tanh;
    // nothing after row 10; each reach under its bound ‖W‖₂^(i−j)‖U‖_F.
    void statesAndReachMatchAutograd()
    {
        const RnnWeights weights {rnnFixture("w"), rnnFixture("u")};
        const RnnMatrix x = rnnFixture("x"), states = rnnFixture("states"), reach = rnnFixture("log10reach");
        const RnnReach r = rnnReach(weights, x, 10);
        QCOMPARE(r.tokens, 14);
        QCOMPARE(r.hidden, 6);
        QCOMPARE(r.width, 10);
        QVERIFY2((r.states - states).cwiseAbs().maxCoeff() < 1e-6,
            qPrintable(QString::number((r.states - states).cwiseAbs().maxCoeff())));
        const double spectral = 1.1848559; // numpy.linalg.norm(W, 2) of the fixture
        QVERIFY2(std::abs(r.radius - spectral) < 1e-6, qPrintable(QString::number(r.radius, 'g', 10)));
        for (int j = 0; j < 14; ++j) {
            if (j > 10) {
                QVERIFY(std::isnan(r.log10Reach[j]) && std::isnan(r.log10Bound[j]));
                continue;
            }
            QVERIFY2(std::abs(r.log10Reach[j] - reach(0, j)) < 2e-5,
                qPrintable(QString("token %1: %2 against %3").arg(j).arg(r.log10Reach[j]).arg(reach(0, j))));
            const double bound = (10 - j) * std::log10(spectral) + std::log10(weights.input.norm());
            QVERIFY(std::abs(r.log10Bound[j] - bound) < 1e-6);
            QVERIFY(r.log10Reach[j] <= r.log10Bound[j]);
        }
        QVERIFY(std::abs(r.meanSlope - (1.0 - states.topRows(11).array().square()).mean()) < 1e-6);
    }

    // W = ρ·Q with Q orthogonal (‖W‖₂ = ρ), U's entries of variance 1/d, n capped at kMaxRnnWidth, the same draw twice.
    void drawsTheStatedWeights()
    {
        const RnnWeights w = drawRnn(200, 0.7);
        QCOMPARE(int(w.recurrent.rows()), kMaxRnnWidth);
        QCOMPARE(int(w.input.cols()), 200);
        const RnnMatrix gram = w.recurrent.transpose() * w.recurrent;
        QVERIFY((gram - 0.49 * RnnMatrix::Identity(kMaxRnnWidth, kMaxRnnWidth)).cwiseAbs().maxCoeff() < 1e-12);
        const double variance = w.input.array().square().mean();
        QVERIFY2(std::abs(variance * 200 - 1) < 0.1, qPrintable(QString::number(variance * 200)));
        QCOMPARE(drawRnn(200, 0.7).input, w.input);
        QCOMPARE(int(drawRnn(24, 1.0).recurrent.rows()), 24);
    }

    // Inputs of 0 keep every state at 0, so tanh′ = 1 and the reach is the bound exactly: ρ^(i−j)‖U‖_F, here down to
    // 10^−1567 after 3,000 steps at ρ = 0.3, far below double's range, which the scaled products never leave.
    void thousandsOfStepsStayExact()
    {
        const RnnWeights w = drawRnn(16, 0.3);
        const RnnMatrix x = RnnMatrix::Zero(3000, 16);
        AnalysisProgress progress;
        const RnnReach r = rnnReach(w, x, 2999, nullptr, &progress);
        QCOMPARE(progress.total.load(), 3000); // one step a token back from row i, each counted
        QCOMPARE(progress.done.load(), 3000);
        for (int j : {2999, 2000, 500, 0}) {
            QVERIFY(std::isfinite(r.log10Reach[j]));
            QVERIFY2(std::abs(r.log10Reach[j] - r.log10Bound[j]) < 1e-8 * (1 + 2999 - j),
                qPrintable(QString("token %1: %2 against %3").arg(j).arg(r.log10Reach[j]).arg(r.log10Bound[j])));
        }
        QVERIFY(r.log10Reach[0] < -1500);
        QCOMPARE(r.meanSlope, 1.0);
    }

    // The view's comparison: the RNN on the traced attention input of the block, the head's row the traced
    // probabilities', row i the last token by default, and the work of each.
    void comparesTheTracedBlock()
    {
        const auto gpt2 = std::make_shared<const Model>(Model::load(ATLAS_TEST_DATA "/gpt2_tiny"));
        const std::vector<int> tokens = {3, 17, 42, 8, 0, 25, 49, 11, 5};
        Engine e(gpt2, {tokens, {}, {}});
        e.runToEnd();
        const Trace &trace = e.trace();
        const RecurrenceComparison c = compareRecurrence(*gpt2, trace, 1, 2, -1, 0.9);
        QCOMPARE(c.input, names::layerTensor(1, "ln_1"));
        QCOMPARE(c.blocks, gpt2->config.layers);
        const int T = int(tokens.size()), d = gpt2->config.dModel;
        QCOMPARE(c.rnn.query, T - 1);
        const RnnReach direct = rnnReach(drawRnn(d, 0.9), trace.tensor(c.input).matrix().cast<double>(), T - 1);
        QCOMPARE(c.rnn.log10Reach, direct.log10Reach);
        QVERIFY(std::abs(c.rnn.radius - 0.9) < 1e-12);
        const Tensor &probs = trace.tensor(names::attentionTensor({}, 1, "probs"));
        QCOMPARE(int(c.attention.size()), T);
        for (int j = 0; j < T; ++j)
            QCOMPARE(c.attention[j], probs.data()[(2 * T + T - 1) * T + j]);
        QCOMPARE(c.strongestKey, int(std::max_element(c.attention.begin(), c.attention.end()) - c.attention.begin()));
        const double n = std::min(d, kMaxRnnWidth);
        QCOMPARE(c.rnnWork, T * (n * n + n * d));
        QCOMPARE(c.attentionWork, 4.0 * T * d * d + 2.0 * T * T * d);
        QCOMPARE(compareRecurrence(*gpt2, trace, 1, 0, 4, 0.9).rnn.query, 4);
    }

    // ρ outside (0, 4], a row past the input, two stacks, a cancelled run and an input too long are refused.
    void refusesWhatItCannotDraw()
    {
        const auto gpt2 = std::make_shared<const Model>(Model::load(ATLAS_TEST_DATA "/gpt2_tiny"));
        const std::vector<int> tokens = {3, 17, 42};
        Engine e(gpt2, {tokens, {}, {}});
        e.runToEnd();
        QVERIFY_THROWS_EXCEPTION(Error, compareRecurrence(*gpt2, e.trace(), 0, 0, -1, 0.0));
        QVERIFY_THROWS_EXCEPTION(Error, compareRecurrence(*gpt2, e.trace(), 0, 0, -1, 4.5));
        QVERIFY_THROWS_EXCEPTION(Error, compareRecurrence(*gpt2, e.trace(), 0, 0, 3, 0.9));
        const std::atomic<bool> cancelled {true};
        QVERIFY_THROWS_EXCEPTION(Error, compareRecurrence(*gpt2, e.trace(), 0, 0, -1, 0.9, {}, &cancelled));
        const std::shared_ptr<const Model> s2s = loadModel("seq2seq-sort");
        QVERIFY_THROWS_EXCEPTION(Error, compareRecurrence(*s2s, e.trace(), 0, 0, -1, 0.9)); // refused before reading

        ViewSpec spec;
        spec.view = "recurrence";
        AnalysisContext c {std::make_shared<const Trace>(e.trace()), std::make_shared<const Program>(e.program()),
            RecurrenceAnalysis::kMaxTokens + 1, 2, true, {}};
        c.model = gpt2;
        QVERIFY(analysisRequest(spec, c).problem.find("Shorten the text") != std::string::npos);
        c.tokens = int(tokens.size());
        spec.query = 3;
        QVERIFY(analysisRequest(spec, c).problem.find("past the input") != std::string::npos);
        spec.query = -1;
        const AnalysisRequest r = analysisRequest(spec, c);
        QVERIFY2(r.problem.empty(), r.problem.c_str());
        std::string problem;
        const auto result = runAnalysisNow(r, &problem);
        QVERIFY2(dynamic_cast<const RecurrenceAnalysis *>(result.get()), problem.c_str());
    }
};

QTEST_GUILESS_MAIN(TestRnnReach)
#include "tst_rnnreach.moc"
