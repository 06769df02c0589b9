#pragma once

#include "model/model.h"
#include "train/evaluation.h"

#include <memory>
#include <string>
#include <vector>

// Funnel-Transformer (Dai et al. 2020; model/funnel.h) read on one input: the sequence each layer still has, and one
// head's attention over that layer's present queries and keys (the pooling layers' queries are half as many as their
// keys); with the model's task held out, and a baseline's, for what the pooling costs.
namespace atlas {

struct FunnelPicture
{
    std::vector<int> tokens;
    std::vector<int> strides, keyStrides; // per layer: positions t with t mod stride = 0 are present
    int layer = 0, head = 0;
    std::vector<int> queries, keys; // the chosen layer's present positions
    std::vector<float> attention; // [queries × keys], row-major: the head's weights among them (each row sums to 1)
    double work = 1; // the query positions every layer processes, as a share of the same layers at full length
    int presentAt(int layer) const; // how many positions layer `layer` keeps
};

// Why `model` has no funnel to show ("" when it has one).
std::string funnelProblem(const Model &model);
// `model` run on `tokens`; `layer` and `head` choose the attention drawn. Throws atlas::Error for a model
// funnelProblem refuses, or a layer or head it does not have.
FunnelPicture funnelPicture(std::shared_ptr<const Model> model, const std::vector<int> &tokens, int layer, int head);
} // namespace atlas
