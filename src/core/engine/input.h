#pragma once

#include <vector>

namespace atlas {

// What the engine runs on: token ids and which positions are padding (no query attends to a padding key).
struct Input
{
    std::vector<int> tokens;
    std::vector<int> padding; // positions, each in [0, tokens.size())
};

} // namespace atlas
