#pragma once

#include "model/model.h"
#include "train/objectives.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// What a masked language model (an encoder trained as BERT was: austen-mlm) names where its input hides a token.
// The model reads the whole input at once, both ways; its output at a position (next_probs, whose name keeps the
// decoders' word) is its distribution over the token that belongs there.
namespace atlas {

struct MaskedFill
{
    int position = 0;
    int read = 0; // the id the model read there: [MASK], a random token, or the original left in place
    int original
        = -1; // the token that belongs there when known (a corruption drawn from a seed); −1 for a typed [MASK]
    CorruptedText::Fate fate = CorruptedText::Fate::Masked;
    std::vector<std::pair<int, float>> top; // the k most probable fills, most probable first
    float originalProbability = 0; // p(original), when known
    int originalRank = -1; // where the original stands among all fills (0: the model's first choice); −1 unknown
};

struct MaskedFills
{
    std::vector<int> read; // [T] the input the model read
    std::vector<MaskedFill> fills; // one per position asked, in input order
    int known = 0; // fills whose original is known
    int named = 0; // of those, the ones the model's first choice names
};

// Why `config` cannot fill masks: it has no [MASK] token, or it is a decoder (its output at a position is the next
// token, not the one hidden there). Empty when it can.
std::string maskedFillsProblem(const ModelConfig &config, const std::string &modelName);

// The model run on `tokens` (with `padding`) and read at the hidden positions, k fills each:
// - with `mlmSeed`, the input is first corrupted by the masked LM drawn from that seed (train/objectives.h, the
//   model's [MASK]), and every chosen position is read, its original known;
// - without, every [MASK] the input already holds is read.
// Throws atlas::Error for a model maskedFillsProblem refuses, or an input with nothing hidden.
MaskedFills maskedFills(std::shared_ptr<const Model> model, const std::vector<int> &tokens,
    const std::vector<int> &padding, std::optional<uint64_t> mlmSeed, int k, const std::atomic<bool> *cancel = nullptr);

} // namespace atlas
