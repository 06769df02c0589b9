// Gradients by depth (gradients/gradientdepth.h): each block's norm is the norm of the backward pass's gradients of
// that block's matrices, found here by their names; a block's norm is the slope of the loss along its gradient,
// measured by finite differences of the forward pass; the targets are the objective's; and the two placements of the
// norm share the gradient among the blocks differently at initialisation.
#include "engine/engine.h"
#include "gradients/gradientdepth.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "testbundle.h"
#include "train/backprop.h"
#include "util/error.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <regex>

using namespace atlas;

namespace {

const std::string kSentence = "It is a truth universally acknowledged, that a single man in possession of a good "
                              "fortune, must be in want of a wife.";

// The sentence in the model's tokens, as much of it as the model's context holds.
Input sentenceFor(const Model &model)
{
    std::vector<int> tokens = tokenizerForModel(model)->encode(kSentence);
    tokens.resize(std::min(tokens.size(), size_t(model.config.context)));
    return Input {tokens, {}, {}};
}

// A question for the `reverse` model, whose loss counts the answer alone, and a wrong answer, so that the loss and
// its gradients are far from zero.
Input reverseQuestion()
{
    const std::string text = "pqrstuv>qwertyu";
    return Input {std::vector<int>(text.begin(), text.end()), {}, {}};
}

// The mean cross-entropy of the model's logits against `targets`, in double: the loss written out again.
double meanCrossEntropy(std::shared_ptr<const Model> model, const Input &input, const std::vector<int> &targets)
{
    Engine engine(model, input);
    engine.runToEnd();
    const Tensor &logits = engine.trace().find("logits")->tensor;
    const int64_t V = logits.dim(logits.rank() - 1);
    double sum = 0;
    int counted = 0;
    for (size_t t = 0; t < targets.size(); ++t) {
        if (targets[t] < 0)
            continue;
        const float *row = logits.data() + int64_t(t) * V;
        double largest = -INFINITY, total = 0;
        for (int64_t v = 0; v < V; ++v)
            largest = std::max(largest, double(row[v]));
        for (int64_t v = 0; v < V; ++v)
            total += std::exp(double(row[v]) - largest);
        sum += largest + std::log(total) - double(row[targets[t]]);
        ++counted;
    }
    return sum / counted;
}

} // namespace

class TestGradientDepth : public QObject
{
    Q_OBJECT

private slots:
    // GPT-2's layout: block l's attention matrices are h.l.attn.*.weight and its feed-forward's h.l.mlp.*.weight.
    void eachBlocksNormIsItsMatricesGradients()
    {
        const auto model = loadModel("reverse");
        const Input input = reverseQuestion();
        const GradientDepth g = gradientDepth(model, input);
        QCOMPARE(int(g.attention.size()), model->config.layers);
        QCOMPARE(int(g.feedForward.size()), model->config.layers);
        Engine engine(model, input);
        engine.runToEnd();
        const Gradients all = backward(*model, input, engine.trace(), gradientTargets(model->config, input));
        QCOMPARE(g.loss, all.loss);
        for (int l = 0; l < model->config.layers; ++l) {
            double attention = 0, feedForward = 0;
            const std::regex attn("h\\." + std::to_string(l) + "\\.attn\\..*\\.weight"),
                mlp("h\\." + std::to_string(l) + "\\.mlp\\..*\\.weight");
            for (const auto &[name, grad] : all.grads) {
                double s = 0;
                for (const float v : grad.values())
                    s += double(v) * v;
                if (std::regex_match(name, attn))
                    attention += s;
                if (std::regex_match(name, mlp))
                    feedForward += s;
            }
            QVERIFY(attention > 0 && feedForward > 0);
            QVERIFY(std::abs(g.attention[size_t(l)] - std::sqrt(attention)) <= 1e-9 * std::sqrt(attention));
            QVERIFY(std::abs(g.feedForward[size_t(l)] - std::sqrt(feedForward)) <= 1e-9 * std::sqrt(feedForward));
        }
    }

