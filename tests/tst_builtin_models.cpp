// The built-in trained models do what their descriptions (config.json, shown in the model menu and by
// `transformer-atlas models`) say: the stated held-out accuracy, and the stated heads attending where claimed.
#include "analysis/headpatterns.h"
#include "model/builtinmodels.h"
#include "train/evaluation.h"

#include <QTest>

using namespace atlas;

class TestBuiltinModels : public QObject
{
    Q_OBJECT

    static std::vector<std::vector<double>> mass(const char *model, const char *patternName)
    {
        const auto task = Task::create(model);
        for (const HeadPattern &p : headPatterns(model))
            if (p.name == patternName)
                return patternMass(loadModel(model), *task, p, 100);
        return {};
    }

private slots:
    void heldOutAccuracyIsAsStated_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("tokenAccuracy");
        QTest::addColumn<double>("exactMatch");
        QTest::newRow("reverse") << "reverse" << 0.999 << 0.999;
        QTest::newRow("copy") << "copy" << 0.99 << 0.89;
        QTest::newRow("sort") << "sort" << 0.96 << 0.81;
        QTest::newRow("parens") << "parens" << 0.70 << 0.70;
    }

    void heldOutAccuracyIsAsStated()
    {
        QFETCH(QString, name);
        QFETCH(double, tokenAccuracy);
        QFETCH(double, exactMatch);
        const Evaluation e = evaluateOnTask(loadModel(name.toStdString()), *Task::create(name.toStdString()), 256);
        QVERIFY2(e.tokenAccuracy >= tokenAccuracy, qPrintable(QString::number(e.tokenAccuracy)));
        QVERIFY2(e.exactMatch >= exactMatch, qPrintable(QString::number(e.exactMatch)));
    }

    static double coverage(const char *model, const char *patternName, int layer)
    {
        for (const HeadPattern &p : headPatterns(model))
            if (p.name == patternName)
                return patternCoverage(loadModel(model), *Task::create(model), p, layer, 100);
        return -1;
    }

    void reverseAnswersLookAtTheMirroredLetter()
    {
        QVERIFY(coverage("reverse", "mirror", 0) >= 0.95); // some layer-0 head, at every answer position
        QVERIFY(coverage("reverse", "mirror", 1) <= 0.15);
        const auto m = mass("reverse", "mirror");
        for (double head : m[0])
            QVERIFY2(head >= 0.40, qPrintable(QString::number(head)));
        for (double head : m[1])
            QVERIFY2(head <= 0.10, qPrintable(QString::number(head)));
    }

    void copyHeadsFindTheLetterToCopy()
    {
        QVERIFY(coverage("copy", "induction", 0) >= 0.78);
        const auto m = mass("copy", "induction");
        for (double head : m[0])
            QVERIFY2(head >= 0.25, qPrintable(QString::number(head)));
        for (double head : m[1])
            QVERIFY2(head <= 0.05, qPrintable(QString::number(head)));
        // Far above chance: a query in the second copy has 17–33 keys to choose from.
        QVERIFY(*std::max_element(m[0].begin(), m[0].end()) > 0.30);
    }

    void sortHeadTwoFindsTheNextLetterInOrder()
    {
        QVERIFY(coverage("sort", "next in order", 0) >= 0.82);
        const auto m = mass("sort", "next in order");
        QVERIFY2(m[0][2] >= 0.55, qPrintable(QString::number(m[0][2])));
        for (size_t l = 0; l < m.size(); ++l)
            for (size_t h = 0; h < m[l].size(); ++h)
                QVERIFY(m[l][h] <= m[0][2]);
    }

    void parensAnswerLooksAtTheBrackets()
    {
        const auto m = mass("parens", "brackets");
        for (double head : m[0])
            QVERIFY2(head >= 0.95, qPrintable(QString::number(head)));
    }

    void everyModelDescribesItself()
    {
        for (const BuiltinModel &m : builtinModels())
            QVERIFY2(m.description.size() > 80, m.name.c_str());
    }
};

QTEST_GUILESS_MAIN(TestBuiltinModels)
#include "tst_builtin_models.moc"
