// The memory lab's numbers beyond the timeline: the computation graph's node states read from a recorded step
// (memory/computationgraph.h), the sweeps over depth and over checkpointing's k with the curves fitted to them
// (memory/memorysweep.h), and the analysis requests of the memory views (view/analysisrequests.h).
#include "analysistesting.h"
#include "inversionerror/inversionerror.h"
#include "memory/computationgraph.h"
#include "memory/memorysweep.h"
#include "memorydepth/memorydepth.h"
#include "memorytradeoff/memorytradeoff.h"
#include "model/builtinmodels.h"
#include "model/model.h"
#include "testbundle.h"
#include "util/error.h"
#include "view/viewanalysis.h"

#include <QTest>

#include <cmath>

using namespace atlas;
using MemorySweepPoint = atlas::SweepPoint; // atlas::attention has a SweepPoint too, in the same test bundle
using atlas::testing::contextFor;

namespace {

ModelConfig smallShape()
{
    ModelConfig c;
    c.layers = 1;
    c.heads = 2;
    c.dModel = 32;
    c.dFF = 128;
    c.vocab = 256;
    c.context = 64;
    c.tokenizer = "bytes";
    return c;
}

// One step of a random model of the small shape at `layers` under checkpointing every `k` (0: plain), or reversible.
TimelineStrategy stepOf(int layers, MemoryStrategy strategy, int k)
{
    Model model = modelAtDepth(smallShape(), layers, strategy == MemoryStrategy::Reversible);
    const MemoryTimeline t = memoryTimeline(model, randomSequences(model.config, 12, 1).front(), k, 1);
    return t.strategies[size_t(strategy)];
}

// The last op of the forward pass.
int endOfForward(const TimelineStrategy &s)
{
    int last = -1;
    for (int i = 0; i < int(s.ops.size()); ++i)
        if (s.ops[size_t(i)].phase == MemoryPhase::Forward)
            last = i;
    return last;
}

std::vector<NodeState> statesAt(const TimelineStrategy &s, int layers, int op)
{
    std::vector<NodeState> states;
    for (const GraphNode &n : computationGraphAt(s, layers, op))
        states.push_back(n.state);
    return states;
}

} // namespace

class TestMemoryLab : public QObject
{
    Q_OBJECT

private slots:
    void graphAfterTheForwardPass()
    {
        using S = NodeState;
        // plain keeps every node
        const TimelineStrategy plain = stepOf(4, MemoryStrategy::Plain, 0);
        const std::vector<GraphNode> nodes = computationGraphAt(plain, 4, endOfForward(plain) + 1);
        QCOMPARE(int(nodes.size()), 6);
        QCOMPARE(nodes.front().label, std::string("embedding"));
        QCOMPARE(nodes[1].label, std::string("block 0"));
        for (size_t i = 0; i < 5; ++i)
            QVERIFY2(nodes[i].state == S::Kept, nodes[i].label.c_str());
        // checkpointing every 2 of 4 blocks keeps the boundaries (the embedding's output and block 1's) and the head's
        // input (block 3's output); blocks 0 and 2 ran and hold nothing
        const TimelineStrategy checkpoint = stepOf(4, MemoryStrategy::Checkpoint, 2);
        QCOMPARE(statesAt(checkpoint, 4, endOfForward(checkpoint) + 1),
            (std::vector<S> {S::Kept, S::Dropped, S::Kept, S::Dropped, S::Kept, S::Kept}));
        // reversible blocks keep only the last block's two streams (and the head)
        const TimelineStrategy reversible = stepOf(4, MemoryStrategy::Reversible, 0);
        QCOMPARE(statesAt(reversible, 4, endOfForward(reversible) + 1),
            (std::vector<S> {S::Dropped, S::Dropped, S::Dropped, S::Dropped, S::Kept, S::Kept}));
        // before the step nothing has run; after it every backward pass is done
        for (const TimelineStrategy *s : {&plain, &checkpoint, &reversible}) {
            QCOMPARE(statesAt(*s, 4, -1), std::vector<S>(6, S::Waiting));
            QCOMPARE(statesAt(*s, 4, int(s->ops.size())), std::vector<S>(6, S::Done));
        }
    }

