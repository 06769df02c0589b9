// The Head kinds view (src/views/headkinds) as a researcher reads it: the cards are the heads at or above the
// threshold for the chosen kind, largest first, with the analysis's scores; the hover gives all seven; a click opens
// the head in the Attention view; a threshold no head reaches says so; the input twice is scored when chosen.
#include "headkinds/headkinds.h"
#include "headkinds/headkindsview.h"
#include "layouttesting.h"
#include "testbundle.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <QSignalSpy>
#include <QTest>

#include <algorithm>

using namespace atlas;

namespace {

ViewSpec kindsSpec(const std::string &kind, double minimum)
{
    ViewSpec spec;
    spec.view = "head-kinds";
    spec.model = "austen";
    spec.text = "It is a truth";
    spec.set(views::headkinds::kHeadKind, kind);
    spec.set(views::headkinds::kMinScore, minimum);
    return spec;
}

} // namespace

class TestHeadKindsView : public QObject
{
    Q_OBJECT

private slots:
    void theCardsAreTheHeadsAboveTheThresholdLargestFirst()
    {
        const ViewSpec spec = kindsSpec("previous-token", 0.05);
        const ViewInput input = testing::forSpec(spec);
        HeadKindsView view;
        QVERIFY(testing::shown(view, spec, input, {1100, 700}));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = input.analysisAs<HeadKindsAnalysis>();
        QVERIFY(a);
        const HeadClasses &c = a->classes;
        int above = 0;
        for (int l = 0; l < c.layers; ++l)
            for (int h = 0; h < c.heads; ++h)
                above += c.score(HeadClass::PreviousToken, l, h) >= 0.05;
        const auto &cards = view.gallery()->cards();
        QCOMPARE(int(cards.size()), above);
        QVERIFY(above > 0);
        for (size_t i = 0; i < cards.size(); ++i) {
            QCOMPARE(cards[i].score, c.score(HeadClass::PreviousToken, cards[i].layer, cards[i].head));
            QVERIFY(i == 0 || cards[i - 1].score >= cards[i].score);
            QVERIFY(cards[i].tooltip.contains("induction: ") && cards[i].tooltip.contains("copying: "));
            QCOMPARE(cards[i].thumbnail.width(), 2 * c.half);
        }
        QVERIFY(view.caption().startsWith(QString("%1 of %2 heads").arg(above).arg(c.layers * c.heads)));
        testing::maybeSave(view, "head-kinds");

        QSignalSpy edited(&view, &View::specEdited);
        QTest::mouseClick(view.gallery(), Qt::LeftButton, {}, view.gallery()->cardRect(0).center());
        QCOMPARE(edited.count(), 1);
        const ViewSpec opened = edited.takeFirst().at(0).value<ViewSpec>();
        QCOMPARE(QString::fromStdString(opened.view), QString("attention"));
        QCOMPARE(opened.layer, cards[0].layer);
        QCOMPARE(opened.head, cards[0].head);
    }

    void aThresholdNoHeadReachesSaysSo()
    {
        const ViewSpec spec = kindsSpec("induction", 1.0);
        HeadKindsView view;
        view.resize(1100, 700);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY(view.gallery()->cards().empty());
        QVERIFY2(view.caption().contains("No head scores at least 1 on induction."), qPrintable(view.caption()));
    }

    // On the input twice: the sequence run is the input's tokens, then the same again.
    void theInputTwiceIsScoredWhenChosen()
    {
        ViewSpec spec = kindsSpec("duplicate-token", 0.0);
        spec.set(views::headkinds::kHeadSequence, "input");
        const ViewInput input = testing::forSpec(spec);
        HeadKindsView view;
        view.resize(1100, 700);
        view.setSpec(spec);
        view.setInput(input);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = input.analysisAs<HeadKindsAnalysis>();
        QVERIFY(a && a->fromInput);
        std::vector<int> twice = input.tokenIds;
        twice.insert(twice.end(), input.tokenIds.begin(), input.tokenIds.end());
        QVERIFY(a->classes.tokens == twice);
    }
};

QTEST_MAIN(TestHeadKindsView)
#include "tst_headkindsview.moc"
