#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>

namespace atlas::ops {

namespace {

// Elementwise loops over (…) tensors are split over the cores when large (an FFN activation is T x 4D).
constexpr int64_t kElementGrain = 1 << 15;
// quick_gelu's gain (Hugging Face's QuickGELUActivation; gpt-oss's experts' α).
constexpr float kQuickGeluAlpha = 1.702f;

} // namespace

void softcap_forward(Tensor &out, const Tensor &inp, float cap)
{
    requireShape(out, inp.shape(), "soft-cap output");
    const float *u = inp.data();
    float *o = out.data();
    for (int64_t i = 0; i < inp.numel(); ++i)
        o[i] = softcapped(u[i], cap);
}

void softcap_backward(Tensor &dinp, const Tensor &dout, const Tensor &out, float cap)
{
    requireShape(dinp, out.shape(), "soft-cap input gradient");
    requireShape(dout, out.shape(), "soft-cap output gradient");
    const float *g = dout.data(), *o = out.data();
    float *d = dinp.data();
    for (int64_t i = 0; i < out.numel(); ++i) {
        const float t = o[i] / cap;
        d[i] += g[i] * (1.0f - t * t);
    }
}

void gelu_tanh_forward(Tensor &out, const Tensor &inp)
{
    requireShape(out, inp.shape(), "GELU output");
    const float c = std::sqrt(2.0f / static_cast<float>(M_PI));
    parallelFor(inp.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
        Eigen::Map<const Eigen::ArrayXf> u(inp.data() + begin, end - begin);
        Eigen::Map<Eigen::ArrayXf>(out.data() + begin, end - begin)
            = 0.5f * u * (1.0f + (c * (u + 0.044715f * u.cube())).tanh());
    });
}

// d/du = ½(1 + tanh z) + ½u (1 − tanh² z) c (1 + 3·0.044715 u²), z = c (u + 0.044715 u³)
void gelu_tanh_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp)
{
    requireShape(dinp, inp.shape(), "gelu backward dinp");
    requireShape(dout, inp.shape(), "gelu backward dout");
    const float c = std::sqrt(2.0f / static_cast<float>(M_PI));
    parallelFor(inp.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
        const int64_t n = end - begin;
        Eigen::Map<const Eigen::ArrayXf> u(inp.data() + begin, n), g(dout.data() + begin, n);
        const Eigen::ArrayXf th = (c * (u + 0.044715f * u.cube())).tanh();
        Eigen::Map<Eigen::ArrayXf>(dinp.data() + begin, n)
            += g * (0.5f * (1.0f + th) + 0.5f * u * (1.0f - th.square()) * c * (1.0f + 3.0f * 0.044715f * u.square()));
    });
}

void gelu_erf_forward(Tensor &out, const Tensor &inp)
{
    requireShape(out, inp.shape(), "GELU output");
    const float *u = inp.data();
    float *y = out.data();
    parallelFor(inp.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
            y[i] = 0.5f * u[i] * (1.0f + std::erf(u[i] * static_cast<float>(M_SQRT1_2)));
    });
}

// d/du = Φ(u) + u φ(u), with Φ the normal CDF and φ its density
void gelu_erf_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp)
{
    requireShape(dinp, inp.shape(), "gelu backward dinp");
    requireShape(dout, inp.shape(), "gelu backward dout");
    const float invSqrt2Pi = static_cast<float>(0.5 * M_2_SQRTPI * M_SQRT1_2);
    const float *u = inp.data(), *g = dout.data();
    float *dx = dinp.data();
    parallelFor(inp.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const float cdf = 0.5f * (1.0f + std::erf(u[i] * static_cast<float>(M_SQRT1_2)));
            const float pdf = invSqrt2Pi * std::exp(-0.5f * u[i] * u[i]);
            dx[i] += g[i] * (cdf + u[i] * pdf);
        }
    });
}

void relu_forward(Tensor &out, const Tensor &inp)
{
    Eigen::Map<const Eigen::ArrayXf> u(inp.data(), inp.numel());
    Eigen::Map<Eigen::ArrayXf>(out.data(), out.numel()) = u.max(0.0f);
}

void relu_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp)
{
    requireShape(dinp, inp.shape(), "relu backward dinp");
    requireShape(dout, inp.shape(), "relu backward dout");
    Eigen::Map<const Eigen::ArrayXf> u(inp.data(), inp.numel()), g(dout.data(), dout.numel());
    Eigen::Map<Eigen::ArrayXf>(dinp.data(), dinp.numel()) += (u > 0.0f).select(g, 0.0f);
}

void silu_forward(Tensor &out, const Tensor &inp)
{
    requireShape(out, inp.shape(), "SiLU output");
    parallelFor(inp.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
        Eigen::Map<const Eigen::ArrayXf> x(inp.data() + begin, end - begin);
        Eigen::Map<Eigen::ArrayXf>(out.data() + begin, end - begin) = x / (1.0f + (-x).exp());
    });
}

