#pragma once

#include "engine/generator.h"
#include "engine/input.h"
#include "features/saefile.h"
#include "features/saesite.h"
#include "features/sparseautoencoder.h"
#include "model/model.h"

#include <memory>
#include <string>
#include <vector>

// Steering: a direction added to the residual stream at one site, at every position, scaled by a strength
// (Turner et al. 2023's activation addition; Templeton et al. 2024's feature steering), or a feature's activation
// clamped to a value (the site's rows re-encoded, the feature set, and the difference its decoder row makes added).
namespace atlas {

struct Steering
{
    SaeSite site;
    Tensor direction; // [D]: what is added, times `strength`
    double strength = 0;
    // Clamping instead: the dictionary whose feature `clampFeature` is set to `clampValue` (direction unused).
    std::shared_ptr<const SparseAutoencoder> dictionary;
    int clampFeature = -1;
    double clampValue = 0;
};

// A steering and what it is in words ("feature 12 × 8 at blocks.2.hook_resid_post"), as a steered generation reports
// it.
struct NamedSteering
{
    Steering steering;
    std::string description;
};

// "a|b|c" → {"a", "b", "c"}: the prompts of a difference of means as steer's --means-a and the spec's steer_means_a
// give them, each as written.
std::vector<std::string> splitPrompts(const std::string &text);
// Feature `feature`'s decoder row, W_dec[feature] [D]. Throws atlas::Error for a feature the dictionary lacks.
Tensor featureDirection(const SparseAutoencoder &sae, int feature);
// Steering by feature `feature` of `d`, where the dictionary writes (a transcoder's output site): its decoder row added
// `strength` times, or the feature clamped at `value`. Clamping a transcoder's feature throws atlas::Error: it is read
// at one site and written at another.
Steering addedFeature(const SaeDirectory &d, int feature, double strength);
Steering clampedFeature(const SaeDirectory &d, int feature, double value);
// The mean site row over the texts of `a` minus the mean over the texts of `b` [D] (Turner et al.'s difference of
// activations, averaged over every position of every text). Throws atlas::Error for an empty set.
Tensor differenceOfMeans(std::shared_ptr<const Model> model, const SaeSite &site, const std::vector<std::string> &a,
    const std::vector<std::string> &b);

// The site's rows changed as `steering` says, in place: x + s·v on every row, or with clamping
// x + (c − f_i(x)) · W_dec[i].
void applySteering(Tensor &rows, const Steering &steering);
// The logits [T, V] of the run of `input` with the site's rows steered (the rest of the run recomputed from them).
Tensor steeredLogits(std::shared_ptr<const Model> model, const Input &input, const Steering &steering);
// The `count` next tokens after `input` whose probability the steering moves most, |p_steered − p| largest first (a
// tie to the lower id), with both probabilities: two whole runs, the softmax of their last rows.
struct NextTokenShift
{
    int id = 0;
    float without = 0, with = 0;
};
std::vector<NextTokenShift> nextTokenShift(
    std::shared_ptr<const Model> model, const Input &input, const Steering &steering, int count);
// A generator of `prompt` (engine/generator.h: the KV cache's run) with the site steered at every position as it is
// fed, the prompt's too: what a whole run of each prefix with the site steered gives, up to rounding. It samples as
// `options` says (greedy by default). Throws atlas::Error as saeSiteTensor does.
Generator steeredGenerator(std::shared_ptr<const Model> model, const std::vector<int> &prompt, const Steering &steering,
    SamplingOptions options = {});
// `count` tokens after `prompt` from such a generator; a steering of strength 0 and no clamp gives the model's own
// continuation under the same options and seed. Stops at the context's end.
std::vector<int> steeredContinuation(std::shared_ptr<const Model> model, const std::vector<int> &prompt,
    const Steering &steering, int count, SamplingOptions options = {});

} // namespace atlas