    void graphFollowsEveryOp()
    {
        const TimelineStrategy s = stepOf(4, MemoryStrategy::Checkpoint, 2);
        const std::vector<int> opNodes = nodesOfOps(s.ops, 4);
        bool sawRecompute = false, sawRecomputedHeld = false;
        for (int op = 0; op < int(s.ops.size()); ++op) {
            const std::vector<GraphNode> nodes = computationGraphAt(s, 4, op);
            // the node of the op at the cursor is the one active, in the op's phase
            const int active = opNodes[size_t(op)];
            if (active >= 0) {
                const NodeState expected = s.ops[size_t(op)].phase == MemoryPhase::Forward ? NodeState::Computing
                    : s.ops[size_t(op)].phase == MemoryPhase::Recompute                    ? NodeState::Recomputing
                                                                                           : NodeState::Backward;
                QCOMPARE(nodes[size_t(active)].state, expected);
                sawRecompute = sawRecompute || expected == NodeState::Recomputing;
            }
            // every stored and recomputed byte live at the op belongs to some node
            const int point = s.pointAtOp(op);
            int64_t stored = 0, recomputed = 0;
            for (const GraphNode &n : nodes) {
                stored += n.storedBytes;
                recomputed += n.recomputedBytes;
                sawRecomputedHeld = sawRecomputedHeld || n.state == NodeState::Recomputed;
            }
            if (point >= 0) {
                QCOMPARE(double(stored), s.live[size_t(MemoryCategory::StoredActivations)][size_t(point)]);
                QCOMPARE(double(recomputed), s.live[size_t(MemoryCategory::RecomputedActivations)][size_t(point)]);
            }
        }
        // a segment of two blocks is recomputed, and the lower block holds its activations while the upper one runs
        // its backward pass
        QVERIFY(sawRecompute);
        QVERIFY(sawRecomputedHeld);
        QVERIFY(computationGraphAt(stepOf(2, MemoryStrategy::Plain, 0), 2, 0).size() == 4);
    }

    // An encoder–decoder is one chain: the embedding, the encoder's blocks, the decoder's, the head. The encoder runs
    // forward before the decoder, and its backward pass after the decoder's.
    void encoderDecoderGraphIsOneChain()
    {
        const Model model = Model::load(ATLAS_TEST_DATA "/seq2seq_tiny");
        const int E = model.config.encoderLayers, L = model.config.layers, n = E + L + 2;
        QVERIFY(E > 0 && L > 0);
        const MemoryTimeline t = memoryTimeline(model, randomSequences(model.config, 9, 1).front(), 1, 1);
        for (const MemoryStrategy strategy : {MemoryStrategy::Plain, MemoryStrategy::Checkpoint}) {
            const TimelineStrategy &s = t.strategies[size_t(strategy)];
            const std::vector<GraphNode> nodes = computationGraphAt(s, L, endOfForward(s) + 1, E);
            QCOMPARE(int(nodes.size()), n);
            QCOMPARE(nodes[1].label, std::string("encoder block 0"));
            QCOMPARE(nodes[size_t(E + 1)].tag, std::string("d0"));
            const std::vector<int> opNodes = nodesOfOps(s.ops, L, E);
            int lastEncoderForward = -1, firstDecoderForward = -1, lastDecoderBackward = -1, firstEncoderBackward = -1;
            for (int op = 0; op < int(s.ops.size()); ++op) {
                const int node = opNodes[size_t(op)];
                const bool encoder = node >= 1 && node <= E, decoder = node > E && node <= E + L;
                if (s.ops[size_t(op)].phase == MemoryPhase::Forward) {
                    lastEncoderForward = encoder ? op : lastEncoderForward;
                    firstDecoderForward = decoder && firstDecoderForward < 0 ? op : firstDecoderForward;
                }
                if (s.ops[size_t(op)].phase == MemoryPhase::Backward) {
                    lastDecoderBackward = decoder ? op : lastDecoderBackward;
                    firstEncoderBackward = encoder && firstEncoderBackward < 0 ? op : firstEncoderBackward;
                }
                // every stored byte live at the op belongs to some node
                const int point = s.pointAtOp(op);
                int64_t stored = 0;
                for (const GraphNode &node : computationGraphAt(s, L, op, E))
                    stored += node.storedBytes;
                if (point >= 0)
                    QCOMPARE(double(stored), s.live[size_t(MemoryCategory::StoredActivations)][size_t(point)]);
            }
            QVERIFY(lastEncoderForward >= 0 && lastEncoderForward < firstDecoderForward);
            QVERIFY(lastDecoderBackward >= 0 && lastDecoderBackward < firstEncoderBackward);
            std::vector<NodeState> done;
            for (const GraphNode &node : computationGraphAt(s, L, int(s.ops.size()), E))
                done.push_back(node.state);
            QCOMPARE(done, std::vector<NodeState>(size_t(n), NodeState::Done));
        }
        // plain keeps every node after the forward pass
        const TimelineStrategy &plain = t.strategies[size_t(MemoryStrategy::Plain)];
        for (const GraphNode &node : computationGraphAt(plain, L, endOfForward(plain) + 1, E))
            QVERIFY2(node.state == NodeState::Kept, node.label.c_str());
    }

