#pragma once

#include <string>
#include <vector>

namespace atlas {

struct ModelConfig;

// Heads switched off, as in head pruning (Michel et al., 2019, "Are Sixteen Heads Really Better than One?"):
// in the merge, head h of layer l contributes a replacement instead of its context C_h = A_h V_h, so the output
// projection and everything after see the model without that head. Michel et al. multiply C_h by a gate ξ_h = 0
// (Mode::Zero); mean ablation puts C_h's mean over reference positions in its place (Mode::Mean), which keeps the
// average signal the next layers expect and removes only what the head says about this input. The head's own
// scores, probs and context stay in the trace as computed; only layer.{l}.attn.merged changes.
struct HeadAblation
{
    enum class Mode { Zero, Mean };
    struct Head
    {
        int layer = 0;
        int head = 0;
        std::vector<float> mean; // Mode::Mean: the d values C_h is replaced by at every position
    };

    Mode mode = Mode::Zero;
    std::vector<Head> heads;

    bool empty() const { return heads.empty(); }
    const Head *find(int layer, int head) const; // nullptr when that head runs
    std::vector<int> headsOf(int layer) const; // ascending
    // Each head inside the model and listed once, and in Mode::Mean a mean of head-dimension length; throws
    // atlas::Error naming the head.
    void validate(const ModelConfig &config) const;
};

struct HeadRef
{
    int layer = 0;
    int head = 0;
    bool operator==(const HeadRef &) const = default;
};

// "0.1,1.3" (layer.head, comma-separated; "2.*" for every head of layer 2) -> heads, each checked against the model's
// layers and heads; errors name `source` ("--ablate-heads") and the item. An empty text is no heads.
std::vector<HeadRef> parseHeadList(const std::string &text, int layers, int heads, const std::string &source);
std::string headListText(const std::vector<HeadRef> &heads); // "0.1,1.3"
const char *ablationModeName(HeadAblation::Mode mode); // "zero" | "mean"
HeadAblation::Mode parseAblationMode(const std::string &text, const std::string &source);

} // namespace atlas
