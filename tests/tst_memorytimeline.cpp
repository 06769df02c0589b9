// The memory timeline's numbers (memory/memorytimeline.h) and its analysis request (view/viewanalysis.h): one real
// training step per strategy, each point the live bytes after one allocation or free, the phases in order, the peak
// where the live bytes are highest; a reversible step only on a reversible model; the cursor moves without a rerun.
#include "analysistesting.h"
#include "memory/memorytimeline.h"
#include "model/builtinmodels.h"
#include "testbundle.h"
#include "view/memoryanalysis.h"

#include <QTest>

#include <numeric>

using namespace atlas;
using atlas::testing::contextFor;

namespace {

int64_t totalAt(const TimelineStrategy &s, int point)
{
    double total = 0;
    for (const auto &category : s.live)
        total += category[size_t(point)];
    return int64_t(total);
}

} // namespace

class TestMemoryTimeline : public QObject
{
    Q_OBJECT

private slots:
    void threeStrategiesOfOneStep()
    {
        const auto model = loadModel("reverse-rev");
        Input input;
        input.tokens = {97, 98, 99, 100, 101, 62, 101, 100, 99, 98, 97};
        const MemoryTimeline t = memoryTimeline(*model, nextTokenSequence(input), 1, 1);
        QCOMPARE(int(t.strategies.size()), 3);
        QCOMPARE(t.strategies[1].label, std::string("checkpoint (k = 1)"));
        int64_t highest = 0;
        for (const TimelineStrategy &s : t.strategies) {
            QVERIFY2(s.problem.empty(), s.problem.c_str());
            QVERIFY(!s.x.empty());
            QVERIFY(std::is_sorted(s.x.begin(), s.x.end()));
            // the peak point has the most live bytes, and they are the recording's peak
            int best = 0;
            for (int i = 0; i < int(s.x.size()); ++i)
                if (totalAt(s, i) > totalAt(s, best))
                    best = i;
            QCOMPARE(s.peakPoint, best);
            QCOMPARE(totalAt(s, s.peakPoint), s.peakBytes);
            QCOMPARE(s.liveBytesAt(s.peakPoint), s.peakBytes); // what the timeline view prints
            QCOMPARE(s.liveAt(s.peakPoint), s.peakLive);
            QCOMPARE(s.liveBytesAt(-1), int64_t(0)); // before the first event
            // phases: contiguous, covering every op, setup first and the optimizer last
            QCOMPARE(s.phases.front().phase, MemoryPhase::Setup);
            QCOMPARE(s.phases.back().phase, MemoryPhase::Optimizer);
            for (size_t p = 1; p < s.phases.size(); ++p)
                QCOMPARE(s.phases[p].firstOp, s.phases[p - 1].endOp);
            QCOMPARE(s.phases.back().endOp, int(s.ops.size()));
            // the parameters are live from start to end
            QVERIFY(s.live[size_t(MemoryCategory::Parameters)].back() > 0);
            QVERIFY(s.peakActivationBytes > 0 && s.predictedActivationBytes > 0);
            highest = std::max(highest, s.peakBytes);
        }
        QCOMPARE(t.maxBytes, highest);
        const auto hasPhase = [](const TimelineStrategy &s, MemoryPhase phase) {
            return std::any_of(
                s.phases.begin(), s.phases.end(), [phase](const TimelinePhase &p) { return p.phase == phase; });
        };
        QVERIFY(!hasPhase(t.strategies[0], MemoryPhase::Recompute));
        QVERIFY(hasPhase(t.strategies[1], MemoryPhase::Recompute));
        QVERIFY(hasPhase(t.strategies[2], MemoryPhase::Recompute));
        // plain keeps the most activations, reversible the fewest
        QVERIFY(t.strategies[0].peakActivationBytes > t.strategies[2].peakActivationBytes);
        QCOMPARE(t.strategies[1].pointAtOp(-1), -1);
        const int last = int(t.strategies[1].x.size()) - 1;
        QCOMPARE(t.strategies[1].pointAtOp(int(t.strategies[1].ops.size())), last);
    }

    void standardModelHasNoReversibleStep()
    {
        const auto model = loadModel("reverse");
        Input input;
        input.tokens = {97, 98, 99, 62};
        const MemoryTimeline t = memoryTimeline(*model, nextTokenSequence(input), 0, 2);
        QCOMPARE(int(t.strategies.size()), 3);
        QVERIFY(t.strategies[0].problem.empty() && t.strategies[1].problem.empty());
        QVERIFY(QString::fromStdString(t.strategies[2].problem).contains("standard blocks"));
        QVERIFY(t.strategies[2].x.empty());
        QCOMPARE(t.strategies[1].options.checkpointEvery, 0); // ⌈√2⌉ = 2
        QCOMPARE(t.strategies[1].label, std::string("checkpoint (k = 2)"));
    }

    void analysisKeyIgnoresTheCursor()
    {
        const auto model = loadModel("reverse-rev");
        ViewSpec spec;
        spec.view = "memory-timeline";
        const AnalysisContext c = contextFor(model, {97, 98, 62, 98, 97});
        const AnalysisRequest a = analysisRequest(spec, c);
        QVERIFY(a.problem.empty() && a.run);
        spec.cursor = 12;
        QCOMPARE(analysisRequest(spec, c).key, a.key);
        spec.checkpointEvery = 1;
        QVERIFY(analysisRequest(spec, c).key != a.key);
        spec.checkpointEvery = 3;
        const QString problem = QString::fromStdString(analysisRequest(spec, c).problem);
        QVERIFY2(problem.contains("checkpoint_every 3") && problem.contains("1..2"), qPrintable(problem));
        spec.checkpointEvery = 0;
        QVERIFY(!analysisRequest(spec, contextFor(model, {97})).problem.empty());
        std::string why;
        const auto result = runAnalysisNow(a, &why);
        const auto *timeline = dynamic_cast<const MemoryTimelineAnalysis *>(result.get());
        QVERIFY2(timeline, why.c_str());
        QCOMPARE(timeline->timeline.tokens, 5);
    }
};

QTEST_GUILESS_MAIN(TestMemoryTimeline)
#include "tst_memorytimeline.moc"
