// The Needle in a haystack view (src/views/needle): its caption's numbers are the analysis's, the controls edit the
// spec, nothing is clipped, and a context past the model's is refused with the key.
#include "needle/needle.h"
#include "needle/needleview.h"
#include "testbundle.h"
#include "viewtesting.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

using namespace atlas;

class TestNeedleView : public QObject
{
    Q_OBJECT

private slots:
    void drawsEveryDepth()
    {
        ViewSpec spec;
        spec.view = "needle";
        spec.model = "austen";
        spec.set(views::needle::kNeedleTokens, 120);
        spec.set(views::needle::kNeedleDepths, 5);
        NeedleView view;
        view.resize(1280, 720);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<NeedleAnalysis>();
        QVERIFY(a);
        QCOMPARE(int(a->result.depths.size()), 5);
        int greedy = 0;
        for (const NeedleAtDepth &d : a->result.depths)
            greedy += d.greedy;
        QVERIFY2(view.caption().contains(QString("gives the answer at %1 of 5 depths").arg(greedy)),
            qPrintable(view.caption()));
        QVERIFY(view.title().contains("120 tokens of the novel"));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        QSignalSpy edited(&view, &View::specEdited);
        auto *haystack = view.findChild<QComboBox *>();
        QVERIFY(haystack);
        haystack->setCurrentIndex(1);
        emit haystack->activated(1);
        QCOMPARE(edited.count(), 1);
        spec = edited.at(0).at(0).value<ViewSpec>();
        QCOMPARE(QString::fromStdString(spec.get(views::needle::kHaystack)), QString("input"));

        spec.set(views::needle::kNeedleTokens, 4096);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains(
                     "A context of 4096 tokens is past austen's context of 128 tokens: set the Context to at most 128"),
            qPrintable(view.message()));
    }
};

QTEST_MAIN(TestNeedleView)
#include "tst_needleview.moc"
