#pragma once

#include "features/saesite.h"
#include "features/sparseautoencoder.h"
#include "model/model.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>

// How much of the model's work a dictionary keeps: the next-token loss over a text with the site's activations
// replaced by the dictionary's reconstruction, against the clean loss and the loss with them replaced by their mean
// over the text (mean ablation). "Loss recovered" = (L_mean − L_spliced) / (L_mean − L_clean): 1 when the
// reconstruction is as good as the activations, 0 when it is no better than their mean (SAELens's CE loss score,
// with the mean in place of zeros).
namespace atlas {

struct SpliceLosses
{
    double clean = 0, spliced = 0, meanAblated = 0; // mean nats per predicted token
    int64_t tokens = 0; // predicted tokens
    double recovered() const { return (meanAblated - spliced) / (meanAblated - clean); }
};

// Over `text` read in windows of the model's context, at most `maxTokens` tokens. The dictionary reads `reads` and its
// output replaces `writes` (the same site for an SAE; a transcoder's prediction of the feed-forward's output from its
// input replaces that output). Throws atlas::Error for a model that does not predict the next token (an encoder), a
// dictionary of another width than the site's, an empty text, or `cancel` ("cancelled"); `progress(done, total)` in
// tokens.
SpliceLosses spliceLosses(std::shared_ptr<const Model> model, const SparseAutoencoder &sae, const SaeSite &reads,
    const SaeSite &writes, const std::string &text, int64_t maxTokens,
    const std::function<bool(int64_t, int64_t)> &progress = {}, const std::atomic<bool> *cancel = nullptr);

} // namespace atlas
