#include "features/sparseautoencoder.h"

#include "attention/gaussianstream.h"
#include "tensor/matrixproduct.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace atlas {

const char *saeArchitectureName(SaeArchitecture architecture)
{
    switch (architecture) {
    case SaeArchitecture::Standard:
        return "standard";
    case SaeArchitecture::TopK:
        return "topk";
    case SaeArchitecture::JumpRelu:
        return "jumprelu";
    }
    return "standard";
}

SaeArchitecture saeArchitectureFromName(const std::string &name)
{
    for (const SaeArchitecture a : {SaeArchitecture::Standard, SaeArchitecture::TopK, SaeArchitecture::JumpRelu})
        if (name == saeArchitectureName(a))
            return a;
    throw Error("SAE architecture \"" + name + "\": use standard, topk or jumprelu");
}

void SparseAutoencoder::validate(const std::string &where) const
{
    if (wEnc.rank() != 2 || wEnc.dim(0) < 1 || wEnc.dim(1) < 1)
        throw Error(where + ": W_enc is " + wEnc.shapeString() + ", not [d_in, d_sae]");
    const int64_t d = inputSize(), F = width();
    const auto expect = [&](const Tensor &t, const char *name, Shape shape) {
        if (t.shape() != shape)
            throw Error(where + ": " + name + " is " + t.shapeString() + ", but W_enc [" + std::to_string(d) + ", "
                + std::to_string(F) + "] needs " + Tensor(shape).shapeString());
    };
    expect(bEnc, "b_enc", {F});
    expect(wDec, "W_dec", {F, d});
    expect(bDec, "b_dec", {d});
    if (architecture == SaeArchitecture::JumpRelu) {
        expect(threshold, "threshold", {F});
        for (int64_t i = 0; i < F; ++i)
            if (!std::isfinite(threshold.data()[i]) || threshold.data()[i] < 0)
                throw Error(where + ": threshold[" + std::to_string(i) + "] is " + std::to_string(threshold.data()[i])
                    + "; a JumpReLU threshold is finite and at least 0");
    }
    if (architecture == SaeArchitecture::TopK && (k < 1 || k > F))
        throw Error(where + ": k = " + std::to_string(k) + " for " + std::to_string(F) + " features; give 1 … "
            + std::to_string(F));
}

Tensor SparseAutoencoder::preActivations(const Tensor &x) const
{
    if (x.rank() != 2 || x.dim(1) != inputSize())
        throw Error("SAE: activations " + x.shapeString() + " for a dictionary over " + std::to_string(inputSize())
            + " dimensions");
    Tensor pre({x.dim(0), width()});
    if (applyDecoderBiasToInput) {
        Tensor centred = Tensor::uninitialized(x.shape());
        centred.matrix() = x.matrix().rowwise() - ConstRowVectorMap(bDec.data(), inputSize());
        matrixProduct(pre.matrix(), std::as_const(centred).matrix(), false, wEnc.matrix(), false, false);
    } else {
        matrixProduct(pre.matrix(), x.matrix(), false, wEnc.matrix(), false, false);
    }
    pre.matrix().rowwise() += ConstRowVectorMap(bEnc.data(), width());
    return pre;
}

std::vector<int64_t> largestIndices(const float *values, int64_t count, int k, std::vector<int64_t> &order)
{
    order.resize(size_t(count));
    std::iota(order.begin(), order.end(), 0);
    const auto last = order.begin() + std::clamp<int64_t>(k, 0, count);
    std::partial_sort(order.begin(), last, order.end(),
        [values](int64_t a, int64_t b) { return values[a] > values[b] || (values[a] == values[b] && a < b); });
    return {order.begin(), last};
}

