// An encoder-decoder in the app: the spec's two inputs (text = source, decoder_text) and its "site", the attention
// views drawing the site's tensors (cross-attention: decoder queries down, source keys across), the session
// opening, running and generating one, and the views and sites that cannot show it naming why.
#include "attentionmap/attentionview.h"
#include "heads/headsgridview.h"
#include "mask/maskview.h"
#include "neuron/neuron.h"
#include "neuron/neuronview.h"
#include "session/session.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "tokenlines/tokenlinesview.h"
#include "util/error.h"
#include "view/memoryanalysis.h"
#include "view/specrun.h"
#include "views/heatmapplot.h"
#include "viewtesting.h"

#include "ops/ops.h"
#include "positions/positionprofile.h"
#include "positions/positions.h"

#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include <optional>

using namespace atlas;

namespace {

// seq2seq-sort reading "dsfacdd" and having written ">acdddfs" (its sample): 7 source and 8 decoder tokens.
ViewSpec sortSpec(const std::string &view, const std::string &site)
{
    ViewSpec spec;
    spec.view = view;
    spec.model = "seq2seq-sort";
    spec.text = "dsfacdd";
    spec.decoderText = ">acdddfs";
    spec.site = site;
    spec.layer = 1;
    spec.head = 3;
    return spec;
}

std::string errorOf(const std::function<void()> &f)
{
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return {};
}

} // namespace

class TestEncoderDecoderViews : public QObject
{
    Q_OBJECT

private slots:
    void theSpecNamesBothInputsAndTheSite()
    {
        const ViewSpec spec = sortSpec("attention", "cross");
        QCOMPARE(ViewSpec::fromJson(spec.toJson(), "t"), spec);
        QCOMPARE(ViewSpec::fromJson(spec.toJson(true), "t"), spec);
        const std::string bad = errorOf([] { ViewSpec::fromJson(R"({"site": "crosss"})", "s.json"); });
        QVERIFY2(bad.find("s.json") != std::string::npos && bad.find("'site'") != std::string::npos
                && bad.find("cross") != std::string::npos,
            bad.c_str());
    }

    // The cross view input: decoder tokens for the rows, source tokens for the columns, [H, T, S] from the trace.
    void crossAttentionReadsDecoderQueriesAndSourceKeys()
    {
        const ViewInput input = testing::forSpec(sortSpec("attention", "cross"));
        QCOMPARE(input.tokens.join(""), QStringLiteral(">acdddfs"));
        QCOMPARE(input.keyTokens.join(""), QStringLiteral("dsfacdd"));
        QVERIFY(!input.causal);
        QString problem;
        const Tensor *probs = findHeadTensor(input, 1, "attn.probs", 3, &problem);
        QVERIFY2(probs != nullptr, qPrintable(problem));
        QCOMPARE(probs->shapeString(), std::string("[4, 8, 7]"));
        QCOMPARE(probs->data(), input.trace->tensor("dec.layer.1.cross.probs").data());

        AttentionView view;
        view.resize(900, 600);
        view.setInput(input);
        view.setSpec(sortSpec("attention", "cross"));
        QCOMPARE(view.plot()->matrixRows(), 8);
        QCOMPARE(view.plot()->matrixCols(), 7);
        // The decoder's first step ('>', about to write 'a') reads the source's 'a' (position 3) most.
        const ConstMatrixMap w = probs->slice(3);
        int best = 0;
        for (int k = 1; k < 7; ++k)
            best = w(0, k) > w(0, best) ? k : best;
        QCOMPARE(best, 3);
        view.plot()->replot();
        const QString hover = view.plot()->hoverTextAt(view.plot()->cellCenter(0, 3));
        QVERIFY2(hover.contains("query '>' (#0)") && hover.contains("key 'a' (#3)"), qPrintable(hover));
    }

    void theEncoderSiteReadsTheSourceBothWays()
    {
        const ViewInput input = testing::forSpec(sortSpec("attention", "encoder"));
        QCOMPARE(input.tokens.join(""), QStringLiteral("dsfacdd"));
        QCOMPARE(input.layers, 2);
        QVERIFY(!input.causal);
        QString problem;
        const Tensor *probs = findHeadTensor(input, 0, "attn.probs", 0, &problem);
        QVERIFY(probs != nullptr);
        QCOMPARE(probs->data(), input.trace->tensor("enc.layer.0.attn.probs").data());
        QVERIFY(probs->slice(0)(0, 6) > 0); // the first source token reads the last: no causal mask
        const ViewInput self = testing::forSpec(sortSpec("attention", "self"));
        QVERIFY(self.causal);
        QCOMPARE(findHeadTensor(self, 0, "attn.probs", 0, &problem)->data(),
            self.trace->tensor("dec.layer.0.attn.probs").data());
    }

