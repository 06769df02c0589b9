#include "arguments.h"
#include "commands.h"
#include "engine/engine.h"
#include "lesson/lessoncheck.h"
#include "lesson/lessonlibrary.h"
#include "modelinput.h"
#include "util/error.h"
#include "views/headlessrender.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace atlas {

namespace {

namespace fs = std::filesystem;

// The lesson files a path names: the file itself, or a directory's lessons (lessonFilesIn), sorted.
std::vector<std::string> lessonFiles(const std::string &path)
{
    if (!fs::exists(path))
        throw Error(path + ": no such file or directory");
    if (!fs::is_directory(path))
        return {path};
    const std::vector<std::string> files = lessonFilesIn(path);
    if (files.empty())
        throw Error(path + ": no lesson (.md) files in this directory");
    return files;
}

// Why steps of `lesson` cannot be drawn, one message a step, each naming its file and line: the same preparation
// (model run, drawProblem, analysis) that render, lesson render and lesson export do before they draw, the analysis
// on the least work (held-out sweeps on two examples, timings once): every code path runs, in seconds.
std::vector<std::string> drawingProblems(const Lesson &lesson)
{
    std::vector<std::string> problems;
    for (const LessonStep &step : lesson.steps) {
        try {
            preparedViewInput(
                stepViewSpec(lesson, step), stepSource(lesson, step), size_t(WorkBudget::process().bytes), true);
        } catch (const Error &e) {
            problems.push_back(e.what());
        }
    }
    return problems;
}

// lesson check [FILE|DIR ...]: parse and check every lesson, printing each problem as file:line: message.
int check(const std::vector<std::string> &paths)
{
    int problems = 0, lessons = 0, steps = 0;
    std::vector<std::string> roots = paths;
    if (roots.empty()) { // the app's own lessons, where the Lessons menu finds them
        const std::string dir = lessonsDirectory();
        if (dir.empty()) {
            std::string looked;
            for (const std::string &d : lessonSearchPath())
                looked += (looked.empty() ? "" : ", ") + d;
            throw Error("no lessons found (looked in " + looked + ")");
        }
        std::printf("lesson check: the lessons in %s\n", dir.c_str());
        roots.push_back(dir);
    }
    for (const std::string &root : roots)
        for (const std::string &file : lessonFiles(root)) {
            try {
                const Lesson lesson = readLesson(file);
                ++lessons;
                steps += int(lesson.steps.size());
                std::vector<std::string> found = checkLesson(lesson);
                if (found.empty()) // each step prepared as render prepares it: a step that cannot be drawn fails
                    found = drawingProblems(lesson);
                for (const std::string &problem : found) {
                    std::fprintf(stderr, "%s\n", problem.c_str());
                    ++problems;
                }
            } catch (const Error &e) {
                std::fprintf(stderr, "%s\n", e.what());
                ++problems;
            }
        }
    if (problems > 0) {
        std::fprintf(stderr, "lesson check: %d problem(s)\n", problems);
        return 1;
    }
    std::printf("lesson check: %d lesson(s), %d step(s), no problems\n", lessons, steps);
    return 0;
}

// Lessons are checked before they are drawn, so a broken step fails with its file and line.
Lesson checkedLesson(const std::string &file)
{
    const Lesson lesson = readLesson(file);
    const std::vector<std::string> problems = checkLesson(lesson);
    if (!problems.empty())
        throw Error(problems.front()
            + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more: run `lesson check`)"
                                   : std::string()));
    return lesson;
}

} // namespace

int lessonCommand(const CommandArgs &argv)
{
    if (argv.empty())
        throw Error("usage: lesson check [FILE|DIR ...] | lesson render FILE --out DIR | lesson export FILE --out "
                    "FILE.pdf | lesson export FILE --out DIR --html");
    const std::string verb = argv[0];
    auto firstOption
        = std::find_if(argv.begin() + 1, argv.end(), [](const std::string &a) { return a.starts_with("--"); });
    const std::vector<std::string> paths(argv.begin() + 1, firstOption);
    const Arguments args(CommandArgs(firstOption, argv.end()), "lesson");
    setWorkBudgetArguments(args);
    if (verb == "check")
        return check(paths);
    if (verb != "render" && verb != "export")
        throw Error("unknown lesson command '" + verb + "' (expected check, render or export)");
    if (paths.size() != 1)
        throw Error("lesson " + verb + " takes one lesson file");
    const Lesson lesson = checkedLesson(paths.front());
    const std::string out = args.required("out");
    const HeadlessApplication app;
    if (verb == "render") {
        const auto [width, height] = args.imageSize("size", "1200x800");
        const auto files = renderLessonSteps(lesson, out, width, height);
        std::printf("rendered %zu steps of %s to %s\n", files.size(), paths.front().c_str(), out.c_str());
    } else if (args.flag("html")) {
        const int drawn = exportLessonHtml(lesson, out, !args.flag("no-answers"));
        std::printf("wrote %s/index.html (%zu steps, %d drawn in the page from their numbers, the others as "
                    "pictures)\n",
            out.c_str(), lesson.steps.size(), drawn);
    } else {
        if (!out.ends_with(".pdf"))
            throw Error("--out: '" + out + "' is not a .pdf (add --html to write a web page into a directory)");
        const int pages = exportLessonPdf(lesson, out, !args.flag("no-answers"));
        std::printf("wrote %s (%d pages: each step's view, then its text)\n", out.c_str(), pages);
    }
    return 0;
}

} // namespace atlas
