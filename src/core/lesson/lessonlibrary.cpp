#include "lesson/lessonlibrary.h"

#include "io/atomicfile.h"
#include "lesson/lesson.h"
#include "util/error.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace atlas {

namespace fs = std::filesystem;

std::vector<std::string> lessonSearchPath()
{
    std::vector<std::string> dirs;
    if (const char *env = std::getenv("ATLAS_LESSONS_DIR"))
        dirs.emplace_back(env);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        dirs.push_back((exe.parent_path() / "lessons").string());
        dirs.push_back((exe.parent_path().parent_path() / "share/transformer-atlas/lessons").string());
    }
    dirs.emplace_back(ATLAS_LESSONS_DIR);
    return dirs;
}

std::string lessonsDirectory()
{
    for (const std::string &dir : lessonSearchPath()) {
        std::error_code ec;
        for (const auto &entry : fs::directory_iterator(dir, ec))
            if (entry.path().extension() == ".md")
                return dir;
    }
    return {};
}

std::vector<LessonEntry> listLessons(const std::string &directory)
{
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(directory, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".md")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    std::vector<LessonEntry> lessons;
    for (const fs::path &file : files) {
        LessonEntry entry;
        entry.path = file.string();
        try {
            const Lesson lesson = readLesson(entry.path);
            entry.title = lesson.title;
            entry.lecture = lesson.lecture;
            entry.minutes = lesson.minutes;
            entry.steps = int(lesson.steps.size());
        } catch (const Error &e) {
            entry.title = file.filename().string();
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
