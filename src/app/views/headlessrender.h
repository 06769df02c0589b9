#pragma once

#include "lesson/lesson.h"
#include "view/viewspec.h"
#include "viewmodel/viewinput.h"

#include <QRect>
#include <QSize>

#include <memory>
#include <string>
#include <vector>

class QApplication;

namespace atlas {

class View;

// The views for headless subcommands (render, bench-view): the command line never touches a widget itself.

// The Qt application a headless subcommand draws in: the offscreen platform unless the user chose one, so they
// run on machines without a display. Create one before drawing.
class HeadlessApplication
{
public:
    HeadlessApplication();
    ~HeadlessApplication();
    HeadlessApplication(const HeadlessApplication &) = delete;
    HeadlessApplication &operator=(const HeadlessApplication &) = delete;

private:
    int m_argc = 1;
    char m_name[18] = "transformer-atlas";
    char *m_argv[2] = {m_name, nullptr};
    std::unique_ptr<QApplication> m_app;
};

// The spec's model run on its input (to the spec's op) and its analysis computed, as every headless drawing
// (render, lesson render and export, lesson check) prepares it. Throws atlas::Error naming `source` and the key
// when the view cannot be drawn (drawProblem: a layer or head the model lacks, a missing tensor; an analysis that
// cannot run: experts on a dense model, fills without a [MASK] …), instead of letting a picture of the message
// pass for a figure. `memoryBudget` bounds the run's trace, as the app's Run ▸ Trace Memory Budget. `checkOnly`
// (lesson check) runs the analysis on the least work: what fails fails, but its numbers are not for showing.
ViewInput preparedViewInput(
    const ViewSpec &spec, const std::string &source, size_t memoryBudget = size_t(8) << 30, bool checkOnly = false);

// The spec's view, ready to draw headless: its model run, its analysis computed, the widget sized width × height.
// A view that cannot be drawn draws its message (tests of every view kind on one model use that).
std::unique_ptr<View> headlessView(const ViewSpec &spec, int width, int height);
// The same for a figure: preparedViewInput's checks first, so a view that cannot be drawn is refused by name. `zoom`
// scales its text as the app's zoom does (a printed figure's).
std::unique_ptr<View> drawableView(const ViewSpec &spec, int width, int height, const std::string &source,
    size_t memoryBudget = size_t(8) << 30, double zoom = 1.0);

// The spec's view drawing an input preparedViewInput made, sized width × height, its text scaled by `zoom`.
std::unique_ptr<View> preparedView(
    const ViewSpec &spec, const ViewInput &input, int width, int height, double zoom = 1.0);

// Runs the spec's model on its input, computes its analysis, draws its view at width × height pixels and writes
// `path` (.png, .svg or .pdf, atomically). Returns the model's name. Throws atlas::Error naming `source` and the
// key when the view cannot be drawn (drawProblem: a layer or head the model lacks, a missing tensor, an analysis
// that cannot run), instead of writing a picture of the message.
// `memoryBudget` bounds the trace of the run, as the app's Run ▸ Trace Memory Budget (engine/engine.h).
std::string renderSpecToFile(const ViewSpec &spec, const std::string &path, int width, int height,
    const std::string &source = "view spec", size_t memoryBudget = size_t(8) << 30);

// Lessons for reading offline (`lesson render`, `lesson export`). Each step shows stepViewSpec(lesson, step).
// Writes every step's view as step-01.png … into `directory` as a whole (made if missing; an earlier render there is
// replaced, a directory of other files refused); returns the paths.
std::vector<std::string> renderLessonSteps(const Lesson &lesson, const std::string &directory, int width, int height);
// Two A4 landscape pages per step in a PDF at `path`: its view as large as the page holds, then its text and
// questions, with their answers unless `answers` is false (the students' copy). A step showing the step before's view
// unchanged has its text page only, naming the page of the view. Returns the pages written.
int exportLessonPdf(const Lesson &lesson, const std::string &path, bool answers = true);
// Where the PDF draws a step's view: the page, the view's size as drawn and as placed on the page (in the PDF's
// pixels), and the size in points of one pixel of the view as drawn (a 13 px label prints at 13 × that pt).
struct PdfFigureLayout
{
    QRect page;
    QSize drawn; // the view's size as drawn for the PDF
    double zoom = 1; // its text's zoom (as the app's)
    QSize figure; // its size on the page
    double pointsPerFigurePixel = 0;
};
PdfFigureLayout lessonPdfFigureLayout();
// A self-contained interactive page, `directory`/index.html, that works offline: the views viewmodel/lessonpage.h
// names drawn by its script from the step's numbers (hover values, layer and head switching), every other view as
// the app's picture; questions that check the answer and predictions that reveal the head's row. Without `answers`,
// the choose questions carry neither their answers nor their explanations (the students' copy, as the PDF's).
// Returns how many steps the page draws from their numbers.
int exportLessonHtml(const Lesson &lesson, const std::string &directory, bool answers = true);

// What a user waits for when switching layer or head in the spec's view: setting the spec, the queued replot and
// the repaint of a shown 1200 × 1000 window, `repeat` times over the layers and heads, the run traced under
// `memoryBudget` (past it, attention is kept on demand); then 16 notches of the wheel on its heat map and the tooltip
// text of 64 cells, as the mouse asks for them. A run that keeps only each block's input recomputes the layer's
// queries and keys within the switch's time, as the session's worker does before the view has them. Milliseconds,
// sorted.
struct ViewSwitchTimes
{
    std::string model;
    std::vector<double> milliseconds; // until the picture is complete (a worker's head or pooling landed, repainted)
    std::vector<double> blocked; // the window's thread held by the switch itself
    std::vector<double> hovers; // a hover's tooltip text over cells of the last picture (empty: the view has no map)
    std::vector<double> zooms; // a notch of the wheel on its heat map, to the complete picture (8 in, then 8 out)
    // A run keeping only each block's input: the new layer's queries and keys recomputed, part of `milliseconds`
    std::vector<double> recomputes;
};
ViewSwitchTimes timeViewSwitching(ViewSpec spec, int repeat, size_t memoryBudget);

} // namespace atlas
