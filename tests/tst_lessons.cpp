// Every lesson shipped in lessons/ passes `lesson check` and every one of its steps renders headless; the interactive
// lesson page draws every view it registers.
#include "lesson/lessoncheck.h"
#include "lesson/lessonlibrary.h"
#include "testbundle.h"
#include "util/error.h"
#include "util/sanitizers.h"
#include "view/viewkinds.h"
#include "viewmodel/lessonpage.h"
#include "views/headlessrender.h"
#include "views/view.h"
#include "views/viewexport.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <set>

using namespace atlas;

namespace {

// The file names of the shipped lessons (not the course outline or a README).
QStringList lessonNames()
{
    QStringList names;
    for (const std::string &file : lessonFilesIn(ATLAS_SOURCE_DIR "/lessons"))
        names << QString::fromStdString(std::filesystem::path(file).filename().string());
    return names;
}

} // namespace

class TestLessons : public QObject
{
    Q_OBJECT

private slots:
    // Issue 63: the course outline (lessons/course.md) links every lesson once, with the minutes its front matter
    // gives, and each class it plans fits a 90-minute slot; the Lessons panel does not list it as a lesson.
    void theCourseOutlinePlansEveryLessonOnce()
    {
        const QString outline = QString::fromStdString(courseOutlineIn(ATLAS_SOURCE_DIR "/lessons"));
        QVERIFY(outline.endsWith("/course.md"));
        QFile file(outline);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        const QRegularExpression link(QStringLiteral("\\]\\(([0-9][^)]*\\.md)\\): (\\d+) min"));
        QStringList linked;
        int classMinutes = 0, classes = 0;
        const auto endClass = [&] {
            QVERIFY2(classMinutes <= 90, qPrintable(QString("a class of %1 minutes").arg(classMinutes)));
            classMinutes = 0;
        };
        for (const QString &line : text.split('\n')) {
            if (line.startsWith("### Class ")) {
                endClass();
                ++classes;
            }
            const QRegularExpressionMatch m = link.match(line);
            if (!m.hasMatch())
                continue;
            linked << m.captured(1);
            const Lesson lesson = readLesson((ATLAS_SOURCE_DIR "/lessons/" + m.captured(1)).toStdString());
            QCOMPARE(m.captured(2).toInt(), lesson.minutes);
            classMinutes += lesson.minutes;
        }
        endClass();
        QCOMPARE(classes, 11);
        QStringList sorted = linked;
        sorted.sort();
        QCOMPARE(sorted, lessonNames());
        QVERIFY(!text.contains('@')); // every measured figure filled in
        for (const LessonEntry &entry : listLessons(ATLAS_SOURCE_DIR "/lessons"))
            QVERIFY2(!QString::fromStdString(entry.path).endsWith("course.md"), "listed as a lesson");
    }

