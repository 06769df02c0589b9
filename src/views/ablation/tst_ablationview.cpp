// The Head ablation view draws analysis/headimportance's numbers: the importance table's cells, the task's scores in
// the caption; a click on a head switches it off or on, the mode box picks zero or mean ablation, and a spec naming a
// head the model lacks says so. The Sparsity view, the other layer × head table, draws each head's α and its
// exact zeros, and the Attention view hatches a sparse head's zeros apart from masked cells.
#include "ablation/ablation.h"
#include "ablation/ablationview.h"
#include "attentionmap/attentionview.h"
#include "sparsity/sparsity.h"
#include "sparsity/sparsityview.h"
#include "testbundle.h"
#include "view/viewanalysis.h"
#include "views/heatmapplot.h"
#include "viewtesting.h"

#include <QComboBox>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>

#include <qcustomplot.h>

using namespace atlas;

namespace {

ViewSpec ablationSpec(const std::string &model, const std::string &heads)
{
    ViewSpec s;
    s.view = "ablation";
    s.model = model;
    s.text = "abcdefg>gfe";
    s.set(views::ablation::kAblateHeads, heads);
    return s;
}

void drawAblation(AblationView &view, const ViewSpec &s)
{
    view.resize(1280, 720);
    view.setInput(testing::forSpec(s));
    view.setSpec(s);
    view.plot()->replot();
}

QStringList cellTexts(const QCustomPlot *plot)
{
    QStringList out;
    for (int i = 0; i < plot->itemCount(); ++i)
        if (const auto *t = qobject_cast<QCPItemText *>(plot->item(i)))
            out << t->text();
    return out;
}

QPoint cellCentre(const QCustomPlot *plot, int layer, int head)
{
    const QCPAxisRect *grid = plot->axisRects().at(0);
    return QPoint(
        int(grid->axis(QCPAxis::atBottom)->coordToPixel(head)), int(grid->axis(QCPAxis::atLeft)->coordToPixel(layer)));
}

} // namespace

class TestAblationView : public QObject
{
    Q_OBJECT

private slots:
    void drawsTheImportanceAndTheScores()
    {
        AblationView view;
        drawAblation(view, ablationSpec("reverse", "0.3"));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<HeadAblationAnalysis>();
        QVERIFY(a && a->importance && a->comparison.scored);
        QVERIFY2(view.title().contains("L0 H3"), qPrintable(view.title())); // layer 0, head 3, not "0.3"
        const QString ablatedLoss = formatNumber(a->comparison.ablated.loss);
        QVERIFY2(view.caption().contains(ablatedLoss), qPrintable(view.caption()));
        QVERIFY(a->comparison.ablated.loss > a->comparison.baseline.loss + 1.0f); // head 0.3 carries the copying
        const QStringList cells = cellTexts(view.plot());
        // Each cell: the loss increase to two decimals (trailing zeros dropped).
        const auto cell
            = [](double v) { return "+" + QString::number(v, 'f', 2).remove(QRegularExpression("\\.?0+$")); };
        const QString switchedOff = cell(a->importance->lossIncrease(0, 3)) + "\noff";
        QVERIFY2(cells.contains(switchedOff), qPrintable(cells.join(" | ")));
        QVERIFY(cells.contains(cell(a->importance->lossIncrease(0, 0))));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY(view.clippedTexts().isEmpty());
    }

    // The importance table belongs to the weights, not to one load of them: a lesson walked again or a model opened
    // again shows the table at once; other weights, even one value apart, get their own.
    void theImportanceTableFollowsTheWeights()
    {
        const ViewSpec s = ablationSpec("reverse", "0.3");
        const ViewInput first = testing::forSpec(s), second = testing::forSpec(s);
        QVERIFY(first.model && second.model && first.model != second.model); // two loads
        const auto *a = first.analysisAs<HeadAblationAnalysis>(), *b = second.analysisAs<HeadAblationAnalysis>();
        QVERIFY(a && b && a->importance);
        QCOMPARE(b->importance.get(), a->importance.get());

        auto changed = std::make_shared<Model>(*first.model);
        changed->parameters().begin()->second->data()[0] += 0.5f;
        const ViewInput other = testing::analyzed(makeViewInput(runSpec(s, size_t(8) << 30, changed)), s);
        const auto *c = other.analysisAs<HeadAblationAnalysis>();
        QVERIFY(c && c->importance && c->importance.get() != a->importance.get());
        QCOMPARE(first.model->parameters().begin()->second->data()[0] + 0.5f,
            changed->parameters().begin()->second->data()[0]); // the copy changed, the loaded weights did not
    }

