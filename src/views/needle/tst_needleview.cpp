// The Needle in a haystack view (src/views/needle): its caption's numbers are the analysis's, the controls edit the
// spec, nothing is clipped, and a context past the model's is refused with the key.
#include "needle/needle.h"
#include "needle/needleview.h"
#include "testbundle.h"
#include "viewshowing.h"
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
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<NeedleAnalysis>();
        QVERIFY(a);
        QCOMPARE(a->runs.size(), size_t(1));
        QCOMPARE(int(a->runs.back().depths.size()), 5);
        int greedy = 0;
        for (const NeedleAtDepth &d : a->runs.back().depths)
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

    // Kamradt's grid: three context lengths up to 120 tokens, a short needle so that the shortest holds it; the caption
    // counts the cells where greedy decoding gives the answer, and the Lengths box edits the spec.
    void drawsTheGrid()
    {
        ViewSpec spec;
        spec.view = "needle";
        spec.model = "austen";
        spec.set(views::needle::kNeedleTokens, 120);
        spec.set(views::needle::kNeedleDepths, 3);
        spec.set(views::needle::kNeedleLengths, 3);
        spec.set(views::needle::kNeedle, std::string(" The code is 48."));
        spec.set(views::needle::kNeedleQuestion, std::string(" The code is"));
        spec.set(views::needle::kNeedleAnswer, std::string(" 48"));
        NeedleView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<NeedleAnalysis>();
        QVERIFY(a);
        QCOMPARE(a->runs.size(), size_t(3));
        int greedy = 0;
        for (size_t l = 0; l < 3; ++l) {
            QCOMPARE(a->runs[l].tokens, 40 * int(l + 1));
            QCOMPARE(a->runs[l].depths.size(), size_t(3));
            for (const NeedleAtDepth &d : a->runs[l].depths)
                greedy += d.greedy;
        }
        QVERIFY2(view.caption().contains(QString("(%1 of 9 cells)").arg(greedy)), qPrintable(view.caption()));
        QVERIFY2(view.title().contains("40 to 120 tokens of the novel"), qPrintable(view.title()));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        QSignalSpy edited(&view, &View::specEdited);
        QSpinBox *lengths = nullptr;
        for (QSpinBox *box : view.findChildren<QSpinBox *>())
            if (box->toolTip().contains("needle_lengths"))
                lengths = box;
        QVERIFY(lengths);
        QCOMPARE(lengths->value(), 3);
        lengths->setValue(2);
        emit lengths->editingFinished();
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().get(views::needle::kNeedleLengths), 2);
    }
};

QTEST_MAIN(TestNeedleView)
#include "tst_needleview.moc"
