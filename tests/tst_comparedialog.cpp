// View ▸ Compare Two Runs' dialog: the comparison keys it writes, and what it refuses. Set ATLAS_SCREENSHOTS=DIR to
// save the dialog's picture.
#include "dialogs/comparedialog.h"
#include "testbundle.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QTest>

using namespace atlas;

class TestCompareDialog : public QObject
{
    Q_OBJECT

private slots:
    // The dialog writes the comparison's keys, and refuses (staying open, saying why) what the spec parser refuses.
    void theCompareDialogWritesTheComparison()
    {
        ViewSpec spec;
        spec.model = "reverse";
        spec.view = "attention";
        CompareDialog dialog(spec);
        auto boxes = dialog.findChildren<QCheckBox *>();
        QCOMPARE(boxes.size(), 3);
        dialog.show();
        dialog.accept(); // nothing ticked: B would be A
        QVERIFY(dialog.isVisible());
        bool said = false;
        for (const QLabel *label : dialog.findChildren<QLabel *>())
            said = said || (label->isVisible() && label->text().contains("run B is the same as run A"));
        QVERIFY(said);
        boxes[0]->setChecked(true); // another model: reverse-rope, suggested for reverse
        for (QComboBox *box : dialog.findChildren<QComboBox *>())
            if (box->findData("difference") >= 0)
                box->setCurrentIndex(box->findData("difference"));
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(dialog.spec().compare, std::string("difference"));
        QCOMPARE(dialog.spec().compareModel, std::string("reverse-rope"));
        QVERIFY(dialog.spec().compareText.empty() && dialog.spec().compareAttention.empty());

        // Every head, B a file chosen with Browse… (typed here: the file dialog is the system's)
        CompareDialog heads(spec);
        heads.resize(700, heads.sizeHint().height());
        heads.show();
        QVERIFY(QTest::qWaitForWindowExposed(&heads));
        bool browse = false;
        for (const QPushButton *button : heads.findChildren<QPushButton *>())
            browse = browse || button->text() == "&Browse\u2026";
        QVERIFY(browse);
        if (const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS"); !dir.isEmpty())
            QVERIFY(heads.grab().save(dir + "/compare-dialog.png"));
        heads.findChildren<QCheckBox *>()[0]->setChecked(true);
        for (QComboBox *box : heads.findChildren<QComboBox *>()) {
            if (box->findData("heads") >= 0)
                box->setCurrentIndex(box->findData("heads"));
            else if (box->isEditable())
                box->setCurrentText("reverse-rope");
        }
        heads.accept();
        QCOMPARE(heads.result(), int(QDialog::Accepted));
        QCOMPARE(heads.spec().compare, std::string("heads"));
        QCOMPARE(heads.spec().compareModel, std::string("reverse-rope"));
    }
};

QTEST_MAIN(TestCompareDialog)
#include "tst_comparedialog.moc"
