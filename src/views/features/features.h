#pragma once

#include "features/featuredashboard.h"
#include "features/steering.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

#include <string>
#include <utility>
#include <vector>

namespace atlas {

// The Features view's analysis (view kind "features"): a sparse autoencoder's features on the input, read from the
// site's rows of the run's trace.
// One feature's dashboard over the corpus (features/featuredashboard.h): shown when spec "features_show" is
// "dashboard".
struct FeatureDashboard
{
    std::string corpusName; // "the built-in corpus", or the text file's name
    int64_t corpusTokens = 0; // the tokens the pass read
    int window = 0; // each run's tokens
    int64_t active = 0; // the tokens the feature is active on
    double passSeconds = 0; // how long the pass took when it ran
    std::string origin; // "run now", "kept from the last pass", "read from the cache"
    std::string cacheProblem; // why the pass could not be kept on disk
    struct Example
    {
        float activation = 0;
        int64_t at = 0; // where in the corpus's tokens
        std::vector<int> tokens; // the tokens around it; the example is tokens[centre]
        std::vector<float> values; // the feature on each, NaN where the token was not in the example's run
        int centre = 0;
    };
    std::vector<Example> examples; // the strongest first
    std::vector<float> histogram; // active tokens per bin of log10 activation (FeatureCorpusStats::binLow)
    LogitEffects logits;
    std::vector<std::pair<int, float>> nearest; // by decoder cosine
    double density() const { return corpusTokens ? double(active) / double(corpusTokens) : 0.0; }
};

// How good the dictionary is (spec "features_show": "quality"): how often each feature fires over the corpus pass,
// and what it loses on the corpus's held-out part.
struct DictionaryQuality
{
    std::string corpusName; // as FeatureDashboard's
    std::string writes; // a transcoder's output site, whose rows it predicts and replaces; "" for an SAE
    int64_t corpusTokens = 0;
    std::vector<int64_t> activeCount; // per feature, over the corpus pass
    int dead = 0, dense = 0; // active on no corpus token; on more than a tenth of them
    double meanActive = 0; // L0 over the corpus
    int64_t heldOutRows = 0;
    double unexplained = 0, heldOutL0 = 0; // on the held-out rows
    bool hasLosses = false; // false for a model that does not predict the next token
    double clean = 0, spliced = 0, meanAblated = 0; // nats per token over heldOutTokens
    int64_t heldOutTokens = 0;
    double recovered() const { return (meanAblated - spliced) / (meanAblated - clean); }
    double seconds = 0; // the held-out measures' time
};

// The model steered by a feature (spec "features_show": "steer"; features/steering.h): its continuation of the input
// (greedy, or both sampled from one seed) with and without the feature's decoder row added at the dictionary's site (or
// the feature clamped, or the difference of the site's means over two sets of prompts added), and the next-token
// probabilities at the input's end that the steering moves most.
struct FeatureSteering
{
    double strength = 0; // times the direction is added; the clamped value with `clamp`
    bool clamp = false;
    // By a difference of means (spec "steer_means_a" and "steer_means_b"): the prompts on each side, the direction's
    // length, and the features whose decoder rows point most along it (cosine).
    std::vector<std::string> meansA, meansB;
    double directionNorm = 0;
    std::vector<std::pair<int, float>> alignedFeatures;
    bool byMeans() const { return !meansA.empty(); }
    SamplingOptions sampling; // how both continuations pick their tokens (spec "steer_temperature", "steer_seed")
    std::vector<int> plain, steered; // the continuations' tokens
    std::vector<NextTokenShift> moved; // the next tokens it moves most (features/steering.h)
};

struct FeaturesAnalysis : ViewAnalysis
{
    std::string path; // where the dictionary was read: the spec's, or the model's own
    std::string dictionary; // "topk, 512 features over blocks.2.hook_resid_post"
    std::string trainedOn; // the model named in its cfg.json, "" when absent
    std::string quality; // what its training measured on held-out text, "" when it does not say
    int width = 0;
    int position = 0; // the token whose strongest features are listed
    int feature = 0; // the feature drawn over the text
    bool featureChosen = false; // false: the strongest at `position`, for want of a choice
    std::vector<float> activation; // the feature on every token
    std::vector<int> active; // per token, the features active (L0)
    std::vector<std::pair<int, float>> strongest; // at `position`, the 12 largest, largest first
    bool showsDashboard = false;
    FeatureDashboard dashboard; // with showsDashboard
    bool showsQuality = false;
    DictionaryQuality dictionaryQuality; // with showsQuality
    bool showsSteering = false;
    FeatureSteering steering; // with showsSteering
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::features {

inline const OwnKey<std::string> kSae {"sae", ""};
inline const OwnKey<std::string> kSaeSite {"sae_site", ""};
inline const OwnKey<int> kFeature {"feature", -1};
inline const OwnKey<std::string> kShow {"features_show", "text"};
inline const OwnKey<int> kCorpusTokens {"corpus_tokens", 100'000};
inline const OwnKey<std::string> kCorpusFile {"corpus_file", ""};
inline const OwnKey<double> kSteerStrength {"steer_strength", 8.0};
inline const OwnKey<bool> kSteerClamp {"steer_clamp", false};
inline const OwnKey<int> kSteerTokens {"steer_tokens", 30};
inline const OwnKey<std::string> kSteerMeansA {"steer_means_a", ""};
inline const OwnKey<std::string> kSteerMeansB {"steer_means_b", ""};
inline const OwnKey<double> kSteerTemperature {"steer_temperature", 0.0};
inline const OwnKey<int> kSteerSeed {"steer_seed", 0};

// The steering the Steer page sets, for a generation to steer with (the Generate panel's Steer): the spec's
// dictionary or the model's own, its feature (or the strongest at the spec's position of `prompt`, as the page
// chooses unasked), strength, clamp and prompts. Reads the dictionary and may run the model: call it off the GUI
// thread. Throws atlas::Error without a dictionary, for one that does not fit the model, and for a model that does
// not predict the next token.
NamedSteering specSteering(std::shared_ptr<const Model> model, const ViewSpec &spec, const std::vector<int> &prompt);
// What specSteering would steer with, in a few words from the spec alone ("feature 12 × 8", "the strongest feature
// at the token clamped at 5", "a difference of means × 4").
std::string steeringSummary(const ViewSpec &spec);

// "a|b| c" → {"a", "b", "c"}: the prompts of steer_means_a or _b (splitPrompts), trimmed, blanks dropped.
std::vector<std::string> steeringPrompts(const std::string &text);

} // namespace atlas::views::features