Tensor SparseAutoencoder::activate(const Tensor &pre) const
{
    Tensor f(pre.shape());
    const int64_t N = pre.dim(0), F = pre.dim(1);
    std::vector<int64_t> order;
    for (int64_t n = 0; n < N; ++n) {
        const float *p = pre.data() + n * F;
        float *out = f.data() + n * F;
        switch (architecture) {
        case SaeArchitecture::Standard:
            for (int64_t i = 0; i < F; ++i)
                out[i] = std::max(p[i], 0.0f);
            break;
        case SaeArchitecture::TopK:
            for (const int64_t i : largestIndices(p, F, k, order))
                out[i] = std::max(p[i], 0.0f);
            break;
        case SaeArchitecture::JumpRelu:
            for (int64_t i = 0; i < F; ++i)
                out[i] = p[i] > threshold.data()[i] ? std::max(p[i], 0.0f) : 0.0f;
            break;
        }
    }
    return f;
}

Tensor SparseAutoencoder::decode(const Tensor &f) const
{
    if (f.rank() != 2 || f.dim(1) != width())
        throw Error("SAE: features " + f.shapeString() + " for a dictionary of " + std::to_string(width()));
    Tensor x({f.dim(0), inputSize()});
    matrixProduct(x.matrix(), f.matrix(), false, wDec.matrix(), false, false);
    x.matrix().rowwise() += ConstRowVectorMap(bDec.data(), inputSize());
    return x;
}

SparseAutoencoder initialSparseAutoencoder(
    SaeArchitecture architecture, int64_t inputSize, int64_t width, int k, uint64_t seed)
{
    if (inputSize < 1 || width < 1)
        throw Error("SAE: a dictionary of " + std::to_string(width) + " features over " + std::to_string(inputSize)
            + " dimensions");
    SparseAutoencoder sae;
    sae.architecture = architecture;
    sae.k = k;
    attention::GaussianStream random(seed, 0);
    sae.wDec = random.tensor(width, inputSize);
    for (int64_t i = 0; i < width; ++i) {
        auto row = sae.wDec.matrix().row(i);
        row *= float(0.1 / std::max(1e-12, double(row.norm())));
    }
    sae.wEnc = Tensor::uninitialized({inputSize, width});
    sae.wEnc.matrix() = sae.wDec.matrix().transpose();
    sae.bEnc = Tensor({width});
    sae.bDec = Tensor({inputSize});
    if (architecture == SaeArchitecture::JumpRelu) {
        sae.threshold = Tensor::uninitialized({width});
        std::fill_n(sae.threshold.data(), width, 0.001f);
    }
    sae.validate("a new SAE");
    return sae;
}

namespace {

// AuxK's term (saeBatch's comment) with y the rows to rebuild or predict: its value, and its gradients added to dW
// (W_dec's) and dpre.
double addAuxiliaryLoss(const SparseAutoencoder &sae, const Tensor &y, const Tensor &xHat, const Tensor &pre,
    const SaeObjective &objective, const std::vector<bool> &dead, Tensor &dW, Tensor &dpre)
{
    const int64_t B = y.dim(0), d = sae.inputSize(), F = sae.width();
    std::vector<int64_t> deadIndices;
    for (int64_t i = 0; i < F; ++i)
        if (dead[size_t(i)])
            deadIndices.push_back(i);
    if (deadIndices.empty() || objective.auxiliary == 0)
        return 0;
    const int wanted = objective.auxiliaryK > 0 ? objective.auxiliaryK : std::max<int>(1, int(d / 2));
    const int kAux = std::min<int>(wanted, int(deadIndices.size()));
    const double scale = objective.auxiliary * std::min(1.0, double(deadIndices.size()) / double(wanted));
    std::vector<float> deadPre(deadIndices.size());
    std::vector<int64_t> order;
    Eigen::RowVectorXf eHat(d), residual(d);
    double loss = 0;
    for (int64_t b = 0; b < B; ++b) {
        for (size_t j = 0; j < deadIndices.size(); ++j)
            deadPre[j] = pre.data()[b * F + deadIndices[j]];
        const std::vector<int64_t> chosen = largestIndices(deadPre.data(), int64_t(deadPre.size()), kAux, order);
        eHat.setZero();
        for (const int64_t j : chosen)
            if (deadPre[size_t(j)] > 0)
                eHat += deadPre[size_t(j)] * sae.wDec.matrix().row(deadIndices[size_t(j)]);
        residual = eHat - (y.matrix().row(b) - xHat.matrix().row(b));
        loss += double(residual.cast<double>().squaredNorm());
        const Eigen::RowVectorXf g = residual * float(2.0 * scale / double(B)); // ∂/∂ê_b
        for (const int64_t j : chosen) {
            const float z = deadPre[size_t(j)];
            if (z <= 0)
                continue;
            const int64_t i = deadIndices[size_t(j)];
            dW.matrix().row(i) += z * g;
            dpre.data()[b * F + i] += g.dot(sae.wDec.matrix().row(i));
        }
    }
    return scale * loss / double(B);
}

} // namespace

