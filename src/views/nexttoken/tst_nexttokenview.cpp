// The Next token view (src/views/nexttoken): the top-k bars of a position's distribution, at a temperature and under
// top-p, on a trace made by hand (handmadetracetesting.h), and what it says when the probabilities are missing.
#include "engine/temperature.h"
#include "handmadetracetesting.h"
#include "layouttesting.h"
#include "nexttoken/nexttoken.h"
#include "nexttoken/nexttokenview.h"
#include "testbundle.h"

#include <qcustomplot.h>

#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace atlas;
using namespace atlas::testing;

class TestNextTokenView : public QObject
{
    Q_OBJECT

private slots:
    void nextTokenBarsAreTopKDescending()
    {
        NextTokenView view;
        view.resize(700, 420);
        ViewSpec s = viewSpecOf("next-token");
        s.topK = 3;
        s.position = 2;
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace()));
        QVERIFY(view.message().isEmpty());
        QCOMPARE(view.position(), 2);
        // Row 2: id (2 + k) % 10 has weight k + 1, so the top three are ids 1, 0, 9 with 10, 9, 8 / 55.
        const auto &bars = view.bars();
        QCOMPARE(bars.size(), size_t(3));
        const int ids[] = {1, 0, 9};
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(bars[size_t(i)].id, ids[i]);
            QCOMPARE(bars[size_t(i)].probability, double(float(10 - i) / 55.0f));
            QCOMPARE(bars[size_t(i)].label, QStringLiteral("'v%1' (#%1)").arg(ids[i]));
        }
        QCOMPARE(view.title(), QStringLiteral("Next token after ' sat' (position 2)"));

        auto *plottable = qobject_cast<QCPBars *>(view.plot()->plottable(0));
        QVERIFY(plottable);
        QCOMPARE(plottable->data()->size(), 3);
        QCOMPARE(plottable->data()->at(0)->value, bars[0].probability);
        QVERIFY(plottable->data()->at(0)->value > plottable->data()->at(2)->value);
        QVERIFY(view.plot()->yAxis->rangeReversed()); // bar 0 (largest) on top
        testing::maybeSave(view, "next-token-light");
        s.theme = "dark";
        view.setSpec(s);
        testing::maybeSave(view, "next-token-dark");
    }

    void nextTokenLastPosition()
    {
        NextTokenView view;
        ViewSpec s = viewSpecOf("next-token");
        s.topK = 50; // more than the vocabulary: every id once
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace()));
        QCOMPARE(view.position(), kT - 1);
        QCOMPARE(view.bars().size(), size_t(kV));
        QCOMPARE(view.bars().front().id, (kT - 1 + kV - 1) % kV); // row 4: id 3 has weight 10
        QVERIFY(view.title().contains(QStringLiteral("' mat' (position 4)")));
        for (size_t i = 1; i < view.bars().size(); ++i)
            QVERIFY(view.bars()[i - 1].probability >= view.bars()[i].probability);
    }

    // At temperature T the bars are the traced row reshaped by softmax(z / T); the controls show and edit the spec.
    void nextTokenTemperatureAndPosition()
    {
        NextTokenView view;
        view.resize(700, 420);
        ViewSpec s = viewSpecOf("next-token");
        s.topK = 3;
        s.position = 2;
        s.set(views::nexttoken::kTemperature, 0.5);
        view.setSpec(s);
        auto trace = handMadeTrace();
        view.setInput(handMadeInput(trace));
        QVERIFY(view.message().isEmpty());
        const std::vector<double> expected = atTemperature(trace->tensor("next_probs").data() + 2 * kV, kV, 0.5);
        // Row 2's weights are 1..10 / 55: at T = 0.5 they become (k + 1)² / Σ k², the top one 100 / 385.
        QCOMPARE(view.bars().front().id, 1);
        QVERIFY(std::abs(view.bars().front().probability - 100.0 / 385.0) < 1e-6);
        for (const auto &bar : view.bars())
            QCOMPARE(bar.probability, double(float(expected[size_t(bar.id)])));
        QVERIFY(view.title().endsWith(QStringLiteral("at temperature 0.5")));

        QSignalSpy edited(&view, &View::specEdited);
        auto *position = view.findChild<QSpinBox *>();
        QVERIFY(position);
        QCOMPARE(position->value(), 2);
        position->setValue(-1); // "last"
        QCOMPARE(view.position(), kT - 1);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().position, -1);

        auto *slider = view.findChild<QSlider *>();
        QVERIFY(slider);
        slider->setValue(slider->maximum()); // T = 10: nearly flat
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(views::nexttoken::kTemperature), 10.0);
        QVERIFY(view.bars().front().probability < 0.2);
        const std::vector<QWidget *> hidden = view.interfaceWidgets();
        QVERIFY(std::find(hidden.begin(), hidden.end(), position->parentWidget()) != hidden.end());
    }

    // Issue 63: with top_p below 1 the bars are what nucleus sampling draws from: the fewest most probable tokens
    // whose probabilities reach p, renormalised, and the rest greyed as cut; the box edits the spec.
    void nextTokenTopPCutsTheTail()
    {
        NextTokenView view;
        view.resize(700, 420);
        ViewSpec s = viewSpecOf("next-token");
        s.topK = kV;
        s.position = 2;
        s.set(views::nexttoken::kTopP, 0.5);
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace()));
        QVERIFY(view.message().isEmpty());
        // Row 2's weights are 10, 9, 8 … 1 over 55: 10 + 9 + 8 = 27 is 49 % of them, 34 is 62 %: four are kept.
        const auto &bars = view.bars();
        QCOMPARE(bars.size(), size_t(kV));
        double keptSum = 0;
        for (size_t i = 0; i < bars.size(); ++i) {
            QCOMPARE(bars[i].cut, i >= 4);
            if (!bars[i].cut)
                keptSum += bars[i].probability;
        }
        QVERIFY(std::abs(keptSum - 1.0) < 1e-6);
        QVERIFY(std::abs(bars[0].probability - 10.0 / 34.0) < 1e-6);
        QVERIFY(std::abs(bars[4].probability - 6.0 / 55.0) < 1e-6); // a cut bar: its probability before the cut
        QVERIFY2(view.title().contains(QStringLiteral("top-p 0.5 keeps 4 tokens")), qPrintable(view.title()));
        testing::maybeSave(view, "next-token-top-p");

        QSignalSpy edited(&view, &View::specEdited);
        auto *box = view.findChild<QDoubleSpinBox *>();
        QVERIFY(box);
        QCOMPARE(box->value(), 0.5);
        box->setValue(1.0);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(views::nexttoken::kTopP), 1.0);
        QVERIFY(std::none_of(view.bars().begin(), view.bars().end(), [](const auto &b) { return b.cut; }));
    }

    void nextTokenMissingAndOutOfRange()
    {
        NextTokenView view;
        auto trace = handMadeTrace();
        trace->drop("next_probs");
        view.setInput(handMadeInput(trace));
        QVERIFY2(view.message().startsWith(QStringLiteral("Not computed yet: step to next-token softmax")),
            qPrintable(view.message()));
        QVERIFY(view.bars().empty());

        ViewSpec s = viewSpecOf("next-token");
        s.position = 7;
        view.setSpec(s);
        view.setInput(handMadeInput(handMadeTrace()));
        QVERIFY(view.message().contains(QStringLiteral("outside")));
    }
};

QTEST_MAIN(TestNextTokenView)
#include "tst_nexttokenview.moc"
