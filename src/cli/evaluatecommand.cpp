#include "arguments.h"
#include "commands.h"
#include "model/builtinmodels.h"
#include "train/evaluation.h"
#include "util/error.h"

#include <cstdio>

namespace atlas {

// evaluate --model M --task T [--examples N --length-scale S --seed X]: held-out loss, token accuracy and exact
// match, on examples S times as long as training's when S > 1 (extrapolation; docs/models.md, "Positions").
int evaluateCommand(const CommandArgs &argv)
{
    const Arguments args(argv, {"model", "task", "examples", "length-scale", "seed"});
    const auto model = loadModel(args.required("model"));
    const auto task = Task::create(args.required("task"));
    const int examples = args.intValue("examples", 256), scale = args.intValue("length-scale", 1);
    if (examples < 1 || scale < 1 || scale > 64)
        throw Error("--examples must be at least 1 and --length-scale in 1..64");
    const Evaluation e = evaluateOnTask(model, *task, examples, uint64_t(args.intValue("seed", 12345)), scale);
    std::printf("%s on %s at %dx the training length: held-out loss %.4f, token accuracy %.2f%%, exact match "
                "%.2f%% (%d examples)\n",
        model->name.c_str(), task->name().c_str(), scale, e.loss, 100 * e.tokenAccuracy, 100 * e.exactMatch, examples);
    return 0;
}

} // namespace atlas
