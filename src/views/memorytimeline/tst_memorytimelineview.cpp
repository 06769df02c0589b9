// The memory timeline view draws the core's timeline: a row per strategy on shared axes, the stacked categories,
// each peak labelled with what was live, a cursor that the spec sets and the mouse and keys move.
#include "memorytimeline/memorytimelineview.h"
#include "testbundle.h"
#include "view/memoryanalysis.h"
#include "views/viewfactory.h"
#include "viewtesting.h"

#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>

#include <qcustomplot.h>

using namespace atlas;

class TestMemoryTimelineView : public QObject
{
    Q_OBJECT

    static ViewSpec spec(const std::string &model)
    {
        ViewSpec s;
        s.view = "memory-timeline";
        s.model = model;
        s.text = "abcdef>fedcba";
        s.cursor = 30;
        return s;
    }

private slots:
    void drawsEveryStrategyOnSharedAxes()
    {
        const ViewSpec s = spec("reverse-rev");
        MemoryTimelineView view;
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.strategyRows(), 3);
        const MemoryTimeline &t = view.drawnAnalysis()->timeline;
        QCOMPARE(view.plot()->graphCount(), 3 * kMemoryCategories);
        for (int row = 0; row < 3; ++row) {
            QCPAxisRect *rect = view.plot()->axisRects().at(row);
            QCOMPARE(rect->axis(QCPAxis::atLeft)->range().upper,
                view.plot()->axisRects().at(0)->axis(QCPAxis::atLeft)->range().upper);
            QCOMPARE(rect->axis(QCPAxis::atBottom)->range().upper, t.maxOps - 0.5);
            const TimelineStrategy &st = t.strategies[size_t(row)];
            const QString peak = view.peakLabel(row);
            QVERIFY2(peak.contains(QString::fromStdString(st.ops[size_t(st.x[size_t(st.peakPoint)])].name)),
                qPrintable(peak));
            // the top of the stack at the peak is the peak
            const QCPGraph *top = view.plot()->graph(row * kMemoryCategories + kMemoryCategories - 1);
            const double unit = t.maxBytes >= (1 << 20) ? double(1 << 20) : 1024.0;
            QCOMPARE(qRound64((top->data()->begin() + st.peakPoint)->value * unit), st.peakBytes);
            const QString cursor = view.cursorLabel(row);
            QVERIFY2(cursor.startsWith("op 30: " + QString::fromStdString(st.ops[30].name)), qPrintable(cursor));
        }
        QVERIFY(view.title().contains("13 tokens"));
        QVERIFY2(view.title().contains(QRegularExpression("peak RSS [0-9.]+ MiB")), qPrintable(view.title()));
    }

    void cursorMovesWithKeysAndEditsTheSpec()
    {
        const ViewSpec s = spec("reverse-rev");
        MemoryTimelineView view;
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        QSignalSpy edited(&view, &View::specEdited);
        QTest::keyClick(&view, Qt::Key_Right);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().cursor, 31);
        QVERIFY(view.cursorLabel(0).startsWith("op 31: "));
        QTest::keyClick(&view, Qt::Key_Left);
        QTest::keyClick(&view, Qt::Key_Left);
        QCOMPARE(view.spec().cursor, 29);
    }

    void aStandardModelSaysWhyItHasNoReversibleStep()
    {
        const ViewSpec s = spec("reverse");
        MemoryTimelineView view;
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        QCOMPARE(view.strategyRows(), 3);
        QVERIFY(view.peakLabel(2).isEmpty());
        QVERIFY(view.cursorLabel(2).isEmpty());
        QVERIFY(!view.peakLabel(0).isEmpty());
    }

    void showsTheAnalysisProblem()
    {
        ViewSpec s = spec("reverse-rev");
        s.checkpointEvery = 5;
        MemoryTimelineView view;
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        QVERIFY2(view.message().contains("checkpoint_every 5"), qPrintable(view.message()));
        QVERIFY(createView("memory-timeline", nullptr) != nullptr);
    }
};

QTEST_MAIN(TestMemoryTimelineView)
#include "tst_memorytimelineview.moc"
