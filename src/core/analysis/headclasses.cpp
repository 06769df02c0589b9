#include "analysis/headclasses.h"

#include "engine/attentiontrace.h"
#include "engine/blockcomponents.h"
#include "engine/engine.h"
#include "util/error.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <random>

namespace atlas {

namespace {

struct ClassText
{
    const char *name, *title, *definition;
};

constexpr ClassText kClasses[kHeadClassCount] = {
    {"previous-token", "previous token", "the mean weight a query puts on the token just before it, A[i, i−1]"},
    {"induction", "induction",
        "on the repeated sequence, the mean weight a second-half query puts on the token after the earlier copy of "
        "its own token, A[i, i−n+1]: the head that completes a pattern seen before"},
    {"duplicate-token", "duplicate token",
        "on the repeated sequence, the mean weight a second-half query puts on the earlier copy of its own token, "
        "A[i, i−n]"},
    {"first-token", "first token", "the mean weight a query (past the first) puts on position 0, a sink, A[i, 0]"},
    {"self", "self", "the mean weight a query (past the first) puts on itself, A[i, i]"},
    {"local", "local",
        "the mean weight a query (past the first) puts within 3 positions of itself, Σ A[i, j], |i − j| ≤ 3"},
    {"copying", "copying",
        "Σ Re λ / Σ |λ| over the eigenvalues of the head's OV circuit from token to token, W_E W_V W_O W_Uᵀ: 1 when "
        "the head writes the tokens it reads, −1 when it writes against them (Elhage et al. 2021)"},
};

Eigen::MatrixXd asMatrix(const Tensor &t)
{
    return Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        t.data(), t.dim(0), t.dim(1))
        .cast<double>();
}

// x W + b for every row of the identity, less b: the linear map itself, [in, out], whatever the layout.
template <typename Apply> Eigen::MatrixXd linearMap(int64_t in, int64_t out, Apply apply)
{
    Tensor identity({in, in}), zeros({1, in}), mapped({in, out}), bias({1, out});
    for (int64_t i = 0; i < in; ++i)
        identity.data()[i * in + i] = 1.0f;
    apply(mapped, identity);
    apply(bias, zeros);
    return asMatrix(mapped).rowwise() - asMatrix(bias).row(0);
}

// Every head's copying score: Σ Re λ / Σ |λ| of W_O,h W_Uᵀ W_E W_V,h (d × d).
void copyingScores(const Model &model, HeadClasses &out)
{
    const ModelConfig &c = model.config;
    const int64_t D = c.dModel, d = c.headDim(), H = c.heads;
    // W_Uᵀ W_E, D × D, from the float matrices in place (a double copy of a 152k-token vocabulary would be 2 GB).
    const MatrixRM product = model.outputWeight().matrix().transpose() * model.wte.matrix();
    const Eigen::MatrixXd tokens = product.cast<double>();
    for (int l = 0; l < c.layers; ++l) {
        const BlockWeights &b = model.blocks[size_t(l)];
        const Eigen::MatrixXd qkv
            = linearMap(D, qkvWidth(c), [&](Tensor &o, const Tensor &x) { projectQkv(o, x, c, b); });
        const LinearModule o = blockModule(c, b, BlockPart::Out);
        const Eigen::MatrixXd output = linearMap(H * d, D, [&](Tensor &y, const Tensor &x) { moduleForward(y, x, o); });
        for (int64_t h = 0; h < H; ++h) {
            const int64_t g = h / c.queriesPerKv();
            const Eigen::MatrixXd circuit
                = output.middleRows(h * d, d) * tokens * qkv.middleCols(qkvColumn(c, 2, g), d); // d × d
            const Eigen::VectorXcd lambda = Eigen::EigenSolver<Eigen::MatrixXd>(circuit, false).eigenvalues();
            const double magnitude = lambda.cwiseAbs().sum();
            out.scores[(size_t(HeadClass::Copying) * size_t(c.layers) + size_t(l)) * size_t(H) + size_t(h)]
                = magnitude > 0 ? lambda.real().sum() / magnitude : 0.0;
        }
    }
}

} // namespace

const char *headClassName(HeadClass kind)
{
    return kClasses[int(kind)].name;
}

const char *headClassTitle(HeadClass kind)
{
    return kClasses[int(kind)].title;
}

const char *headClassDefinition(HeadClass kind)
{
    return kClasses[int(kind)].definition;
}

