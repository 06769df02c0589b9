// The Steps view (src/views/steps): the sweep is the task scored at each step count, the change per application is the
// residual stream's, and a model whose blocks are its own is refused.
#include "sanitizertesting.h"
#include "steps/steps.h"
#include "steps/stepsview.h"
#include "testbundle.h"
#include "trace/names.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QTest>

#include <cmath>

using namespace atlas;

class TestStepsView : public QObject
{
    Q_OBJECT

private slots:
    // austen-ut (halting) against austen-shared (none), 1 … 16 steps: a curve per model and panel; the first six
    // applications' changes are those of the session's run at the trained depth, read here from its trace.
    void stepsSweepsBothSharedModels()
    {
        ViewSpec spec;
        spec.view = "steps";
        spec.model = "austen-ut";
        spec.baselineModel = "austen-shared";
        spec.text = "She was not in the habit of walking";
        StepsView view;
        // Under the sanitizers the sweeps run on the least work: what is drawn is checked there, the numbers here.
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec, kAnalysesOnLeastWork)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<StepsAnalysis>();
        QVERIFY(a && a->curves.size() == 2);
        QCOMPARE(a->steps, 16); // `depth`'s default
        QCOMPARE(view.plot()->graphCount(), 4);
        const Trace &trace = *view.input().trace;
        for (const StepCurve &c : a->curves) {
            QCOMPARE(c.sweep.trained, 6);
            QCOMPARE(c.sweep.scores.size(), size_t(16));
            QCOMPARE(c.change.size(), size_t(16));
            QVERIFY2(view.caption().contains(
                         formatPercent(c.sweep.scores.front().tokenAccuracy) + " of next tokens after one"),
                qPrintable(view.caption()));
        }
        for (int n = 1; n <= 6; ++n) { // X_n of the first n applications does not depend on how many follow
            const auto before = trace.tensor(names::residualStream(n - 1)).matrix().cast<double>();
            const auto after = trace.tensor(names::residualStream(n)).matrix().cast<double>();
            double sum = 0;
            for (Eigen::Index t = 0; t < before.rows(); ++t)
                sum += (after.row(t) - before.row(t)).norm() / before.row(t).norm();
            const double expected = sum / double(before.rows());
            QVERIFY2(std::fabs(a->curves[0].change[size_t(n - 1)] - expected) < 1e-5 * expected,
                qPrintable(QString::number(n)));
        }
        if (!kAnalysesOnLeastWork) {
            // With halting, applications past the trained six change only the few tokens still running then.
            const std::vector<Evaluation> &ut = a->curves[0].sweep.scores;
            QVERIFY(std::fabs(ut[15].tokenAccuracy - ut[5].tokenAccuracy) < 0.02);
        }
        QVERIFY(view.title().contains("1 \u2026 16 times"));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        spec.baselineModel.clear();
        spec.depth = 3;
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec, true));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.input().analysisAs<StepsAnalysis>()->curves.at(0).change.size(), size_t(3));
        QVERIFY2(view.caption().contains("application 3 by"), qPrintable(view.caption()));

        spec.model = "austen-6";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("has a block of its own at each of its 6 layers"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestStepsView)
#include "tst_stepsview.moc"
