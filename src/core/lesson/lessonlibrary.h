#pragma once

#include <string>
#include <vector>

namespace atlas {

// A lesson file as the Lessons menu lists it. A file that does not parse is listed with its problem, so an author
// sees the typo instead of a lesson that silently vanished.
struct LessonEntry
{
    std::string path;
    std::string title; // the file name when the file does not parse
    std::string lecture;
    int minutes = 0;
    int steps = 0;
    std::string problem; // "path:line: …" when the file does not parse
};

// Where lessons are looked for, first folder with lessons wins: $ATLAS_LESSONS_DIR, then
// <exe dir>/../share/transformer-atlas/lessons (io/resourcepaths.h).
std::vector<std::string> lessonSearchPath();
std::string lessonsDirectory(); // the first folder of lessonSearchPath() holding a lesson; "" when none does

// The lesson files of `directory`, in file-name order (lessons are numbered: 01-…, 02-…): every .md file but a
// README.md and the course outline.
std::vector<std::string> lessonFilesIn(const std::string &directory);
// The course outline beside the lessons (course.md: the lessons ordered into classes, with links to them), or ""
// when `directory` has none.
std::string courseOutlineIn(const std::string &directory);

// Every lesson of `directory` (lessonFilesIn), parsed for the Lessons panel.
std::vector<LessonEntry> listLessons(const std::string &directory);

// Appends `stepText` (stepToText) to the lesson file at `path`, atomically; the result must still parse. Throws
// atlas::Error naming the file when it cannot be read, written, or would no longer parse; the file is then
// unchanged.
void appendLessonStep(const std::string &path, const std::string &stepText);

} // namespace atlas
