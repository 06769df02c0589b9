#pragma once

#include "view/viewanalysis.h"
#include "view/viewspec.h"

#include <string>
#include <utility>
#include <vector>

namespace atlas {

// The Features view's analysis (view kind "features"): a sparse autoencoder's features on the input, read from the
// site's rows of the run's trace.
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
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::features {

inline const OwnKey<std::string> kSae {"sae", ""};
inline const OwnKey<std::string> kSaeSite {"sae_site", ""};
inline const OwnKey<int> kFeature {"feature", -1};

} // namespace atlas::views::features