SaeBatchResult saeBatch(const SparseAutoencoder &sae, const Tensor &x, const SaeObjective &objective,
    const std::vector<bool> &dead, const Tensor *target)
{
    const int64_t B = x.dim(0), d = sae.inputSize(), F = sae.width();
    if (B < 1)
        throw Error("SAE: an empty batch");
    if (target && target->shape() != x.shape())
        throw Error("SAE: the rows to predict are " + target->shapeString() + ", the rows read " + x.shapeString());
    const Tensor &y = target ? *target : x;
    const Tensor pre = sae.preActivations(x);
    const Tensor f = sae.activate(pre);
    const Tensor xHat = sae.decode(f);
    SaeBatchResult r;
    Tensor dxHat = Tensor::uninitialized({B, d});
    dxHat.matrix() = (xHat.matrix() - y.matrix()) * float(2.0 / double(B));
    r.reconstruction = double((xHat.matrix() - y.matrix()).cast<double>().squaredNorm()) / double(B);

    Tensor dW = Tensor({F, d}), df({B, F});
    matrixProduct(dW.matrix(), f.matrix(), true, std::as_const(dxHat).matrix(), false, false);
    matrixProduct(df.matrix(), std::as_const(dxHat).matrix(), false, sae.wDec.matrix(), true, false);
    Tensor dbDec({d});
    RowVectorMap(dbDec.data(), d) = dxHat.matrix().colwise().sum();

    const double lambda = objective.sparsity;
    Tensor dpre({B, F});
    Tensor dLogThreshold;
    int64_t active = 0;
    if (sae.architecture == SaeArchitecture::Standard) {
        // λ/B Σ f_bi n_i: ∂/∂f_bi = λ n_i / B; ∂/∂W_dec,i = λ (Σ_b f_bi) / B · W_dec,i / n_i
        for (int64_t i = 0; i < F; ++i) {
            const double n = double(sae.wDec.matrix().row(i).norm());
            double column = 0;
            for (int64_t b = 0; b < B; ++b)
                column += double(f.data()[b * F + i]);
            r.sparsity += lambda * column * n / double(B);
            for (int64_t b = 0; b < B; ++b)
                df.data()[b * F + i] += float(lambda * n / double(B));
            if (n > 0)
                dW.matrix().row(i) += sae.wDec.matrix().row(i) * float(lambda * column / double(B) / n);
        }
    }
    if (sae.architecture == SaeArchitecture::JumpRelu)
        dLogThreshold = Tensor({F});
    const double eps = objective.bandwidth;
    const auto rectangle = [](double u) { return u > -0.5 && u < 0.5 ? 1.0 : 0.0; };
    r.fired.assign(size_t(F), false);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < F; ++i) {
            const float p = pre.data()[b * F + i], g = df.data()[b * F + i];
            const bool on = f.data()[b * F + i] != 0.0f;
            if (on) {
                ++active;
                r.fired[size_t(i)] = true;
            }
            if (sae.architecture == SaeArchitecture::JumpRelu) {
                const double theta = sae.threshold.data()[i];
                const bool above = p > theta;
                dpre.data()[b * F + i] = above ? g : 0.0f;
                r.sparsity += above ? lambda / double(B) : 0.0;
                // ∂/∂θ of pre·[pre > θ] and of λ/B [pre > θ]; then ∂/∂log θ = θ ∂/∂θ
                const double k = rectangle((double(p) - theta) / eps) / eps;
                dLogThreshold.data()[i] += float(theta * (-theta * k * double(g) - lambda / double(B) * k));
            } else {
                dpre.data()[b * F + i] = on ? g : 0.0f; // ReLU's and TopK's: only the active features pass
            }
        }
    r.l0 = double(active) / double(B);
    if (!dead.empty()) {
        if (int64_t(dead.size()) != F)
            throw Error("SAE: a mask of " + std::to_string(dead.size()) + " dead features for a dictionary of "
                + std::to_string(F));
        if (sae.architecture == SaeArchitecture::TopK)
            r.auxiliary = addAuxiliaryLoss(sae, y, xHat, pre, objective, dead, dW, dpre);
    }
    r.loss = r.reconstruction + r.sparsity + r.auxiliary;

    Tensor dWenc({d, F}), dbEnc({F});
    if (sae.applyDecoderBiasToInput) {
        Tensor centred = Tensor::uninitialized(x.shape());
        centred.matrix() = x.matrix().rowwise() - ConstRowVectorMap(sae.bDec.data(), d);
        matrixProduct(
            dWenc.matrix(), std::as_const(centred).matrix(), true, std::as_const(dpre).matrix(), false, false);
        // x − b_dec: b_dec's gradient loses what reaches the input
        Tensor dIn({B, d});
        matrixProduct(dIn.matrix(), std::as_const(dpre).matrix(), false, sae.wEnc.matrix(), true, false);
        RowVectorMap(dbDec.data(), d) -= dIn.matrix().colwise().sum();
    } else {
        matrixProduct(dWenc.matrix(), x.matrix(), true, std::as_const(dpre).matrix(), false, false);
    }
    RowVectorMap(dbEnc.data(), F) = dpre.matrix().colwise().sum();
    r.gradients["W_enc"] = std::move(dWenc);
    r.gradients["b_enc"] = std::move(dbEnc);
    r.gradients["W_dec"] = std::move(dW);
    r.gradients["b_dec"] = std::move(dbDec);
    if (sae.architecture == SaeArchitecture::JumpRelu)
        r.gradients["log_threshold"] = std::move(dLogThreshold);
    return r;
}

