#include "train/backprop.h"

#include "ops/ops.h"
#include "trace/names.h"
#include "train/backwardpass.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>

namespace atlas {

std::map<std::string, Tensor> gradientsAsStored(const Model &model, const Gradients &g)
{
    std::map<std::string, Tensor> out = g.grads;
    model.transposeConv1dMatrices(out);
    return out;
}

void Gradients::zero()
{
    loss = 0.0f;
    routerLoss = 0.0f;
    spanLoss = 0.0f;
    ponderTime = 0.0f;
    for (auto &[name, g] : grads) {
        float *data = g.data();
        parallelFor(
            g.numel(), 1 << 20, [data](int64_t begin, int64_t end) { std::fill(data + begin, data + end, 0.0f); });
    }
}

Gradients backward(const Model &model, const Input &input, const Trace &trace, const std::vector<int> &targets)
{
    Gradients g;
    accumulateGradients(g, model, input, trace, targets);
    return g;
}

void accumulateGradients(
    Gradients &into, const Model &model, const Input &input, const Trace &trace, const std::vector<int> &targets)
{
    if (targets.size() != input.tokens.size())
        throw Error("targets: " + std::to_string(targets.size()) + " ids for " + std::to_string(input.tokens.size())
            + " input tokens (give one per input token, -1 to skip a position)");
    if (std::all_of(targets.begin(), targets.end(), [](int t) { return t == -1; }))
        throw Error("targets: every target is -1, so there is no loss to differentiate");
    if (!input.ablation.empty())
        throw Error("gradients of a run with heads switched off are not implemented: drop the ablation");
    BackwardPass pass(model, input, into);
    pass.setActivations(&trace);
    Tensor dx = pass.head(targets);
    if (model.config.reversible) {
        const int L = model.config.layers;
        Tensor dy1({dx.dim(0), dx.dim(1)}), dy2({dx.dim(0), dx.dim(1)});
        pass.streamMean(dx, dy1, dy2);
        for (int i = L - 1; i >= 0; --i)
            pass.blockReversible(i, dy1, dy2);
        dx = pass.streamsStart(dy1, dy2);
    } else if (model.config.act.enabled) { // ln_f read Σ_n p_n X_n: each block's output takes its share
        std::vector<Tensor> dstates = pass.adaptiveComputation(dx);
        dx = std::move(dstates.back());
        for (int i = model.config.layers - 1; i >= 0; --i) {
            dx = pass.block(i, dx);
            if (i > 0)
                dx.matrix() += dstates[size_t(i - 1)].matrix();
        }
    } else {
        for (int i = model.config.layers - 1; i >= 0; --i)
            if (!input.drops(i)) // a dropped block (LayerDrop) passes the gradient through unchanged
                dx = pass.block(i, dx);
    }
    pass.embeddings(dx);
    if (model.config.isEncoderDecoder()) { // then the encoder, from what cross-attention sent back to its output
        pass.startStack(names::kEncoderStack);
        dx = pass.encoderOutput();
        for (int i = model.config.encoderLayers - 1; i >= 0; --i)
            dx = pass.block(i, dx);
        pass.embeddings(dx);
    }
}

double gradientDifference(const Gradients &a, const Gradients &b, std::string *worst, double floor)
{
    double largest = 0; // only the floor needs it: a pass over every gradient
    for (const auto &[name, h] : b.grads)
        for (int64_t i = 0; floor > 0 && i < h.numel(); ++i)
            largest = std::max(largest, double(std::fabs(h.data()[i])));
    double result = 0;
    for (const auto &[name, g] : a.grads) {
        const Tensor &h = b.grads.at(name);
        double maxRef = 0, maxDiff = 0;
        for (int64_t i = 0; i < g.numel(); ++i) {
            maxRef = std::max(maxRef, double(std::fabs(h.data()[i])));
            maxDiff = std::max(maxDiff, std::fabs(double(g.data()[i]) - double(h.data()[i])));
        }
        maxRef = std::max(maxRef, floor * largest);
        const double rel = maxRef > 0 ? maxDiff / maxRef : maxDiff;
        if (rel > result && worst)
            *worst = name;
        result = std::max(result, rel);
    }
    return result;
}

} // namespace atlas