void silu_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp)
{
    requireShape(dinp, inp.shape(), "SiLU backward dinp");
    requireShape(dout, inp.shape(), "SiLU backward dout");
    const float *x = inp.data(), *g = dout.data();
    float *d = dinp.data();
    for (int64_t i = 0; i < inp.numel(); ++i) {
        const float s = 1.0f / (1.0f + std::exp(-x[i]));
        d[i] += g[i] * s * (1.0f + x[i] * (1.0f - s));
    }
}

void quick_gelu_forward(Tensor &out, const Tensor &inp)
{
    requireShape(out, inp.shape(), "quick GELU output");
    const float *x = inp.data();
    float *y = out.data();
    for (int64_t i = 0; i < inp.numel(); ++i)
        y[i] = x[i] / (1.0f + std::exp(-kQuickGeluAlpha * x[i]));
}

void quick_gelu_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp)
{
    requireShape(dinp, inp.shape(), "quick GELU backward dinp");
    requireShape(dout, inp.shape(), "quick GELU backward dout");
    const float *x = inp.data(), *g = dout.data();
    float *d = dinp.data();
    for (int64_t i = 0; i < inp.numel(); ++i) {
        const float s = 1.0f / (1.0f + std::exp(-kQuickGeluAlpha * x[i]));
        d[i] += g[i] * s * (1.0f + kQuickGeluAlpha * x[i] * (1.0f - s));
    }
}

namespace {

// gpt-oss's clamps: the gate from above at l, up to [−l, l] then + 1.
void clampGlu(Tensor &gate, Tensor &up, float l)
{
    for (int64_t i = 0; i < gate.numel(); ++i) {
        gate.data()[i] = std::min(gate.data()[i], l);
        up.data()[i] = std::clamp(up.data()[i], -l, l) + 1.0f;
    }
}

} // namespace

void gated_activation_forward(Tensor &out, const Tensor &gate, const Tensor &up, Activation activation, float clamp)
{
    requireShape(up, gate.shape(), "gated activation up");
    if (clamp > 0) {
        Tensor g = gate, u = up;
        clampGlu(g, u, clamp);
        return gated_activation_forward(out, g, u, activation);
    }
    activation_forward(out, gate, activation);
    parallelFor(out.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
        Eigen::Map<Eigen::ArrayXf>(out.data() + begin, end - begin)
            *= Eigen::Map<const Eigen::ArrayXf>(up.data() + begin, end - begin);
    });
}

void gated_activation_backward(Tensor &dgate, Tensor &dup, const Tensor &dout, const Tensor &gate, const Tensor &up,
    Activation activation, float clamp)
{
    requireShape(dout, gate.shape(), "gated activation backward dout");
    if (clamp > 0) { // through the clamped values, then only where no clamp held
        Tensor g = gate, u = up, dg(gate.shape()), du(gate.shape());
        clampGlu(g, u, clamp);
        gated_activation_backward(dg, du, dout, g, u, activation);
        for (int64_t i = 0; i < gate.numel(); ++i) {
            if (gate.data()[i] <= clamp)
                dgate.data()[i] += dg.data()[i];
            if (up.data()[i] >= -clamp && up.data()[i] <= clamp)
                dup.data()[i] += du.data()[i];
        }
        return;
    }
    Tensor act(gate.shape()), upGrad(gate.shape());
    activation_forward(act, gate, activation);
    const auto n = Eigen::Index(gate.numel());
    Eigen::Map<const Eigen::ArrayXf> g(dout.data(), n), u(up.data(), n), a(act.data(), n);
    Eigen::Map<Eigen::ArrayXf>(dup.data(), n) += g * a;
    Eigen::Map<Eigen::ArrayXf>(upGrad.data(), n) = g * u; // d act(gate)
    activation_backward(dgate, upGrad, gate, activation);
}

void activation_forward(Tensor &out, const Tensor &inp, Activation activation)
{
    switch (activation) {
    case Activation::Silu:
        return silu_forward(out, inp);
    case Activation::QuickGelu:
        return quick_gelu_forward(out, inp);
    case Activation::Relu:
        return relu_forward(out, inp);
    case Activation::GeluTanh:
        return gelu_tanh_forward(out, inp);
    case Activation::GeluErf:
        return gelu_erf_forward(out, inp);
    }
}

void activation_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp, Activation activation)
{
    switch (activation) {
    case Activation::Silu:
        return silu_backward(dinp, dout, inp);
    case Activation::QuickGelu:
        return quick_gelu_backward(dinp, dout, inp);
    case Activation::Relu:
        return relu_backward(dinp, dout, inp);
    case Activation::GeluTanh:
        return gelu_tanh_backward(dinp, dout, inp);
    case Activation::GeluErf:
        return gelu_erf_backward(dinp, dout, inp);
    }
}

} // namespace atlas::ops
