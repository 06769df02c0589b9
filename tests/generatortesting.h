#pragma once

#include "engine/engine.h"
#include "engine/generator.h"
#include "referencetesting.h"

#include <QString>

#include <memory>
#include <vector>

namespace atlas::testing {

// The KV-cache generator against the program: it writes `steps` tokens after `prompt`, and the program's forward pass
// over everything written gives the last position's logits, which the generator's must match within `tolerance`.
// Returns compareToReference's complaint, or "" when they agree.
inline QString cachedLogitsAgainstProgram(
    const std::shared_ptr<const Model> &model, const std::vector<int> &prompt, int steps, double tolerance = 1e-4)
{
    Generator g(model, prompt);
    for (int k = 0; k < steps; ++k)
        g.generate();
    Engine engine(model, {g.tokens(), {}});
    engine.runToEnd();
    const Tensor &logits = engine.trace().tensor("logits");
    const int64_t V = logits.dim(1), last = logits.dim(0) - 1;
    Tensor want({V}), got({V});
    std::copy(logits.data() + last * V, logits.data() + (last + 1) * V, want.data());
    std::copy(g.lastLogits().data(), g.lastLogits().data() + V, got.data());
    return compareToReference("cached logits", got, want, tolerance);
}

} // namespace atlas::testing
