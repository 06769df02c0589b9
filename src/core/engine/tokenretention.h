#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace atlas {

struct ModelConfig;
class Tensor;

// PoWER-BERT's token elimination (Goyal et al. 2020): after the attention of layer j, only the tokens of highest
// significance go on to the layers above, where significance is the attention a token receives, summed over the heads
// and over the queries still present:  sig_j(k) = Σ_h Σ_{i kept} A_h[i, k].
// The app masks an eliminated token as a key in every later layer instead of removing it from the sequence; what a
// kept token computes is then exactly what it computes with the others removed (attention with a key masked is
// attention without that key, and everything else acts per position), and the eliminated tokens' own rows are left
// out of the significance and of every result.
// Convention for masked language models: the positions whose original token is asked for are never eliminated
// (PoWER-BERT keeps the classification token the same way), so the kept counts below never fall under their number.
struct TokenRetention
{
    enum class Rank {
        Significance, // PoWER-BERT
        Random, // the control: the same counts, tokens chosen at random (seeded per layer)
        // Not PoWER-BERT: the attention paid by the protected positions only (the ones a masked LM is asked to fill),
        // to show how much a task-blind significance loses when one query's needs differ from the average's.
        Targets,
    };

    // keep[j], j = 0 … L − 2: the share of the input's tokens still present after layer j's attention, non-increasing,
    // each in (0, 1]. Nothing is eliminated after the last layer (no later layer would read the difference).
    std::vector<float> keep;
    std::vector<int> protect; // positions never eliminated, ascending
    Rank rank = Rank::Significance;
    uint64_t seed = 0; // Rank::Random

    bool empty() const { return keep.empty(); }
    bool eliminatesAfter(int layer) const { return layer >= 0 && size_t(layer) < keep.size(); }
    // The tokens of `T` that go on past `layer` by the schedule: round(keep·T), at least 1 and the protected ones.
    int keptAfter(int layer, int T) const;
    // rate^(j + 1) for each of the model's first L − 1 layers: the tokens shrink by the same factor at every layer.
    static TokenRetention geometric(float rate, int layers);
};

// "0.7" (a geometric rate) or "0.9,0.8,0.6" (one share per layer but the last) for a model of `layers` layers;
// errors name `source` and the item.
std::vector<float> parseRetentionSchedule(const std::string &text, int layers, const std::string &source);
std::string retentionScheduleText(const std::vector<float> &keep); // "0.7, 0.49, 0.343"

// The schedule fits a model of one stack that attends both ways, with exact attention and every block run; throws
// atlas::Error naming what does not fit.
void checkTokenRetention(
    const ModelConfig &config, const TokenRetention &retention, int tokens, bool efficientKernel, bool dropsLayers);

// One layer's elimination. `probs` [H, T, T] the layer's attention weights, `present` [T] 1 for the tokens still in
// the sequence (all 1 at layer 0). Writes the significance of every present token (0 for the others) and the tokens
// that go on: the protected ones, then the most significant (ties to the earlier position), up to `target` in all.
void eliminateTokens(Tensor &significance, Tensor &kept, const Tensor &probs, const Tensor *present, int target,
    const TokenRetention &retention, int layer);

// Scores already masked (H, T, T): key k of every query gets −∞ where `present`[k] is 0.
void maskEliminatedKeys(Tensor &masked, const Tensor &present);

} // namespace atlas
