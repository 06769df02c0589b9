#pragma once

#include "view/viewspec.h"

#include <string>
#include <vector>

// A lesson: one Markdown file in lessons/ with front matter and steps (docs/lessons.md). A step is a `## ` heading,
// its Markdown text, exactly one ```view block (a view spec, the JSON `render` reads), and optionally ```actions,
// ```question and ```notes blocks. Errors name the file, the line and the problem: "lessons/x.md:12: …".
namespace atlas {

// One thing a step does when it opens, after its view spec is applied (one line of an ```actions block).
struct LessonAction
{
    enum class Kind {
        RunTo, // run-to OP: step the program to after that op (or the op writing that tensor)
        Generate, // generate N [temperature=T] [top-k=K] [top-p=P] [seed=S]: N tokens with the KV cache
        Pad, // pad P[,P…]: toggle padding on those positions
        Param, // param KEY=VALUE: set a parameter of the spec's attention kernel
        // train TASK [steps=N] [seed=S] [lr=X batch=B positions=alibi experts=4 …]: a short run in the Train panel,
        // with `train`'s options (train/trainingrunoptions.h)
        Train,
    };
    Kind kind = Kind::RunTo;
    std::string target; // RunTo: the op or tensor; Train: the task; Param: "key=value"
    std::vector<int> positions; // Pad
    int count = 0; // Generate: tokens; Train: steps
    double temperature = 0; // Generate: 0 = greedy
    int topK = 0; // Generate: 0 = all
    double topP = 1; // Generate: 1 = all (nucleus sampling, engine/temperature.h)
    long long seed = 1; // Generate, Train
    // Train: the options of the run (but steps and seed) and of its model, in the line's order
    std::vector<std::pair<std::string, std::string>> trainOptions;
    int line = 0;
};

struct LessonQuestion
{
    enum class Kind {
        Choose, // multiple choice: pick the right options
        Predict, // predict, then reveal: click the key a head attends to most from `query`
    };
    Kind kind = Kind::Choose;
    std::string prompt;
    std::vector<std::string> choices; // Choose
    std::vector<int> correct; // Choose: indices into choices (at least one)
    int query = -1; // Predict: the query position
    int layer = -1, head = -1; // Predict: the head (-1: the step's spec's)
    int answer = -1; // Predict: the key the lesson says wins (-1: not stated); `lesson check` holds it to the model
    std::string explanation; // one line, shown after answering
    int line = 0;
};

struct LessonStep
{
    std::string title;
    std::string text; // Markdown, without the blocks
    ViewSpec spec;
    std::vector<LessonAction> actions;
    std::vector<LessonQuestion> questions;
    std::string notes; // the speaker's, shown on a second screen
    int line = 0; // of the heading
    int specLine = 0; // of the view block's first JSON line
};

struct Lesson
{
    std::string path;
    std::string title;
    std::string lecture; // which lecture it teaches
    int minutes = 0; // estimated time in class
    std::vector<std::string> models; // the models its steps use
    std::string introduction; // Markdown between the front matter and the first step
    std::vector<LessonStep> steps;
};

// Parses a lesson's text; `path` names it in errors. Throws atlas::Error "path:line: problem" for a syntax error
// (front matter, an unknown block or action, a view spec that does not parse, a question without an answer).
Lesson parseLesson(const std::string &text, const std::string &path);
// Reads and parses a lesson file.
Lesson readLesson(const std::string &path);
// A step as text in the format parseLesson reads: "Add current view as step" appends it to the lesson's file,
// leaving what the author wrote as it was.
std::string stepToText(const LessonStep &step);

struct TrainingRun;
// The run a train action asks for: its task, steps, seed, learning rate and model options, everything else as
// TrainOptions' defaults. The lesson check makes its model (trainingModelConfig); the Train panel shows it and
// starts it.
TrainingRun lessonTrainingRun(const LessonAction &action);

} // namespace atlas
