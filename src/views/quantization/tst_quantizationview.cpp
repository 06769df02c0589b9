// The Quantization view (src/views/quantization): what it draws from its analysis, the matrix a click chooses, and
// what it says of a GGUF file with and without float weights to compare with.
#include "quantization/quantization.h"
#include "quantization/quantizationview.h"
#include "testbundle.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QSignalSpy>
#include <QTest>

using namespace atlas;

class TestQuantizationView : public QObject
{
    Q_OBJECT

private slots:
    void drawsTheLayersMatricesAndOneBlock()
    {
        ViewSpec spec;
        spec.view = "quantization";
        spec.model = "austen-q4_0";
        spec.text = "It is a truth universally acknowledged";
        spec.layer = 1;
        spec.set(views::quantization::kMatrix, std::string("k"));
        QuantizationView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<QuantizationAnalysis>();
        QVERIFY(a);
        const QuantizedMatrix &k = a->effect.matrices[size_t(a->effect.chosen)];
        QCOMPARE(k.role, std::string("W_qkv")); // GPT-2's layout has no W_k of its own: the first matrix is shown
        for (const QString &part : {QString("W_qkv: Q4_0, 4.5 bits per weight (as the GGUF file holds it)"),
                 QString("Against austen:"), formatNumber(100.0 * k.weightError, 3)})
            QVERIFY2(view.caption().contains(part), qPrintable(part + " in " + view.caption()));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        QSignalSpy edited(&view, &View::specEdited);
        QCPAxisRect *matrices = view.plot()->axisRect(0);
        const QPoint down(int(matrices->axis(QCPAxis::atBottom)->coordToPixel(3.0)),
            int(matrices->axis(QCPAxis::atLeft)->coordToPixel(0.0)) - 3);
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, down);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().get(views::quantization::kMatrix), std::string("down"));

        spec.set(views::quantization::kReference, std::string("reverse")); // not of austen's shapes
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QVERIFY2(view.caption().contains("No float weights to compare with: reverse's matrices are not of this model's "
                                         "shapes"),
            qPrintable(view.caption()));
    }
};

QTEST_MAIN(TestQuantizationView)
#include "tst_quantizationview.moc"
