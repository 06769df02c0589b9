#pragma once

#include "view/viewanalysis.h"

#include <memory>
#include <vector>

// The context an analysis request reads, made from a model and token ids alone (no trace): for the analyses that
// rerun or train the model themselves (the memory views).
namespace atlas::testing {

inline AnalysisContext contextFor(std::shared_ptr<const Model> model, std::vector<int> tokens)
{
    AnalysisContext c;
    c.model = std::move(model);
    c.tokenIds = std::move(tokens);
    c.tokens = int(c.tokenIds.size());
    c.layers = c.model->config.layers;
    return c;
}

} // namespace atlas::testing
