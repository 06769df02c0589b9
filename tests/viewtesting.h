#pragma once

#include "engine/engine.h"
#include "view/specrun.h"
#include "viewmodel/viewinput.h"

#include <memory>

// What the views draw from, made as the session makes it: a traced engine run, its program, and for the views
// that need one the spec's analysis (computed at once, as `render` does).
namespace atlas::testing {

inline ViewInput traced(std::shared_ptr<const Model> model, const Input &input)
{
    Engine e(model, input);
    e.runToEnd();
    return makeViewInput(
        model, input, std::make_shared<const Program>(e.program()), std::make_shared<const Trace>(e.trace()));
}

// The program of a small model (every op, no weights run): what a view reads op labels and kernels from when a
// test builds its trace by hand.
inline std::shared_ptr<const Program> programFor(int layers, int heads, int tokens)
{
    ModelConfig config;
    config.layers = layers;
    config.heads = heads;
    config.dModel = 8 * heads;
    config.dFF = 4 * config.dModel;
    return std::make_shared<const Program>(Program::build(config, {std::vector<int>(size_t(tokens), 1), {}, {}}));
}

// `checkOnly`: the analysis on the least work (AnalysisContext::checkOnly), for a test of what a view draws rather
// than of the numbers (kAnalysesOnLeastWork, sanitizertesting.h).
inline ViewInput analyzed(ViewInput input, const ViewSpec &spec, bool checkOnly = false)
{
    analyzeNow(input, spec, checkOnly);
    return input;
}

inline ViewInput forSpec(const ViewSpec &spec, bool checkOnly = false)
{
    return analyzed(makeViewInput(runSpec(spec)), spec, checkOnly);
}

} // namespace atlas::testing
