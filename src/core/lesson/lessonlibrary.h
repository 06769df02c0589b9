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

// Where lessons are looked for, first folder with lessons wins: $ATLAS_LESSONS_DIR, <exe dir>/lessons,
// <exe dir>/../share/transformer-atlas/lessons, then the source tree's lessons/.
std::vector<std::string> lessonSearchPath();
std::string lessonsDirectory(); // the first folder of lessonSearchPath() holding a lesson; "" when none does

// Every *.md file in `directory`, in file-name order (lessons are numbered: 01-…, 02-…).
std::vector<LessonEntry> listLessons(const std::string &directory);

// Appends `stepText` (stepToText) to the lesson file at `path`, atomically; the result must still parse. Throws
// atlas::Error naming the file when it cannot be read, written, or would no longer parse; the file is then
// unchanged.
void appendLessonStep(const std::string &path, const std::string &stepText);

} // namespace atlas
