#include "lesson/lessonlibrary.h"

#include "io/atomicfile.h"
#include "io/resourcepaths.h"
#include "lesson/lesson.h"
#include "util/error.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace atlas {

namespace fs = std::filesystem;

std::vector<std::string> lessonSearchPath()
{
    return resourceSearchPath("ATLAS_LESSONS_DIR", "lessons");
}

namespace {

constexpr char kCourseOutline[] = "course.md";

} // namespace

std::string lessonsDirectory()
{
    for (const std::string &dir : lessonSearchPath())
        if (!lessonFilesIn(dir).empty())
            return dir;
    return {};
}

std::vector<std::string> lessonFilesIn(const std::string &directory)
{
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(directory, ec)) {
        const fs::path &path = entry.path();
        if (entry.is_regular_file(ec) && path.extension() == ".md" && path.filename() != "README.md"
            && path.filename() != kCourseOutline)
            files.push_back(path.string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string courseOutlineIn(const std::string &directory)
{
    std::error_code ec;
    const fs::path outline = fs::path(directory) / kCourseOutline;
    return fs::is_regular_file(outline, ec) ? outline.string() : std::string();
}

std::vector<LessonEntry> listLessons(const std::string &directory)
{
    std::vector<LessonEntry> lessons;
    for (const std::string &file : lessonFilesIn(directory)) {
        LessonEntry entry;
        entry.path = file;
        try {
            const Lesson lesson = readLesson(entry.path);
            entry.title = lesson.title;
            entry.lecture = lesson.lecture;
            entry.minutes = lesson.minutes;
            entry.steps = int(lesson.steps.size());
        } catch (const Error &e) {
            entry.title = fs::path(file).filename().string();
            entry.problem = e.what();
        }
        lessons.push_back(std::move(entry));
    }
    return lessons;
}

void appendLessonStep(const std::string &path, const std::string &stepText)
{
    std::string text = readFile(path);
    if (!text.empty() && !text.ends_with('\n'))
        text += '\n';
    text += stepText;
    parseLesson(text, path); // throws "path:line: …" before anything is written
    writeFileAtomically(path, text);
}

} // namespace atlas