    // A shape that cannot have reversible blocks (a Llama layout; an encoder–decoder, deepened in both stacks) is swept
    // under plain and checkpointing, and says why reversible is missing.
    void sweepsLeaveOutWhatTheShapeCannotRun_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("why");
        QTest::newRow("Llama layout") << "llama_tiny"
                                      << "one stack of dense blocks";
        QTest::newRow("encoder-decoder") << "seq2seq_tiny"
                                         << "encoder–decoder";
    }
    void sweepsLeaveOutWhatTheShapeCannotRun()
    {
        QFETCH(QString, model);
        QFETCH(QString, why);
        const ModelConfig shape = Model::load((ATLAS_TEST_DATA "/" + model).toStdString()).config;
        const QString problem = QString::fromStdString(reversibleProblem(shape));
        QVERIFY2(problem.contains(why), qPrintable(problem));
        QVERIFY(reversibleProblem(smallShape()).empty());
        const Model deeper = modelAtDepth(shape, 3, false);
        QCOMPARE(deeper.config.layers, 3);
        QCOMPARE(deeper.config.encoderLayers, shape.isEncoderDecoder() ? 3 : 0);
        SweepSettings settings;
        settings.tokens = 8;
        settings.repeat = 0;
        const std::vector<MemorySweepPoint> points = sweepDepths(shape, {1, 2}, settings);
        QCOMPARE(int(points.size()), 4);
        for (const MemorySweepPoint &p : points)
            QVERIFY(p.strategy != MemoryStrategy::Reversible && p.peakActivationBytes > 0);
        QVERIFY(points[2].peakActivationBytes > points[0].peakActivationBytes); // plain at depth 2 against 1
        const std::vector<MemorySweepPoint> ks = sweepCheckpointIntervals(shape, 2, settings);
        QCOMPARE(int(ks.size()), 3); // plain, k = 1, k = 2
    }

    void depthSweepGrowsAsTheLecturesSay()
    {
        SweepSettings settings;
        settings.tokens = 16;
        settings.repeat = 0;
        int told = 0;
        settings.measured = [&told](const MemorySweepPoint &) { ++told; };
        const std::vector<MemorySweepPoint> points = sweepDepths(smallShape(), {1, 4, 16}, settings);
        QCOMPARE(int(points.size()), 9);
        QCOMPARE(told, 9);
        const auto peak = [&](int depth, MemoryStrategy s) {
            for (const MemorySweepPoint &p : points)
                if (p.depth == depth && p.strategy == s)
                    return double(p.peakActivationBytes);
            return -1.0;
        };
        const double plainGrowth = peak(16, MemoryStrategy::Plain) / peak(4, MemoryStrategy::Plain);
        const double checkpointGrowth = peak(16, MemoryStrategy::Checkpoint) / peak(4, MemoryStrategy::Checkpoint);
        QVERIFY2(plainGrowth > 3.0, qPrintable(QString::number(plainGrowth))); // 4× the blocks
        QVERIFY2(checkpointGrowth > 1.3 && checkpointGrowth < 2.6, qPrintable(QString::number(checkpointGrowth)));
        QCOMPARE(peak(16, MemoryStrategy::Reversible), peak(1, MemoryStrategy::Reversible)); // flat
        for (const MemorySweepPoint &p : points) {
            QVERIFY(p.stepMs > 0 && p.recordedStepMs > 0);
            QCOMPARE(p.checkpointEvery,
                p.strategy == MemoryStrategy::Checkpoint ? int(std::ceil(std::sqrt(double(p.depth)))) : 0);
        }
        // the fits pass through the plain points (a straight line in L) and give reversible no slope
        const DepthFit plain = fitDepth(points, MemoryStrategy::Plain);
        for (int depth : {1, 4, 16})
            QVERIFY(std::abs(plain.at(MemoryStrategy::Plain, depth) - peak(depth, MemoryStrategy::Plain))
                < 0.02 * peak(depth, MemoryStrategy::Plain));
        const DepthFit reversible = fitDepth(points, MemoryStrategy::Reversible);
        QCOMPARE(reversible.slope, 0.0);
        QCOMPARE(reversible.constant, peak(1, MemoryStrategy::Reversible));
    }

    void fitRecoversAKnownCurve()
    {
        std::vector<MemorySweepPoint> points;
        for (int depth : {1, 4, 9, 25}) {
            MemorySweepPoint p;
            p.depth = depth;
            p.strategy = MemoryStrategy::Checkpoint;
            p.peakActivationBytes = 1000 + 300 * int64_t(std::lround(std::sqrt(double(depth))));
            points.push_back(p);
        }
        const DepthFit fit = fitDepth(points, MemoryStrategy::Checkpoint);
        QVERIFY(std::abs(fit.constant - 1000) < 1e-6 && std::abs(fit.slope - 300) < 1e-6);
        QCOMPARE(depthGrowth(MemoryStrategy::Plain, 9), 9.0);
        QCOMPARE(depthGrowth(MemoryStrategy::Checkpoint, 9), 3.0);
        QCOMPARE(depthGrowth(MemoryStrategy::Reversible, 9), 0.0);
        QCOMPARE(fitDepth({}, MemoryStrategy::Plain).slope, 0.0);
    }

    void checkpointIntervalsFromOneToL()
    {
        SweepSettings settings;
        settings.tokens = 16;
        settings.repeat = 0;
        const std::vector<MemorySweepPoint> points = sweepCheckpointIntervals(smallShape(), 6, settings);
        QCOMPARE(int(points.size()), 8);
        QCOMPARE(points.front().strategy, MemoryStrategy::Plain);
        QCOMPARE(points.back().strategy, MemoryStrategy::Reversible);
        for (int k = 1; k <= 6; ++k) {
            QCOMPARE(points[size_t(k)].strategy, MemoryStrategy::Checkpoint);
            QCOMPARE(points[size_t(k)].checkpointEvery, k);
            QVERIFY(points[size_t(k)].peakActivationBytes <= points.front().peakActivationBytes);
        }
        // a cancelled sweep stops between points
        std::atomic<bool> cancel {true};
        settings.cancel = &cancel;
        QVERIFY(sweepCheckpointIntervals(smallShape(), 6, settings).empty());
    }

    void modelAtDepthKeepsTheShape()
    {
        ModelConfig shape = smallShape();
        shape.experts = 2;
        shape.moeLayers = {0, 3};
        const Model deep = modelAtDepth(shape, 4, false);
        QCOMPARE(deep.config.layers, 4);
        QCOMPARE(deep.config.moeLayers, (std::vector<int> {0, 3}));
        const Model shallow = modelAtDepth(shape, 2, true);
        QCOMPARE(shallow.config.moeLayers, (std::vector<int> {0}));
        QVERIFY(shallow.config.reversible);
        QCOMPARE(shallow.config.dModel, 32);
        shape.moeLayers = {3};
        QCOMPARE(modelAtDepth(shape, 2, false).config.experts, 0);
        QVERIFY_THROWS_EXCEPTION(Error, modelAtDepth(shape, 0, false));
    }

    void requestsKeyedAndChecked()
    {
        const auto model = loadModel("reverse");
        ViewSpec spec;
        spec.view = "memory-depth";
        spec.depth = 4;
        const AnalysisContext c = contextFor(model, {97, 98, 99, 62, 99, 98, 97});
        const AnalysisRequest depth = analysisRequest(spec, c);
        QVERIFY2(depth.problem.empty() && depth.run, depth.problem.c_str());
        spec.depth = 8;
        QVERIFY(analysisRequest(spec, c).key != depth.key);
        spec.depth = 4;
        std::string why;
        const auto result = runAnalysisNow(depth, &why);
        const auto *sweep = dynamic_cast<const MemoryDepthAnalysis *>(result.get());
        QVERIFY2(sweep, why.c_str());
        QCOMPARE(int(sweep->points.size()), 9); // depths 1, 2, 4
        QCOMPARE(depth.settings, analysisSettings(spec)); // what the view compares with its own spec's
        QVERIFY(depth.settings.find("\"depth\":4") != std::string::npos);
        spec.cursor = 3; // a key the sweep does not read: the same result
        QCOMPARE(analysisRequest(spec, c).key, depth.key);
        spec.cursor = -1;
        QVERIFY(sweep->plain.slope > 0);
        spec.view = "memory-tradeoff";
        spec.ffnChunks = 100;
        QVERIFY(QString::fromStdString(analysisRequest(spec, c).problem).contains("ffn_chunks 100"));
        spec.ffnChunks = 1;
        // the graph shares the timeline's recording
        spec.view = "memory-graph";
        ViewSpec timeline = spec;
        timeline.view = "memory-timeline";
        QCOMPARE(analysisRequest(spec, c).key, analysisRequest(timeline, c).key);
        // inversion: the model's own weights need reversible blocks
        spec.view = "inversion-error";
        spec.depth = 0;
        QVERIFY(QString::fromStdString(analysisRequest(spec, c).problem).contains("standard blocks"));
        QVERIFY(!analysisRequest(spec, contextFor(model, {97})).problem.empty());
    }

    // Heavy work is refused before it starts, with its estimate and the budget it is over; a lifted budget runs it.
    void heavyWorkIsRefusedWithItsEstimate()
    {
        const auto model = loadModel("reverse");
        ViewSpec spec;
        spec.depth = 64;
        AnalysisContext c = contextFor(model, {97, 98, 99, 62, 99, 98, 97});
        c.budget.flops = 1e6;
        for (const char *view : {"memory-depth", "memory-tradeoff", "memory-timeline"}) {
            spec.view = view;
            const AnalysisRequest refused = analysisRequest(spec, c);
            const QString problem = QString::fromStdString(refused.problem);
            QVERIFY2(refused.overBudget && !refused.run, view);
            QVERIFY2(problem.contains(" of work, over the work budget of 1.0 MFLOP; shorten the input"),
                qPrintable(problem));
        }
        QVERIFY(
            QString::fromStdString(analysisRequest(spec, c).problem).startsWith("Three training steps of 7 tokens"));
        spec.view = "memory-depth";
        QVERIFY(QString::fromStdString(analysisRequest(spec, c).problem)
                    .startsWith("The depth sweep to 64 layers at 7 tokens is about "));
        c.budget = WorkBudget {};
        c.budget.bytes = 1024;
        const QString memory = QString::fromStdString(analysisRequest(spec, c).problem);
        QVERIFY2(memory.contains("at once, over the memory budget of 1.00 KiB"), qPrintable(memory));
        c.budget = WorkBudget::unbounded();
        QVERIFY(analysisRequest(spec, c).run);
    }

    void inversionErrorOfTheReversibleModel()
    {
        const auto model = loadModel("reverse-rev");
        ViewSpec spec;
        spec.view = "inversion-error";
        spec.depth = 0;
        std::string why;
        const auto result
            = runAnalysisNow(analysisRequest(spec, contextFor(model, {97, 98, 99, 100, 62, 100, 99, 98, 97})), &why);
        const auto *a = dynamic_cast<const InversionErrorAnalysis *>(result.get());
        QVERIFY2(a, why.c_str());
        QVERIFY(a->ownWeights);
        QCOMPARE(a->depth, model->config.layers);
        QCOMPARE(int(a->errors.size()), 4);
        QCOMPARE(a->errors[0].precision, StreamPrecision::Double);
        double worst[4] = {};
        for (int p = 0; p < 4; ++p)
            for (double e : a->errors[size_t(p)].maxError)
                worst[p] = std::max(worst[p], e);
        QVERIFY(worst[0] <= 1e-12); // double rebuilds to 1e-12
        QVERIFY(worst[1] < worst[2] && worst[2] < worst[3]); // float32 < float16 < bfloat16
        // a random reversible model of its shape at another depth
        spec.depth = 6;
        const auto deeper = runAnalysisNow(analysisRequest(spec, contextFor(model, {97, 98, 99, 62})), &why);
        const auto *b = dynamic_cast<const InversionErrorAnalysis *>(deeper.get());
        QVERIFY2(b, why.c_str());
        QVERIFY(!b->ownWeights);
        QCOMPARE(int(b->errors[1].maxError.size()), 6);
    }
};

QTEST_GUILESS_MAIN(TestMemoryLab)
#include "tst_memorylab.moc"
