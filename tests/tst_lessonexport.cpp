// `lesson export` as a lecturer runs it: the teacher's copy with the answers and the students' without, as an
// interactive page and as a PDF handout that draws a view once however many steps show it.
#include "clitesting.h"
#include "testbundle.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

class TestLessonExport : public QObject
{
    Q_OBJECT

    using Result = atlas::testing::CliResult;
    static Result run(const QStringList &args) { return atlas::testing::runCli(args); }

private slots:
    // The teacher's export carries each question's answer; the students' (--no-answers) the questions alone. The
    // lesson's steps compare two runs, which the page shows as the app's pictures. (What the page draws itself is
    // tested in a browser: tests/tools/check_lesson_page.py.)
    void lessonExportWithAndWithoutAnswers()
    {
        QTemporaryDir dir;
        const QString lesson = ATLAS_SOURCE_DIR "/lessons/18-side-by-side.md";
        Result r = run({"lesson", "export", lesson, "--out", dir.path() + "/teacher", "--html"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = run({"lesson", "export", lesson, "--out", dir.path() + "/student", "--html", "--no-answers"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto read = [](const QString &path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
        };
        const QString teacher = read(dir.path() + "/teacher/index.html"),
                      student = read(dir.path() + "/student/index.html");
        const QString explanation = "Nothing forces two training runs to split the work the same way";
        QVERIFY(teacher.contains(explanation) && teacher.contains("\"correct\":["));
        QVERIFY(!student.contains(explanation) && !student.contains("\"correct\":["));
        QVERIFY(student.contains("Both models are right on every example")); // the question itself stays
        QCOMPARE(student.count("data:image/png"), 5); // two runs: the app's pictures (the browser test: the rest)
        r = run({"lesson", "export", lesson, "--out", dir.path() + "/student.pdf", "--no-answers"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(QFileInfo(dir.path() + "/student.pdf").size() > 10000);
    }

    // A step that shows the view of the step before, unchanged, gets its text page only in the PDF, which says where
    // the view is: three steps, the second on the first's view, make five pages, not six.
    void lessonPdfDrawsARepeatedViewOnce()
    {
        QTemporaryDir dir;
        const QString view = "```view\n{\"view\": \"mask\", \"model\": \"tiny-bytes\", \"text\": \"The cat.\"}\n```\n";
        const QString other
            = "```view\n{\"view\": \"attention\", \"model\": \"tiny-bytes\", \"text\": \"The cat.\"}\n```\n";
        QFile lesson(dir.filePath("repeat.md"));
        QVERIFY(lesson.open(QIODevice::WriteOnly));
        lesson.write(("---\ntitle: Repeat\nlecture: Transformer (004): masks\nminutes: 5\nmodels: tiny-bytes\n---\n\n"
                      "## One\n\nThe left panel.\n\n"
            + view + "\n## Two\n\nThe right panel.\n\n" + view + "\n## Three\n\nAnother view.\n\n" + other)
                         .toUtf8());
        lesson.close();
        const Result r = run({"lesson", "export", lesson.fileName(), "--out", dir.filePath("repeat.pdf")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("(5 pages"), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestLessonExport)
#include "tst_lessonexport.moc"
