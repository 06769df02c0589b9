#pragma once

#include "lesson/lesson.h"
#include "model/modelconfig.h"
#include "trace/trace.h"

#include <string>
#include <vector>

namespace atlas {

// The answer of a predict question on a traced run: the key the head attends to most from the query, and the
// query's whole row of weights (what the app reveals).
struct PredictAnswer
{
    int key = -1;
    double weight = 0;
    std::vector<float> row; // the query's attention weights over the keys (T)
};

// The question's layer and head (or the step spec's), read from layer.L.attn.probs in `trace` (of the spec's site
// in `model`: an encoder-decoder's cross-attention …). Throws atlas::Error when the trace lacks the tensor or the
// query, layer or head is out of range.
PredictAnswer predictAnswer(
    const Trace &trace, const LessonQuestion &question, const ViewSpec &spec, const ModelConfig &model);

// The view a step shows once its actions have run: run-to sets the stepper position, pad toggles padding, param
// sets a kernel parameter, generate appends the tokens the model generates (deterministic: greedy, or sampled
// from the action's seed). Train starts a run in the app and leaves the view as it is. Throws atlas::Error.
ViewSpec stepViewSpec(const Lesson &lesson, const LessonStep &step);
// Where a step's view is written, for messages about it: the lesson's path and the step's line.
inline std::string stepSource(const Lesson &lesson, const LessonStep &step)
{
    return lesson.path + ":" + std::to_string(step.line);
}

// The step's view as the class first sees it: with a predict question, its query's row veiled (on its layer and
// head) so that the heat map does not give the answer away before Reveal.
ViewSpec beforeReveal(ViewSpec spec, const LessonStep &step);

// A model a lesson names: a built-in name, or a directory (relative paths are relative to the lesson's file).
std::string lessonModelPath(const Lesson &lesson, const std::string &model);

// Everything parseLesson cannot see: every model exists; every step's spec names an input the model can run, a
// layer, head, tensor and op it has, a valid kernel; every action fits (its op exists, its positions lie in the
// input, its task exists); every question fits the input, and a predict question's stated answer is the one the
// model gives. Returns "path:line: problem" for each problem; empty when the lesson is sound.
std::vector<std::string> checkLesson(const Lesson &lesson);

} // namespace atlas
