#pragma once

// Internal to the core: the sparse autoencoders' work (features/) reads and edits one site of a run this way.

#include "engine/engine.h"

#include <functional>
#include <memory>
#include <string>

namespace atlas {

// A run of `input` stepped through the op that makes `tensor` (saeSiteTensor's name of a site), that op alone, as
// activation patching steps: runTo would run a fused pair past it. Throws atlas::Error when the program makes no such
// tensor.
std::unique_ptr<Engine> runThroughSite(
    std::shared_ptr<const Model> model, const std::string &tensor, const Input &input);
// The site's tensor of such a run replaced by what `change` makes of a copy of it, then the run to its end.
void changeSiteAndFinish(Engine &run, const std::string &tensor, const std::function<void(Tensor &)> &change);

} // namespace atlas
