#include "features/siterun.h"

#include "util/error.h"

namespace atlas {

std::unique_ptr<Engine> runThroughSite(
    std::shared_ptr<const Model> model, const std::string &tensor, const Input &input)
{
    auto run = std::make_unique<Engine>(std::move(model), input);
    const int producer = run->program().producerOf(tensor);
    if (producer < 0)
        throw Error("this model's trace has no " + tensor);
    run->runTo(producer);
    run->step();
    return run;
}

void changeSiteAndFinish(Engine &run, const std::string &tensor, const std::function<void(Tensor &)> &change)
{
    const TraceEntry &entry = *run.trace().find(tensor);
    Tensor t = entry.tensor;
    change(t);
    run.trace().put(tensor, entry.formula, run.program().producerOf(tensor), std::move(t));
    run.runToEnd();
}

} // namespace atlas
