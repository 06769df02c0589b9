// A step's ```actions block from a stranger (docs/lessons.md): each line parsed as an action, or the lesson refused
// with atlas::Error naming file:line; an accepted train action becomes a training run whose options are checked
// (lessonTrainingRun, trainingModelConfig) as the lesson check does, without training it.
#include "lesson/lesson.h"
#include "train/trainingsetup.h"
#include "util/error.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const std::string head = "---\ntitle: t\nlecture: l\nminutes: 5\nmodels: reverse\n---\n\n## S\n\n"
                                    "```view\n{\"view\": \"attention\", \"model\": \"reverse\", \"text\": \"ab>ba\"}\n"
                                    "```\n```actions\n";
    try {
        const atlas::Lesson lesson = atlas::parseLesson(
            head + std::string(reinterpret_cast<const char *>(data), size) + "\n```\n", "lesson.md");
        for (const atlas::LessonStep &step : lesson.steps)
            for (const atlas::LessonAction &action : step.actions)
                if (action.kind == atlas::LessonAction::Kind::Train)
                    atlas::trainingModelConfig(atlas::lessonTrainingRun(action));
    } catch (const atlas::Error &) {
    }
    return 0;
}
