// A lesson file from a stranger (docs/lessons.md): parsed, or refused with atlas::Error naming file:line; every
// step of an accepted lesson can be written back as text.
#include "lesson/lesson.h"
#include "util/error.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try {
        const atlas::Lesson lesson
            = atlas::parseLesson(std::string(reinterpret_cast<const char *>(data), size), "lesson.md");
        for (const atlas::LessonStep &step : lesson.steps)
            atlas::stepToText(step);
    } catch (const atlas::Error &) {
    }
    return 0;
}
