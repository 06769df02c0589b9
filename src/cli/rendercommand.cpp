#include "arguments.h"
#include "commands.h"
#include "io/atomicfile.h"
#include "io/limits.h"
#include "modelinput.h"
#include "util/error.h"
#include "view/viewspec.h"
#include "views/headlessrender.h"

#include <cstdio>

namespace atlas {

// Draws a view with no display,
// the run's trace held to the budget (default 8 GiB).
int renderCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "render");
    setWorkBudgetArguments(args);
    const std::string specPath = args.required("spec"), out = args.required("out");
    const auto [width, height] = args.imageSize("size", "1200x800");
    const ViewSpec spec = ViewSpec::fromJson(readFile(specPath, limits::kViewSpecBytes), specPath);

    const HeadlessApplication app;
    const std::string model = renderSpecToFile(spec, out, width, height, specPath, memoryBudgetArgument(args));
    std::printf("rendered %s view of %s to %s (%dx%d)\n", spec.view.c_str(), model.c_str(), out.c_str(), width, height);
    return 0;
}

} // namespace atlas