    void aClickSwitchesAHeadOffAndOn()
    {
        AblationView view;
        drawAblation(view, ablationSpec("reverse", "0.3"));
        QSignalSpy edited(&view, &View::specEdited);
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, cellCentre(view.plot(), 1, 2));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(views::ablation::kAblateHeads), std::string("0.3,1.2"));
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, cellCentre(view.plot(), 0, 3));
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(views::ablation::kAblateHeads), std::string("1.2"));
        // The mode box is the view's interface, hidden on export.
        auto *mode = view.findChild<QComboBox *>();
        QVERIFY(mode);
        QCOMPARE(view.interfaceWidgets().size(), size_t(2)); // the mode box's row, and a run's progress and Cancel
        mode->setCurrentIndex(1);
        emit mode->activated(1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(views::ablation::kAblation), std::string("mean"));
    }

    // While the run for a head just clicked is under way the table stays, its caption saying so, so that heads can
    // be clicked one after another; another mode is another table, and its place says it is being computed.
    void theTableStaysWhileAClickedHeadRuns()
    {
        AblationView view;
        const ViewSpec s = ablationSpec("reverse", "0.3");
        drawAblation(view, s);
        QVERIFY(view.message().isEmpty());
        ViewInput running = view.input();
        running.analysis = {};
        running.analysis.pending = true;
        ViewSpec clicked = s;
        clicked.set(views::ablation::kAblateHeads, "0.3,1.2");
        running.analysis.settings = analysisSettings(clicked);
        view.setInput(running);
        view.setSpec(clicked);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QVERIFY2(view.caption().startsWith("Computing the result of the new settings"), qPrintable(view.caption()));
        ViewSpec mean = clicked;
        mean.set(views::ablation::kAblation, "mean");
        running.analysis.settings = analysisSettings(mean);
        view.setInput(running);
        view.setSpec(mean);
        QVERIFY(!view.message().isEmpty());
    }

    void aModelWithoutATaskComparesTheNextTokenOnly()
    {
        AblationView view;
        drawAblation(view, ablationSpec("tiny-bytes", "1.1"));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QVERIFY(view.caption().contains("names no task"));
        QVERIFY(!view.input().analysisAs<HeadAblationAnalysis>()->importance);
    }

    void aHeadTheModelLacksIsNamed()
    {
        AblationView view;
        drawAblation(view, ablationSpec("reverse", "5.0"));
        QVERIFY2(view.message().contains("5.0 is not in the model"), qPrintable(view.message()));
    }
    void sparsityViewDrawsEachHeadsAlphaAndZeros()
    {
        SparsityView view;
        ViewSpec s = ablationSpec("reverse-entmax", "");
        s.view = "sparsity";
        s.text = "abcdefgh>hgfedcba";
        view.resize(1280, 720);
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        view.plot()->replot();
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<SparseAttentionAnalysis>();
        QVERIFY(a);
        const AttentionSparsity &sparsity = a->sparsity;
        QCOMPARE(sparsity.normaliser, Normaliser::LearnedEntmax);
        QVERIFY2(sparsity.zeroShare() > 0.3, qPrintable(formatPercent(sparsity.zeroShare())));
        const QStringList cells = cellTexts(view.plot());
        for (const auto &layer : sparsity.heads)
            for (const HeadSparsity &head : layer) {
                QVERIFY(head.alpha > 1.0 && head.alpha <= 2.0);
                const QString cell
                    = QString("\u03B1 %1\n%2 zero").arg(formatNumber(head.alpha, 3), formatPercent(head.zeroShare()));
                QVERIFY2(cells.contains(cell), qPrintable(cell + " not in " + cells.join(" | ")));
            }
        QVERIFY2(view.caption().contains(formatPercent(sparsity.zeroShare())), qPrintable(view.caption()));
        QVERIFY(view.title().contains("learned per head"));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        QSignalSpy edited(&view, &View::specEdited);
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, cellCentre(view.plot(), 1, 2));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().layer, 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().head, 2);
    }

    void softmaxGivesNoZeroAndSaysWhy()
    {
        SparsityView view;
        ViewSpec s = ablationSpec("reverse", "");
        s.view = "sparsity";
        view.resize(1280, 720);
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        const auto *a = view.input().analysisAs<SparseAttentionAnalysis>();
        QVERIFY(a && a->sparsity.zeros == 0);
        QVERIFY2(view.caption().contains("Softmax gives every allowed key some weight"), qPrintable(view.caption()));
    }

    // Sparsemax's and entmax's zeros are allowed keys, not masked ones: hatched the other way, named in the note and
    // the tooltip. Softmax's heat map has no such note.
    void theAttentionViewHatchesExactZerosApartFromMasked()
    {
        ViewSpec s = ablationSpec("reverse-entmax", "");
        s.view = "attention";
        s.text = "abcdefgh>hgfedcba";
        s.layer = 0;
        s.head = 0;
        AttentionView view;
        view.resize(900, 700);
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        view.plot()->replot();
        QVERIFY(view.plot()->exactZeroNote().contains("exactly 0, not masked"));
        QVERIFY(view.plot()->pooled().hasZero && view.plot()->pooled().hasNegInf);
        const Tensor &probs = view.input().trace->tensor("layer.0.attn.probs");
        int zeroRow = -1, zeroCol = -1;
        for (int i = 0; i < int(probs.dim(1)) && zeroRow < 0; ++i)
            for (int j = 0; j <= i; ++j)
                if (probs.slice(0)(i, j) == 0.0f) {
                    zeroRow = i;
                    zeroCol = j;
                    break;
                }
        QVERIFY(zeroRow >= 0);
        QVERIFY2(view.cellText(zeroRow, zeroCol).contains("exactly 0, not masked"),
            qPrintable(view.cellText(zeroRow, zeroCol)));
        QVERIFY(view.cellText(0, 1).contains("masked (\u2212\u221E"));

        s.model = "reverse";
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        QVERIFY(view.plot()->exactZeroNote().isEmpty());
    }
};

QTEST_MAIN(TestAblationView)
#include "tst_ablationview.moc"
