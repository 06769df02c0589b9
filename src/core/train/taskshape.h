#pragma once

#include "model/modelconfig.h"

namespace atlas {

// The shape of a task's model reading bytes, which the synthetic tasks (train/tasks.cpp) and the novel's
// (train/corpustasks.cpp) share: layers × heads of width dModel, a feed-forward 4 × dModel wide.
inline ModelConfig byteTaskConfig(int layers, int heads, int dModel, int context)
{
    ModelConfig c;
    c.layers = layers;
    c.heads = heads;
    c.dModel = dModel;
    c.dFF = 4 * dModel;
    c.vocab = 256;
    c.context = context;
    c.tokenizer = "bytes";
    return c;
}

} // namespace atlas
