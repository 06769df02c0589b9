// The Fourier mixing view (src/views/fourier): three maps drawn from its analysis with nothing clipped, the caption's
// numbers the analysis's, a hover's tooltip the cell's numbers, and an encoder–decoder refused with the reason.
#include "fourier/fourier.h"
#include "fourier/fourierview.h"
#include "testbundle.h"
#include "view/specrun.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QTest>
#include <QToolTip>

using namespace atlas;

class TestFourierView : public QObject
{
    Q_OBJECT

private slots:
    void drawsTheFourierWeightsTheSharesAndTheHead()
    {
        ViewSpec spec;
        spec.view = "fourier";
        spec.model = "austen-mlm";
        spec.text = "It is a truth universally acknowledged";
        spec.layer = 1;
        spec.head = 1;
        FourierView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<FourierMixingAnalysis>();
        QVERIFY(a);
        const FourierMixing &m = a->mixing;
        QCOMPARE(m.layer, 1);
        QCOMPARE(m.head, 1);
        QCOMPARE(m.tokens, int(view.input().tokens.size()));
        for (const QString &number : {formatPercent(m.largestShare), formatPercent(m.laterShare),
                 formatPercent(m.largestWeight), QString::number(m.tokens), QString::fromStdString(m.input)})
            QVERIFY2(view.caption().contains(number), qPrintable(number + " in " + view.caption()));
        QCOMPARE(view.plot()->axisRectCount(), 3);
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        // Hovering row 2, token 5 of the middle map shows that cell's weight, share and attention.
        QCPAxisRect *shares = view.plot()->axisRect(1);
        const QPoint cell(int(shares->axis(QCPAxis::atBottom)->coordToPixel(5.0)),
            int(shares->axis(QCPAxis::atLeft)->coordToPixel(2.0)));
        QTest::mouseMove(view.plot(), cell);
        QTRY_VERIFY(QToolTip::isVisible());
        const QString tip = QToolTip::text();
        QVERIFY2(tip.contains("Row 2") && tip.contains("token 5"), qPrintable(tip));
        for (const QString &number :
            {formatNumber(m.cosine(2, 5), 4), formatPercent(m.share(2, 5)), formatPercent(m.attention(2, 5))})
            QVERIFY2(tip.contains(number), qPrintable(number + " in " + tip));

        spec.model = "seq2seq-sort";
        spec.text = "dcba";
        spec.decoderText = "ab";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("one stack"), qPrintable(view.message()));
    }

    // austen-fnet's blocks mix by the transform itself, over its context of 128: two maps, no head, the padding said.
    void drawsAnFnetModelsOwnMixing()
    {
        ViewSpec spec;
        spec.view = "fourier";
        spec.model = "austen-fnet";
        spec.text = "It is a tr[MASK]th universally acknowledged";
        spec.layer = 2;
        FourierView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const FourierMixing &m = view.input().analysisAs<FourierMixingAnalysis>()->mixing;
        QVERIFY(m.fnetBlock && m.attention.size() == 0);
        QCOMPARE(m.length, 128);
        QCOMPARE(view.plot()->axisRectCount(), 2);
        const Tensor &traced = view.input().trace->tensor("layer.2.fourier.out");
        QVERIFY((m.output - traced.matrix()).cwiseAbs().maxCoeff() <= 1e-4f * traced.matrix().cwiseAbs().maxCoeff());
        const QString padding = QString("padded with %1 zero rows").arg(128 - m.tokens);
        QVERIFY2(view.caption().contains(padding), qPrintable(view.caption()));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
        QCPAxisRect *shares = view.plot()->axisRect(1);
        QTest::mouseMove(view.plot(),
            QPoint(int(shares->axis(QCPAxis::atBottom)->coordToPixel(5.0)),
                int(shares->axis(QCPAxis::atLeft)->coordToPixel(2.0))));
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY2(
            QToolTip::text().contains("/128") && !QToolTip::text().contains("attention"), qPrintable(QToolTip::text()));
    }

    // A view that reads an FNet block's attention refuses by the key that asked for it: the layer, the comparison of
    // heads, or the view itself when it reads every block's heads.
    void refusesAttentionOfAnFnetBlockByItsKey()
    {
        const auto problem = [](const std::string &view, const std::string &compare) {
            ViewSpec spec;
            spec.view = view;
            spec.model = "austen-fnet";
            spec.text = "It is a tr[MASK]th";
            spec.compare = compare;
            return QString::fromStdString(drawProblem(spec, runSpec(spec), "spec.json"));
        };
        QVERIFY2(problem("attention", "").startsWith("spec.json: key 'layer': block 0 of model 'austen-fnet' mixes"),
            qPrintable(problem("attention", "")));
        QVERIFY2(problem("attention", "heads").startsWith("spec.json: key 'compare': comparing heads"),
            qPrintable(problem("attention", "heads")));
        QVERIFY2(
            problem("ablation", "").startsWith("spec.json: key 'view': the "), qPrintable(problem("ablation", "")));
        QCOMPARE(problem("fourier", ""), QString());
    }
};

QTEST_MAIN(TestFourierView)
#include "tst_fourierview.moc"
