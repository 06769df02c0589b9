#pragma once

#include "tensor/tensor.h"

#include <map>
#include <string>

namespace atlas {

struct AdamWOptions
{
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    float weightDecay = 0.01f; // torch.optim.AdamW's default
    float maxGradNorm = 1.0f; // global gradient-norm clipping before each step; <= 0 turns it off
};

// The learning rate at step s (counted from 0): a linear warm-up, peak·(s+1)/warmupSteps for s < warmupSteps,
// then a cosine decay from peak to floor, reaching floor at s = totalSteps and staying there.
struct LearningRateSchedule
{
    float peak = 3e-4f;
    float floor = 3e-5f;
    int warmupSteps = 0;
    int totalSteps = 1;

    float at(int step) const;
};

// The global norm of all gradients together, √(Σ g²) over every element of every tensor.
float gradientNorm(const std::map<std::string, Tensor> &grads);
// The factor clipping applies: maxNorm / (norm + 1e-6) when norm > maxNorm > 0, else 1
// (torch.nn.utils.clip_grad_norm_).
float clipScale(float norm, float maxNorm);
// Scales every gradient by clipScale(gradientNorm(grads), maxNorm), in place. Returns the norm before.
float clipGradientNorm(std::map<std::string, Tensor> &grads, float maxNorm);

// AdamW as torch.optim.AdamW (Loshchilov & Hutter): the weight decay is decoupled from the gradient,
// p ← p − lr·λ·p, then the Adam update with bias-corrected moments. No decay on biases and LayerNorm
// weights (any parameter of rank 1), as GPT-2 and nanoGPT train: decaying a LayerNorm gain towards 0 or a bias
// towards 0 only fights the normalisation. Moments live here, keyed by parameter name.
class AdamW
{
public:
    explicit AdamW(AdamWOptions options = {})
        : m_options(options)
    {
    }

    // Updates every parameter in `params` that has a gradient in `grads`, with the gradients clipped by their
    // global norm (scaled on the fly: `grads` is left as it was). Throws atlas::Error when a gradient has no
    // parameter or another shape. Returns the gradient norm before clipping.
    float step(const std::map<std::string, Tensor *> &params, const std::map<std::string, Tensor> &grads, float lr);

    int stepCount() const { return m_step; }
    // The moments as "m.<name>" / "v.<name>" tensors, for checkpoints, and their restoration.
    std::map<std::string, Tensor> state() const;
    void restoreState(const std::map<std::string, Tensor> &state, int stepCount);
    const AdamWOptions &options() const { return m_options; }
    static bool decays(const Tensor &param) { return param.rank() >= 2; }

private:
    struct Moments
    {
        Tensor m, v; // running means of g and g², the parameter's shape
    };

    AdamWOptions m_options;
    std::map<std::string, Moments> m_moments;
    int m_step = 0;
};

} // namespace atlas
