#pragma once

#include "view/viewspec.h"

#include <memory>
#include <string>
#include <vector>

class QApplication;

namespace atlas {

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

// Runs the spec's model on its input, computes its analysis, draws its view at width × height pixels and writes
// `path` (.png, .svg or .pdf, atomically). Returns the model's name. Throws atlas::Error.
std::string renderSpecToFile(const ViewSpec &spec, const std::string &path, int width, int height);

// What a user waits for when switching layer or head in the spec's view: setting the spec, the queued replot and
// the repaint of a shown 1200 × 1000 window, `repeat` times over the layers and heads. Milliseconds, sorted.
struct ViewSwitchTimes
{
    std::string model;
    std::vector<double> milliseconds;
};
ViewSwitchTimes timeViewSwitching(ViewSpec spec, int repeat);

} // namespace atlas
