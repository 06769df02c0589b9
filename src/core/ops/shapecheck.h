#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include "tensor/tensor.h"
#include "util/error.h"

#include <string>

// Shared by the ops' source files only: the checks that turn a shape mismatch into a readable atlas::Error.
namespace atlas::ops {

inline void requireShape(const Tensor &t, const Shape &shape, const char *what)
{
    if (t.shape() != shape)
        throw Error(std::string(what) + ": expected shape " + Tensor::shapeString(shape) + ", got " + t.shapeString());
}

} // namespace atlas::ops
