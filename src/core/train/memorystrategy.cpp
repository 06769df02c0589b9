#include "train/memorystrategy.h"

#include "util/error.h"

#include <cmath>

namespace atlas {

const std::vector<std::string> &memoryStrategyNames()
{
    static const std::vector<std::string> names = {"plain", "checkpoint", "reversible"};
    return names;
}

std::string memoryStrategyName(MemoryStrategy strategy)
{
    return memoryStrategyNames()[size_t(strategy)];
}

MemoryStrategy parseMemoryStrategy(const std::string &text, const std::string &field)
{
    for (size_t i = 0; i < memoryStrategyNames().size(); ++i)
        if (memoryStrategyNames()[i] == text)
            return MemoryStrategy(i);
    throw Error(field + ": unknown memory strategy '" + text + "' (expected plain, checkpoint or reversible)");
}

int checkpointInterval(const MemoryOptions &options, int layers)
{
    if (options.checkpointEvery > 0)
        return options.checkpointEvery;
    return std::max(1, int(std::ceil(std::sqrt(double(layers)) - 1e-9)));
}

void validateMemoryOptions(
    const MemoryOptions &options, const ModelConfig &config, int tokens, const MemoryOptionFields &fields)
{
    if (options.strategy == MemoryStrategy::Reversible && !config.reversible)
        throw Error(fields.strategy + " reversible: this model has standard blocks, whose inputs cannot be rebuilt "
            + "from their outputs (a reversible model has \"atlas_reversible\": true in its config.json; train one "
              "with "
              "train --reversible, or use plain or checkpoint)");
    if (options.checkpointEvery < 0 || options.checkpointEvery > config.layers)
        throw Error(fields.checkpointEvery + " " + std::to_string(options.checkpointEvery) + ": must be in 1.."
            + std::to_string(config.layers) + " (the model has " + std::to_string(config.layers)
            + " layers), or 0 for ⌈√L⌉");
    if (options.ffnChunks < 1 || (tokens > 0 && options.ffnChunks > tokens))
        throw Error(fields.ffnChunks + " " + std::to_string(options.ffnChunks) + ": must be in 1.."
            + (tokens > 0 ? std::to_string(tokens) + " (the input has " + std::to_string(tokens) + " tokens)"
                          : std::string("the input's length")));
}

} // namespace atlas
