// Every lesson shipped in lessons/ passes `lesson check` and every one of its steps renders headless.
#include "lesson/lessoncheck.h"
#include "util/error.h"
#include "views/headlessrender.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

using namespace atlas;

class TestLessons : public QObject
{
    Q_OBJECT

private slots:
    void everyLessonChecksAndEveryStepRenders_data()
    {
        QTest::addColumn<QString>("path");
        const QDir dir(ATLAS_SOURCE_DIR "/lessons");
        const QStringList files = dir.entryList({"*.md"}, QDir::Files, QDir::Name);
        QVERIFY(!files.isEmpty());
        for (const QString &f : files)
            if (f != "README.md")
                QTest::newRow(qPrintable(f)) << dir.filePath(f);
    }

    void everyLessonChecksAndEveryStepRenders()
    {
        QFETCH(QString, path);
        const Lesson lesson = readLesson(path.toStdString());
        const std::vector<std::string> problems = checkLesson(lesson);
        QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
        QVERIFY2(lesson.steps.size() >= 5 && lesson.steps.size() <= 20, "a lesson has 5 to 20 steps");
        QTemporaryDir out;
        const std::vector<std::string> images = renderLessonSteps(lesson, out.path().toStdString(), 960, 600);
        QCOMPARE(images.size(), lesson.steps.size());
        for (const std::string &image : images)
            QCOMPARE(QImage(QString::fromStdString(image)).size(), QSize(960, 600));
    }

    // The steps are written as a set: a second render replaces the first whole (no step of a longer, older lesson
    // stays behind), and a directory of someone else's files is refused, untouched.
    void stepsReplaceAnEarlierRenderWhole()
    {
        const QString lessons = QStringLiteral(ATLAS_SOURCE_DIR "/lessons/");
        const Lesson longer = readLesson((lessons + "01-self-attention.md").toStdString());
        const Lesson shorter = readLesson((lessons + "03-masks.md").toStdString());
        QVERIFY(longer.steps.size() > shorter.steps.size());
        QTemporaryDir root;
        const std::string out = root.filePath("steps").toStdString();
        QCOMPARE(renderLessonSteps(longer, out, 320, 200).size(), longer.steps.size());
        QCOMPARE(renderLessonSteps(shorter, out, 320, 200).size(), shorter.steps.size());
        QCOMPARE(QDir(QString::fromStdString(out)).entryList(QDir::Files).size(), qsizetype(shorter.steps.size()));
        QFile mine(root.filePath("mine/notes.txt"));
        QVERIFY(QDir(root.path()).mkpath("mine") && mine.open(QIODevice::WriteOnly));
        mine.close();
        QVERIFY_THROWS_EXCEPTION(Error, renderLessonSteps(shorter, root.filePath("mine").toStdString(), 320, 200));
        QCOMPARE(QDir(root.filePath("mine")).entryList(QDir::Files), QStringList {"notes.txt"});
    }
};

QTEST_MAIN(TestLessons)
#include "tst_lessons.moc"
