// Every lesson shipped in lessons/ passes `lesson check` and every one of its steps renders headless.
#include "lesson/lessoncheck.h"
#include "views/headlessrender.h"

#include <QDir>
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
};

QTEST_MAIN(TestLessons)
#include "tst_lessons.moc"