    // Each view the interactive lesson page draws (viewmodel/lessonpage.h) is a view kind, and the page's script
    // has a drawing for it: a registration without one, or a drawing without a registration, fails here.
    void theLessonPageDrawsEveryViewItRegisters()
    {
        QFile script(ATLAS_SOURCE_DIR "/resources/lesson-page/page.js");
        QVERIFY(script.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(script.readAll());
        const qsizetype table = text.indexOf("const draw = {");
        QVERIFY(table >= 0);
        const QString drawTable = text.mid(table, text.indexOf("};", table) - table);
        int drawn = 0;
        for (const LessonPageView &v : lessonPageViews()) {
            QVERIFY2(findViewKind(v.view), v.view.c_str());
            QVERIFY2(drawTable.contains(QRegularExpression(
                         QString("[\\s{\"]%1\"?:").arg(QRegularExpression::escape(QString::fromStdString(v.view))))),
                v.view.c_str());
            ++drawn;
        }
        QCOMPARE(drawTable.count(":"), drawn);
    }

    void everyLessonChecksAndEveryStepRenders_data()
    {
        QTest::addColumn<QString>("path");
        for (const char *folder : {ATLAS_SOURCE_DIR "/lessons", ATLAS_SOURCE_DIR "/lessons/homework"}) {
            const std::vector<std::string> files = lessonFilesIn(folder);
            QVERIFY(!files.empty());
            for (const std::string &f : files)
                QTest::newRow(std::filesystem::path(f).filename().c_str()) << QString::fromStdString(f);
        }
    }

    void everyLessonChecksAndEveryStepRenders()
    {
        QFETCH(QString, path);
        const Lesson lesson = readLesson(path.toStdString());
        const std::vector<std::string> problems = checkLesson(lesson);
        QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
        QVERIFY2(lesson.steps.size() >= 5 && lesson.steps.size() <= 20, "a lesson has 5 to 20 steps");
#if defined(ATLAS_ADDRESS_SANITIZER)
        // Under the sanitizers (CI's second stage) each step is drawn from its analysis on the least work, as `lesson
        // check` runs it: all of the code a step meets, on two held-out examples instead of hundreds; and only the
        // first step of each view on each model (as tst_lessonwalk walks them there): the sanitizers look for memory
        // errors, which the same view on the same model would meet again. The normal build renders every step whole.
        static std::set<std::pair<std::string, std::string>> drawn;
        for (const LessonStep &step : lesson.steps) {
            const ViewSpec spec = stepViewSpec(lesson, step);
            if (!drawn.emplace(spec.view, spec.model).second)
                continue;
            const std::string source = stepSource(lesson, step);
            const std::unique_ptr<View> view
                = preparedView(spec, preparedViewInput(spec, source, size_t(8) << 30, true), 960, 600);
            QCOMPARE(renderViewImage(view.get(), QSize(960, 600)).size(), QSize(960, 600));
        }
#else
        QTemporaryDir out;
        const std::vector<std::string> images = renderLessonSteps(lesson, out.path().toStdString(), 960, 600);
        QCOMPARE(images.size(), lesson.steps.size());
        for (const std::string &image : images)
            QCOMPARE(QImage(QString::fromStdString(image)).size(), QSize(960, 600));
#endif
    }

    // The interactive page opens each step on what its spec chooses, as the app's view of the same spec does: a
    // tensor's slice is the spec's head (lesson 01 follows head 3 through q, k, scores and probabilities), an attention
    // figure's layer and head are the spec's, the next-token figure's position the spec's.
    void everyPageFigureShowsItsStepsChoice()
    {
        const QDir dir(ATLAS_SOURCE_DIR "/lessons");
        int slices = 0, heads = 0;
        for (const QString &f : lessonNames()) {
            const Lesson lesson = readLesson(dir.filePath(f).toStdString());
            for (const LessonStep &step : lesson.steps) {
                const ViewSpec spec = stepViewSpec(lesson, step);
                const LessonPageView *drawing = lessonPageView(spec);
                if (drawing == nullptr)
                    continue;
                const ViewInput input = preparedViewInput(spec, stepSource(lesson, step));
                const nlohmann::json figure = drawing->figure(input, spec);
                const QByteArray where = (f + " line " + QString::number(step.line)).toUtf8();
                if (figure.is_null())
                    continue;
                if (figure.contains("slices") && figure["slices"].get<int>() > 1) {
                    QVERIFY2(figure["slice"].get<int>() == std::clamp(spec.head, 0, figure["slices"].get<int>() - 1),
                        where.constData());
                    slices += spec.head > 0;
                }
                if (figure.contains("heads")) {
                    QVERIFY2(figure["layer"].get<int>() == spec.layer && figure["head"].get<int>() == spec.head,
                        where.constData());
                    ++heads;
                }
                if (figure.value("draw", std::string()) == "next-token" && spec.position >= 0)
                    QVERIFY2(figure["position"].get<int>() == spec.position, where.constData());
            }
        }
        QVERIFY(slices >= 4); // lesson 01's steps on head 3
        QVERIFY(heads > 0);
    }

    // docs/lessons.md's table lists every lesson with its own title's count of steps and minutes.
    void theDocsTableMatchesTheLessons()
    {
        QFile docs(ATLAS_SOURCE_DIR "/docs/lessons.md");
        QVERIFY(docs.open(QIODevice::ReadOnly));
        const QStringList rows = QString::fromUtf8(docs.readAll())
                                     .split('\n')
                                     .filter(QRegularExpression(QStringLiteral("^\\| \\[.*\\]\\(\\.\\./lessons/")));
        const QDir dir(ATLAS_SOURCE_DIR "/lessons");
        const QStringList files = lessonNames();
        QCOMPARE(rows.size(), files.size());
        for (const QString &f : files) {
            const Lesson lesson = readLesson(dir.filePath(f).toStdString());
            const QStringList row = rows.filter("[" + f + "]");
            QVERIFY2(row.size() == 1, qPrintable(f + " has no row in docs/lessons.md"));
            const QStringList cells = row.front().split(" | ");
            QVERIFY2(cells.size() >= 5, qPrintable(row.front()));
            QVERIFY2(cells[2].toInt() == int(lesson.steps.size()) && cells[3].toInt() == lesson.minutes,
                qPrintable(QString("%1: docs/lessons.md says %2 steps and %3 minutes, the lesson has %4 and %5")
                               .arg(f, cells[2], cells[3])
                               .arg(lesson.steps.size())
                               .arg(lesson.minutes)));
        }
    }

    // Each lesson says which of the course's four lectures it teaches, by title and number (../shared/lectures: 000,
    // 001, 002 and 004; there is no 003), so that the outline and the Lessons menu can find it.
    void everyLessonNamesLecturesOfTheCourse()
    {
        const QStringList titles = {"Efficient Transformer Architectures (000)",
            "Architecture-specific tricks II (001)", "Deep dive on transformers (002)", "Transformer (004)"};
        const QRegularExpression number(QStringLiteral("\\((\\d{3})\\)"));
        const QDir dir(ATLAS_SOURCE_DIR "/lessons");
        for (const QString &f : lessonNames()) {
            const QString lecture = QString::fromStdString(readLesson(dir.filePath(f).toStdString()).lecture);
            QVERIFY2(std::any_of(titles.begin(), titles.end(), [&](const QString &t) { return lecture.contains(t); }),
                qPrintable(f + ": its lecture names none of the course's: " + lecture));
            for (auto it = number.globalMatch(lecture); it.hasNext();) {
                const QString n = it.next().captured(1);
                QVERIFY2(n == "000" || n == "001" || n == "002" || n == "004",
                    qPrintable(f + ": lecture " + n + " is not one of the course's (000, 001, 002, 004)"));
            }
        }
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
