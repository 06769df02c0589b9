// The Funnel view (src/views/funnel): the tokens per layer in its title and the work share in its caption are the
// analysis's, and a model without pooling is refused with the model to open.
#include "funnel/funnel.h"
#include "funnel/funnelview.h"
#include "testbundle.h"
#include "viewtesting.h"

#include <QTest>

#include <algorithm>

using namespace atlas;

class TestFunnelView : public QObject
{
    Q_OBJECT

private slots:
    void funnelViewDrawsThePooledLengths()
    {
        ViewSpec spec;
        spec.view = "funnel";
        spec.model = "austen-mlm-funnel";
        spec.text = "It is a truth universally acknowledged, that a single man in possession of a good fortune";
        spec.layer = 1;
        spec.head = 0;
        FunnelView view;
        view.resize(1280, 720);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<FunnelAnalysis>();
        QVERIFY(a);
        const FunnelPicture &f = a->picture;
        QVERIFY(f.strides.size() > 1);
        QString lengths;
        for (size_t l = 0; l < f.strides.size(); ++l)
            lengths += (l ? QStringLiteral(" \u2192 ") : QString()) + QString::number(f.presentAt(int(l)));
        QVERIFY2(view.title().contains(lengths), qPrintable(view.title() + " lacks " + lengths));
        int fewest = f.presentAt(0);
        for (size_t l = 1; l < f.strides.size(); ++l)
            fewest = std::min(fewest, f.presentAt(int(l)));
        QVERIFY(fewest < f.presentAt(0)); // the pooled groups run on fewer tokens
        QVERIFY2(view.caption().contains(formatPercent(f.work)), qPrintable(view.caption()));

        spec.model = "reverse";
        spec.text = "abcd>dcba";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("pools the sequence"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestFunnelView)
#include "tst_funnelview.moc"
