#include "arguments.h"
#include "commands.h"
#include "modelinput.h"
#include "util/error.h"
#include "views/headlessrender.h"

#include <cstdio>
#include <random>

namespace atlas {

// Times what a user waits for when switching layer or head (setting the spec, the queued replot and the repaint of
// the window) and when hovering over the heat map.
int benchViewCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "bench-view");
    const HeadlessApplication app;

    ViewSpec spec;
    spec.model = args.value("model", "tiny-bytes");
    spec.view = args.value("view", "attention");
    const int length = args.intValue("length", 2048, 1, 1 << 20), repeat = args.intValue("repeat", 20, 1, 1 << 20);
    std::mt19937 rng(3);
    for (int i = 0; i < length; ++i)
        spec.tokens.push_back(static_cast<int>('a' + rng() % 26));
    const ViewSwitchTimes times = timeViewSwitching(spec, repeat, memoryBudgetArgument(args));
    const std::vector<double> &ms = times.milliseconds, &held = times.blocked;
    std::printf("%s view, %d tokens, model %s: switching layer/head median %.1f ms (min %.1f, max %.1f) to the "
                "complete picture, the window's thread held median %.1f ms (max %.1f), over %d switches\n",
        spec.view.c_str(), length, times.model.c_str(), ms[ms.size() / 2], ms.front(), ms.back(), held[held.size() / 2],
        held.back(), repeat);
    if (const std::vector<double> &made = times.recomputes; !made.empty())
        std::printf(
            "each switch first recomputed the layer's queries and keys (the run keeps only each block's input): "
            "median %.1f ms (max %.1f)\n",
            made[made.size() / 2], made.back());
    if (const std::vector<double> &zooms = times.zooms; !zooms.empty())
        std::printf("a notch of the wheel (zooming in, then out) median %.1f ms (max %.1f) to the complete picture\n",
            zooms[zooms.size() / 2], zooms.back());
    if (const std::vector<double> &hovers = times.hovers; !hovers.empty())
        std::printf("a hover's tooltip text median %.2f ms (max %.2f) over %zu cells\n", hovers[hovers.size() / 2],
            hovers.back(), hovers.size());
    return 0;
}

} // namespace atlas
