// The Sinkhorn view (src/views/sinkhorn): the blocks in its title and the sort's sharpness in its caption are the
// analysis's, and a model without a sorting network is refused with the model to open.
#include "sinkhorn/sinkhorn.h"
#include "sinkhorn/sinkhornview.h"
#include "testbundle.h"
#include "viewtesting.h"

#include <QTest>

using namespace atlas;

class TestSinkhornView : public QObject
{
    Q_OBJECT

private slots:
    void sinkhornViewDrawsTheSort()
    {
        ViewSpec spec;
        spec.view = "sinkhorn";
        spec.model = "austen-mlm-sinkhorn";
        spec.text = "It is a truth universally acknowledged, that a single man in possession of a good fortune";
        spec.layer = 0;
        spec.head = 1;
        SinkhornView view;
        view.resize(1280, 720);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<SinkhornAnalysis>();
        QVERIFY(a);
        const SinkhornPicture &s = a->picture;
        QCOMPARE(s.head, 1);
        QVERIFY(s.blocks > 1);
        QVERIFY2(view.title().contains(QString("%1 blocks of %2 tokens").arg(s.blocks).arg(s.block)),
            qPrintable(view.title()));
        QVERIFY2(view.caption().contains(formatPercent(s.sharpness)), qPrintable(view.caption()));
        QVERIFY2(view.caption().contains(formatPercent(s.sortedShare)), qPrintable(view.caption()));

        spec.model = "reverse";
        spec.text = "abcd>dcba";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("austen-mlm-sinkhorn"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestSinkhornView)
#include "tst_sinkhornview.moc"