SaeQuality saeQuality(const SparseAutoencoder &sae, const Tensor &x, const Tensor &target)
{
    const int64_t N = x.dim(0), F = sae.width();
    if (N < 1)
        throw Error("SAE: no activations to measure on");
    if (target.shape() != x.shape())
        throw Error("SAE: the rows to predict are " + target.shapeString() + ", the rows read " + x.shapeString());
    const Tensor f = sae.encode(x);
    const Tensor yHat = sae.decode(f);
    SaeQuality q;
    const Eigen::RowVectorXd mean = target.matrix().cast<double>().colwise().mean();
    const double total = (target.matrix().cast<double>().rowwise() - mean).squaredNorm();
    const double error = (yHat.matrix() - target.matrix()).cast<double>().squaredNorm();
    q.unexplained = total > 0 ? error / total : (error > 0 ? 1.0 : 0.0);
    q.density.assign(size_t(F), 0.0);
    int64_t active = 0;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < F; ++i)
            if (f.data()[n * F + i] != 0.0f) {
                q.density[size_t(i)] += 1.0;
                ++active;
            }
    for (double &d : q.density) {
        d /= double(N);
        q.dead += d == 0.0 ? 1 : 0;
        q.dense += d > 0.1 ? 1 : 0;
    }
    q.l0 = double(active) / double(N);
    return q;
}

} // namespace atlas
