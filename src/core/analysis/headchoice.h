#pragma once

#include "model/model.h"

#include <string>

namespace atlas {

// Why `layer` and `head` name no head of `model` ("layer 5, head 0: austen has 4 layers of 4 heads"), or "".
inline std::string headChoiceProblem(const Model &model, int layer, int head)
{
    const ModelConfig &c = model.config;
    if (layer >= 0 && layer < c.layers && head >= 0 && head < c.heads)
        return {};
    return "layer " + std::to_string(layer) + ", head " + std::to_string(head) + ": " + model.name + " has "
        + std::to_string(c.layers) + " layers of " + std::to_string(c.heads) + " heads";
}

} // namespace atlas