    // ‖G‖ is the loss's slope along G/‖G‖: moving block 1's feed-forward matrices by ±ε, ±2ε along it changes the
    // loss (written out again here, in double) by ε‖G‖ to first order; the 4-point central difference cancels the
    // curvature. The forward pass is float32, hence the 2 % tolerance.
    void aBlocksNormIsTheLossesSlopeAlongItsGradient()
    {
        const auto trained = loadModel("reverse");
        const Input input = reverseQuestion();
        const std::vector<int> targets = gradientTargets(trained->config, input);
        const int layer = 1;
        const GradientDepth g = gradientDepth(trained, input);
        Engine engine(trained, input);
        engine.runToEnd();
        const Gradients all = backward(*trained, input, engine.trace(), targets);
        const std::regex mlp("h\\." + std::to_string(layer) + "\\.mlp\\..*\\.weight");
        const double norm = g.feedForward[size_t(layer)], step = 1e-2;
        const auto lossAt = [&](double along) {
            auto moved = std::make_shared<Model>(*trained);
            for (auto &[name, tensor] : moved->parameters())
                if (std::regex_match(name, mlp)) {
                    *tensor = Tensor(*tensor); // its own copy: the model copy shares the weights' storage
                    const Tensor &grad = all.grads.at(name);
                    for (int64_t i = 0; i < tensor->numel(); ++i)
                        tensor->data()[i] += float(along * grad.data()[i] / norm);
                }
            return meanCrossEntropy(moved, input, targets);
        };
        const double slope
            = (8 * (lossAt(step) - lossAt(-step)) - (lossAt(2 * step) - lossAt(-2 * step))) / (12 * step);
        QVERIFY2(std::abs(slope - norm) <= 0.02 * norm,
            qPrintable(QString("slope %1 against the norm %2").arg(slope).arg(norm)));
    }

    void targetsAreTheObjectives()
    {
        // a task model's: what its task trains it to predict, the answer after reverse's '>' alone
        ModelConfig reverse;
        reverse.task = "reverse";
        QCOMPARE(gradientTargets(reverse, Input {{'a', 'b', '>', 'b', 'a'}, {}, {}}),
            (std::vector<int> {-1, -1, 'b', 'a', -1}));
        try {
            gradientDepth(loadModel("reverse"), sentenceFor(*loadModel("reverse")));
            QFAIL("a text without a question was accepted");
        } catch (const Error &e) {
            QVERIFY2(
                std::string(e.what()).find("the reverse task asks reverse to predict nothing") != std::string::npos,
                e.what());
        }
        ModelConfig causal;
        const Input input {{5, 6, 7, 8}, {3}, {}};
        QCOMPARE(gradientTargets(causal, input), (std::vector<int> {6, 7, -1, -1}));
        ModelConfig encoder;
        encoder.causal = false;
        QCOMPARE(gradientTargets(encoder, input), (std::vector<int> {5, 6, 7, -1}));
        QVERIFY_THROWS_EXCEPTION(Error, gradientDepth(loadModel("reverse"), Input {{65}, {}, {}}));
        QVERIFY(!gradientDepthProblem(*loadModel("seq2seq-sort")).empty());
        QVERIFY_THROWS_EXCEPTION(Error, gradientDepth(loadModel("seq2seq-sort"), Input {{65, 66}, {}, {}}));
    }

