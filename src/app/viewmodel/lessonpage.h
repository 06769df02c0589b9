#pragma once

#include "lesson/lesson.h"
#include "view/viewspec.h"
#include "viewmodel/viewinput.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace atlas {

// What the interactive lesson page (`lesson export --html`, resources/lesson-page/) draws a step from: the numbers
// of the step's run that the app's view shows, as JSON for the page's script.

// A view the page draws itself from the run's numbers (hover values, layer and head switching); any other view is
// shown there as the app's picture of it.
struct LessonPageView
{
    std::string view; // the view kind
    // Its figure on `input` (prepared as for drawing: its analysis computed), or null when the page shows a picture
    // instead: numbers too many for a page (kLessonPageValueLimit), or none traced yet. Attention views carry every
    // layer and head the run has traced (layer and head switching) while that fits, else the step's layer.
    std::function<nlohmann::json(const ViewInput &, const ViewSpec &)> figure;
    const char *readoutHint; // what the figure's readout says before the reader hovers
};
const std::vector<LessonPageView> &lessonPageViews();
// The page's drawing of `spec`'s view, or nullptr for a picture (a view it does not draw, or two runs compared).
const LessonPageView *lessonPageView(const ViewSpec &spec);
// The most numbers one figure puts in the page (about 4 MB of text).
inline constexpr size_t kLessonPageValueLimit = 400000;

// The step's questions for the page. A choose question carries its right choices and explanation only when
// `answers` (the students' copy has neither, as in the PDF); a predict question carries the model's answer, read
// from the run (predictAnswer), with its explanation only when `answers`: the page reveals the head's row.
nlohmann::json lessonPageQuestions(const LessonStep &step, const ViewInput &input, const ViewSpec &spec, bool answers);

} // namespace atlas