    // Token lines: the decoder on the left, the source on the right, each line one weight of the tensor.
    void tokenLinesJoinDecoderTokensToSourceTokens()
    {
        ViewSpec spec = sortSpec("lines", "cross");
        const ViewInput input = testing::forSpec(spec);
        TokenLinesView view;
        view.resize(900, 600);
        view.setInput(input);
        view.setSpec(spec);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.tokenWindow(), std::make_pair(0, 8));
        QCOMPARE(view.keyWindow(), std::make_pair(0, 7));
        const ConstMatrixMap w = input.trace->tensor("dec.layer.1.cross.probs").slice(3);
        const auto segments = view.segments();
        QVERIFY(!segments.empty());
        for (const auto &s : segments) {
            QVERIFY(s.query < 8 && s.key < 7);
            QCOMPARE(s.weight, w(s.query, s.key));
        }
    }

    // The heads grid's thumbnails and the mask view's panels are [T, S]; a source padding position is the only
    // masked key, for every decoder query.
    void theGridAndTheMaskShowCrossAttention()
    {
        ViewSpec spec = sortSpec("heads", "cross");
        HeadsGridView grid;
        grid.resize(900, 700);
        grid.setInput(testing::forSpec(spec));
        grid.setSpec(spec);
        QVERIFY(!grid.thumbnail(1, 3).isNull());
        spec.view = "mask";
        spec.padding = {6};
        MaskView mask;
        mask.resize(1200, 500);
        mask.setInput(testing::forSpec(spec));
        mask.setSpec(spec);
        QCOMPARE(mask.maskPlot()->matrixRows(), 8);
        QCOMPARE(mask.maskPlot()->matrixCols(), 7);
        for (int q = 0; q < 8; ++q) {
            QVERIFY(std::isnan(mask.maskPlot()->displayedValue(q, 6)));
            QVERIFY(!std::isnan(mask.maskPlot()->displayedValue(q, 5)));
        }
    }

    // The Show box changes the site over the same trace: the thumbnails must follow it (they stayed the decoder's
    // self-attention while the title changed, issue 28).
    void theGridFollowsTheSiteOverTheSameTrace()
    {
        ViewSpec spec = sortSpec("heads", "cross");
        const ViewInput cross = testing::forSpec(spec);
        HeadsGridView grid;
        grid.resize(900, 700);
        grid.setInput(cross);
        grid.setSpec(spec);
        const QImage crossThumbnail = grid.thumbnail(1, 3);
        QVERIFY(!crossThumbnail.isNull());
        ViewInput self = cross;
        self.site = {names::kDecoderStack, false};
        spec.site = "self";
        grid.setInput(self);
        grid.setSpec(spec);
        QVERIFY(!grid.thumbnail(1, 3).isNull());
        QVERIFY(grid.thumbnail(1, 3) != crossThumbnail);
        grid.setInput(cross);
        spec.site = "cross";
        grid.setSpec(spec);
        QCOMPARE(grid.thumbnail(1, 3), crossThumbnail);
    }

    // The neuron view's terms of a cross-attention pair: the decoder's query against a source key, labelled so.
    void theNeuronViewShowsACrossAttentionPair()
    {
        ViewSpec spec = sortSpec("neuron", "cross");
        spec.query = 0;
        NeuronView view;
        view.resize(1200, 700);
        view.setInput(testing::forSpec(spec));
        view.setSpec(spec);
        QVERIFY(view.message().isEmpty());
        QCOMPARE(view.terms().key, 3); // at '>' the decoder writes 'a', and reads the source's 'a'
        QVERIFY(view.formula().startsWith("Cross-attention"));
        QVERIFY2(view.formula().contains("'>'") && view.formula().contains("'a'"), qPrintable(view.formula()));
        QCOMPARE(view.keyBox()->maximum(), 6); // the 7 source tokens
    }

    // The neuron view's key is checked against the keys of the site it draws: the 7 source tokens for cross-attention,
    // the 8 decoder tokens for the decoder's self-attention.
    void theNeuronKeyCountsTheSitesKeys()
    {
        for (const char *site : {"cross", "self"}) {
            ViewSpec spec = sortSpec("neuron", site);
            const SpecRun run = runSpec(spec);
            spec.set(views::neuron::kKey, 7);
            const std::string problem = drawProblem(spec, run, "spec");
            if (std::string(site) == "cross")
                QCOMPARE(QString::fromStdString(problem),
                    QStringLiteral("spec: key 'key': key 7 is outside the 7 source tokens (-1 picks the key weighted "
                                   "most)"));
            else
                QVERIFY2(problem.empty(), problem.c_str());
        }
    }

    void whatCannotBeShownIsNamed()
    {
        ViewSpec cross = sortSpec("attention", "cross");
        cross.model = "tiny-bytes";
        cross.decoderText.clear();
        std::string e = errorOf([&] { runSpec(cross); });
        QVERIFY2(
            e.find("key 'site'") != std::string::npos && e.find("encoder-decoder") != std::string::npos, e.c_str());
        ViewSpec noDecoder = sortSpec("attention", "self");
        noDecoder.decoderText.clear(); // and not the model's sample, which brings its own decoder input
        noDecoder.text = "dbca";
        e = errorOf([&] { runSpec(noDecoder); });
        QVERIFY2(e.find("decoder_text") != std::string::npos, e.c_str());
        ViewSpec oneStack = sortSpec("attention", "self");
        oneStack.model = "tiny-bytes";
        e = errorOf([&] { runSpec(oneStack); });
        QVERIFY2(
            e.find("key 'decoder_text'") != std::string::npos && e.find("one stack") != std::string::npos, e.c_str());
        for (const char *view : {"kernels", "inversion-error"}) {
            const ViewSpec spec = sortSpec(view, "self");
            const std::string problem = drawProblem(spec, runSpec(spec), "s.json");
            QVERIFY2(problem.find("one stack") != std::string::npos, problem.c_str());
        }
        const ViewSpec graph = sortSpec("memory-graph", "self"); // the computation graph chains both stacks
        const std::string graphProblem = drawProblem(graph, runSpec(graph), "s.json");
        QVERIFY2(graphProblem.empty(), graphProblem.c_str());
        ViewSpec layer = sortSpec("attention", "encoder");
        layer.layer = 2;
        const std::string problem = drawProblem(layer, runSpec(layer), "s.json");
        QVERIFY2(problem.find("2 encoder layers") != std::string::npos, problem.c_str());
    }

    // The memory timeline trains a step of both stacks: the source for the encoder, the decoder input's next tokens as
    // targets; plain and checkpointing run, reversible blocks are refused (standard blocks).
    void theMemoryTimelineTrainsBothStacks()
    {
        const ViewInput memory = testing::forSpec(sortSpec("memory-timeline", "self"));
        QVERIFY2(memory.analysis.problem.isEmpty(), qPrintable(memory.analysis.problem));
        const MemoryTimeline &t = memory.analysisAs<MemoryTimelineAnalysis>()->timeline;
        QCOMPARE(t.sourceTokens, 7);
        QCOMPARE(t.tokens, 8);
        QCOMPARE(t.encoderLayers, 2);
        QCOMPARE(int(t.strategies.size()), 3);
        for (int s : {0, 1}) {
            QVERIFY2(t.strategies[size_t(s)].problem.empty(), t.strategies[size_t(s)].problem.c_str());
            QVERIFY(t.strategies[size_t(s)].peakActivationBytes > 0);
            bool encoder = false, decoder = false; // both stacks' blocks ran, each backward too
            for (const MemoryOp &op : t.strategies[size_t(s)].ops) {
                encoder = encoder || (op.phase == MemoryPhase::Backward && op.name.rfind("enc.layer.0.", 0) == 0);
                decoder = decoder || (op.phase == MemoryPhase::Backward && op.name.rfind("dec.layer.0.", 0) == 0);
            }
            QVERIFY(encoder && decoder);
        }
        QVERIFY(t.strategies[1].peakActivationBytes < t.strategies[0].peakActivationBytes);
        QVERIFY(!t.strategies[2].problem.empty());
    }

    // Each stack's positions: seq2seq-sort's shared learned table from either stack; T5's encoder reads its own
    // bucket table both ways, its decoder the decoder's table behind the query only; cross-attention has none.
    void thePositionsViewFollowsTheStack()
    {
        const ViewInput sorted = testing::forSpec(sortSpec("positions", "encoder"));
        QVERIFY2(sorted.analysis.problem.isEmpty(), qPrintable(sorted.analysis.problem));
        QCOMPARE(sorted.analysisAs<PositionsAnalysis>()->profile.length, 7); // the source's tokens
        const ViewInput cross = testing::forSpec(sortSpec("positions", "cross"));
        QVERIFY(cross.analysis.problem.contains("Cross-attention adds no positions"));
        ViewSpec t5;
        t5.view = "positions";
        t5.model = ATLAS_TEST_DATA "/t5_tiny";
        t5.tokens = {5, 17, 42, 8, 33, 25, 63, 11, 2, 9, 40, 12, 7, 1};
        t5.decoderTokens = {0, 21, 4, 56, 30, 14, 3, 48, 19};
        t5.layer = 1;
        t5.head = 2;
        for (const char *site : {"encoder", "self"}) {
            t5.site = site;
            const ViewInput input = testing::forSpec(t5);
            QVERIFY2(input.analysis.problem.isEmpty(), qPrintable(input.analysis.problem));
            const PositionProfile &p = input.analysisAs<PositionsAnalysis>()->profile;
            const bool encoder = t5.site == "encoder";
            QCOMPARE(p.length, encoder ? 14 : 9);
            QVERIFY2(p.formula.find(encoder ? "the encoder's table" : "the decoder's table") != std::string::npos
                    && p.formula.find("not divided by √d") != std::string::npos,
                p.formula.c_str());
            // the profile's matrix is the traced bias of that stack, and its curve the stack's own table
            const Tensor &bias = input.trace->tensor(encoder ? "enc.layer.1.attn.bias" : "dec.layer.1.attn.bias");
            QCOMPARE(p.encoding.data()[3 * p.length + 0], bias.slice(2)(3, 0));
            const Tensor &table = encoder ? input.model->encoderRelativeBias : input.model->relativeBias;
            const int far = ops::t5Bucket(-(p.length - 1), encoder, 8, 12); // past max_distance 12 in the encoder
            QCOMPARE(float(p.biasByDistance[2].back()), table.matrix()(far, 2));
        }
    }

    // The app: the model's sample opens as source and decoder input, the site box's spec shows cross-attention,
    // and Generate writes the sorted letters from the source with the KV cache, greedily or sampled.
    void theSessionOpensRunsAndGeneratesAnEncoderDecoder()
    {
        Session session;
        session.openModel("seq2seq-sort", true);
        QTRY_VERIFY_WITH_TIMEOUT(session.trace() != nullptr && !session.busy(), 30000);
        const Tokenizer &tokenizer = *session.tokenizer();
        QCOMPARE(tokenizer.decode(session.input().source), session.model()->config.sample);
        QCOMPARE(tokenizer.decode(session.input().tokens), session.model()->config.decoderSample);
        ViewSpec spec = session.spec();
        spec.site = "cross";
        session.setSpec(spec);
        QVERIFY(session.viewInput().site.cross);
        QVERIFY(session.trace()->contains("dec.layer.1.cross.probs"));

        session.setText("dbca", ">");
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy() && session.input().tokens.size() == 1, 30000);
        QCOMPARE(tokenizer.decode(session.input().source), std::string("dbca"));
        std::optional<GenerationReport> report;
        connect(&session, &Session::generationFinished, this, [&](const GenerationReport &r) { report = r; });
        session.generate(10, {});
        QTRY_VERIFY_WITH_TIMEOUT(report.has_value(), 30000);
        QCOMPARE(report->continuation, QStringLiteral("abcd."));
        // The KV cache after '.': 6 decoder rows (2 layers × K and V × 64 floats: 6 KiB) and the fixed cross-attention
        // keys and values of the 4 source tokens (4 KiB).
        QCOMPARE(report->tokens.back().cachedPositions, 6);
        QCOMPARE(report->tokens.back().cacheKiB, 10.0);
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy() && session.input().tokens.size() == 6, 30000);
        QCOMPARE(session.spec().decoderText, std::string(">abcd."));
        session.setText("dbca", ">");
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy() && session.input().tokens.size() == 1, 30000);
        report.reset();
        session.generate(10, {1.0f, 0, 5}); // sampled: temperature 1, seed 5
        QTRY_VERIFY_WITH_TIMEOUT(report.has_value(), 30000);
        QVERIFY(!report->tokens.empty());
        QTRY_VERIFY_WITH_TIMEOUT(!session.busy(), 30000);

        QSignalSpy errors(&session, &Session::errorOccurred);
        session.setText("dbca", "");
        QCOMPARE(errors.count(), 1);
        QVERIFY(errors.at(0).at(0).toString().contains("Decoder box"));
    }
};

QTEST_MAIN(TestEncoderDecoderViews)
#include "tst_encoderdecoderviews.moc"