    // austen-bert (BERT's post-LN blocks) and austen-mlm (GPT-2's pre-LN blocks), both 4 blocks of 128 trained on the
    // same masked-LM task, at initialisation (σ = 0.02, their families' draw): post-LN's feed-forward gradients are
    // level across the blocks (measured: last over first 0.99), pre-LN's fall with depth (0.41) and are an order of
    // magnitude larger. The bounds leave room for any order of the sums.
    void thePlacementsDifferAtInitialisation()
    {
        const auto initial = [](const char *name) {
            const auto model = loadModel(name);
            return gradientDepth(model, sentenceFor(*model), FreshWeights {});
        };
        const GradientDepth post = initial("austen-bert"), pre = initial("austen-mlm");
        QCOMPARE(post.placement, LayerNormPlacement::Post);
        QCOMPARE(pre.placement, LayerNormPlacement::Pre);
        const double postGrowth = post.feedForward.back() / post.feedForward.front(),
                     preGrowth = pre.feedForward.back() / pre.feedForward.front();
        QVERIFY2(postGrowth > 0.8 && postGrowth < 1.25, qPrintable(QString::number(postGrowth)));
        QVERIFY2(preGrowth < 0.6, qPrintable(QString::number(preGrowth)));
        for (size_t l = 0; l < pre.feedForward.size(); ++l)
            QVERIFY(pre.feedForward[l] > 5 * post.feedForward[l]);
    }

    // Xavier-uniform (Glorot and Bengio 2010): every weight matrix within ±√(6 / (fan_in + fan_out)), spread as the
    // uniform's σ = a / √3; c_attn, Q, K and V fused, counted as its query's matrix, D + D; norms start at 1.
    void xavierDrawsEveryMatrixUniformly()
    {
        const ModelConfig c = loadModel("austen-mlm")->config;
        const Model xavier = Model::random(c, kInitialisationSeed, WeightInit::Xavier);
        const auto check = [&](const Tensor &w, double fans) {
            const double a = std::sqrt(6.0 / fans);
            double squares = 0;
            for (const float v : w.values()) {
                QVERIFY(std::abs(v) <= a);
                squares += double(v) * v;
            }
            const double sd = std::sqrt(squares / double(w.numel()));
            QVERIFY2(std::abs(sd - a / std::sqrt(3.0)) < 0.03 * a, qPrintable(QString("σ %1, a %2").arg(sd).arg(a)));
        };
        const double D = c.dModel, F = c.dFF, V = c.vocab;
        check(xavier.wte, V + D);
        check(xavier.blocks[0].weight(BlockPart::Qkv), D + D);
        check(xavier.blocks[0].weight(BlockPart::Out), D + D);
        check(xavier.blocks[3].weight(BlockPart::Up), D + F);
        check(xavier.blocks[3].weight(BlockPart::Down), F + D);
        QCOMPARE(xavier.blocks[0].normWeight(BlockPart::NormAttention).values()[0], 1.0f);
        QCOMPARE(xavier.blocks[0].bias(BlockPart::Up).values()[0], 0.0f);
    }

    // Xiong et al.'s setting: Xavier-initialised, deep. At 12 blocks of austen-bert's and austen-mlm's width, post-LN's
    // feed-forward gradients grow towards the output (measured: last over first 1.58) and pre-LN's fall (0.16); at
    // their own 4 blocks post-LN's are level (0.97). The bounds leave room for any order of the sums.
    void xavierAndDepthShowThePapersPicture()
    {
        const FreshWeights deep {WeightInit::Xavier, 12};
        const auto initial = [&](const char *name) {
            const auto model = loadModel(name);
            return gradientDepth(model, sentenceFor(*model), deep);
        };
        const GradientDepth post = initial("austen-bert"), pre = initial("austen-mlm");
        QCOMPARE(int(post.feedForward.size()), 12);
        QCOMPARE(post.init, WeightInit::Xavier);
        const double postGrowth = post.feedForward.back() / post.feedForward.front(),
                     preGrowth = pre.feedForward.back() / pre.feedForward.front();
        QVERIFY2(postGrowth > 1.25, qPrintable(QString::number(postGrowth)));
        QVERIFY2(preGrowth < 0.5, qPrintable(QString::number(preGrowth)));
        QVERIFY_THROWS_EXCEPTION(Error,
            gradientDepth(loadModel("austen-mlm"), sentenceFor(*loadModel("austen-mlm")), FreshWeights {{}, 49}));
    }
};

QTEST_GUILESS_MAIN(TestGradientDepth)
#include "tst_gradientdepth.moc"