std::vector<int> repeatedRandomTokens(const ModelConfig &config, int half, uint64_t seed)
{
    const int n = std::min(half, config.context / 2);
    if (n < 2)
        throw Error("the head classes need a repeated sequence of at least 2 tokens twice; this model's context is "
            + std::to_string(config.context) + " tokens");
    // A model that reads bytes draws printable characters (32 … 126): the control bytes never occur in its text.
    const bool bytes = config.tokenizer == "bytes" && config.ordinaryTokens() >= 127;
    const int first = bytes ? 32 : 0, ordinary = bytes ? 127 - 32 : config.ordinaryTokens();
    if (ordinary < n)
        throw Error("the head classes draw " + std::to_string(n) + " distinct tokens, and this model has "
            + std::to_string(ordinary) + " ordinary tokens");
    // Fisher–Yates by the generator's own draws, so that a seed gives the same tokens with any standard library.
    std::mt19937_64 rng(seed);
    std::vector<int> pool(static_cast<size_t>(ordinary));
    std::iota(pool.begin(), pool.end(), first);
    for (int i = 0; i < n; ++i)
        std::swap(pool[size_t(i)], pool[size_t(i + int(rng() % uint64_t(ordinary - i)))]);
    std::vector<int> tokens(pool.begin(), pool.begin() + n);
    tokens.insert(tokens.end(), pool.begin(), pool.begin() + n);
    return tokens;
}

HeadClasses classifyHeads(std::shared_ptr<const Model> model, const std::vector<int> &tokens,
    const std::atomic<bool> *cancel, bool keepAttention)
{
    const ModelConfig &c = model->config;
    const int T = int(tokens.size()), n = T / 2;
    if (T < 4 || T % 2 != 0 || !std::equal(tokens.begin(), tokens.begin() + n, tokens.begin() + n))
        throw Error("the head classes read a sequence whose second half repeats its first");
    if (c.fourier.active())
        throw Error("the head classes score attention heads, and this model's blocks mix their tokens by a Fourier "
                    "transform (FNet)");
    HeadClasses out;
    out.layers = c.layers;
    out.heads = c.heads;
    out.half = n;
    out.tokens = tokens;
    out.scores.assign(size_t(kHeadClassCount) * size_t(c.layers) * size_t(c.heads), 0.0);
    if (keepAttention)
        out.attention.assign(size_t(c.layers) * size_t(c.heads) * size_t(T) * size_t(T), 0.0f);
    Input input;
    input.tokens = tokens;
    if (c.isEncoderDecoder()) // the decoder's heads, reading the first half as their source
        input.source.assign(tokens.begin(), tokens.begin() + n);
    Engine engine(model, input);
    engine.runToEnd();
    const names::Stack stack = c.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack;
    std::vector<float> buffer;
    for (int l = 0; l < c.layers; ++l) {
        if (cancel && cancel->load())
            throw Error("cancelled");
        const std::optional<LayerAttention> attention
            = LayerAttention::find(model.get(), {}, engine.trace(), {stack, false}, l);
        if (!attention) // a block LayerDrop leaves out of the run has no attention to score
            continue;
        for (int h = 0; h < c.heads; ++h) {
            const float *A = attention->rows(ops::ScoreStage::Probs, h, 0, T, buffer); // [T, T]
            if (keepAttention)
                std::copy_n(A, size_t(T) * size_t(T),
                    out.attention.begin() + (size_t(l) * size_t(c.heads) + size_t(h)) * size_t(T) * size_t(T));
            const auto at = [&](int i, int j) { return double(A[size_t(i) * size_t(T) + size_t(j)]); };
            double previous = 0, first = 0, self = 0, local = 0, induction = 0, duplicate = 0;
            for (int i = 1; i < T; ++i) {
                previous += at(i, i - 1);
                first += at(i, 0);
                self += at(i, i);
                for (int j = std::max(0, i - 3); j <= std::min(T - 1, i + 3); ++j)
                    local += at(i, j);
            }
            for (int i = n; i < T; ++i) {
                duplicate += at(i, i - n);
                if (i <= T - 2)
                    induction += at(i, i - n + 1);
            }
            const auto put = [&](HeadClass kind, double value) {
                out.scores[(size_t(kind) * size_t(c.layers) + size_t(l)) * size_t(c.heads) + size_t(h)] = value;
            };
            put(HeadClass::PreviousToken, previous / (T - 1));
            put(HeadClass::FirstToken, first / (T - 1));
            put(HeadClass::Self, self / (T - 1));
            put(HeadClass::Local, local / (T - 1));
            put(HeadClass::Induction, induction / (n - 1));
            put(HeadClass::DuplicateToken, duplicate / n);
        }
    }
    copyingScores(*model, out);
    return out;
}

} // namespace atlas
