#include "analysis/headpatterns.h"
#include "arguments.h"
#include "commands.h"
#include "model/builtinmodels.h"

#include <cstdio>

namespace atlas {

// For each pattern of the task, the attention mass every head puts where the pattern says it should, on held-out
// examples. (The options: commandtable.cpp.)
int analyzeHeadsCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "analyze-heads");
    const auto model = loadModel(args.required("model"));
    const auto task = Task::create(args.required("task"));
    const int examples = args.intValue("examples", 200, 1, 100000);
    for (const HeadPattern &pattern : headPatterns(task->name())) {
        std::printf("%s: %s\n", pattern.name.c_str(), pattern.description.c_str());
        const auto mass = patternMass(model, *task, pattern, examples);
        for (size_t l = 0; l < mass.size(); ++l) {
            std::printf("  layer %zu:", l);
            for (double m : mass[l])
                std::printf("  %5.1f%%", 100 * m);
            std::printf("   best head at each position: %5.1f%%\n",
                100 * patternCoverage(model, *task, pattern, int(l), examples));
        }
    }
    return 0;
}

} // namespace atlas
