#include "engine/tokenretention.h"

#include "engine/programbuilder.h"
#include "util/commalist.h"
#include "util/error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

namespace atlas {

int TokenRetention::keptAfter(int layer, int T) const
{
    const int scheduled = int(std::lround(double(keep.at(size_t(layer))) * T));
    return std::min(T, std::max({scheduled, 1, int(protect.size())}));
}

TokenRetention TokenRetention::geometric(float rate, int layers)
{
    TokenRetention r;
    float share = 1;
    for (int j = 0; j + 1 < layers; ++j)
        r.keep.push_back(share *= rate);
    return r;
}

std::vector<float> parseRetentionSchedule(const std::string &text, int layers, const std::string &source)
{
    std::vector<float> shares;
    for (const std::string &item : splitCommaList(text)) {
        float value = 0;
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
        if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || !(value > 0 && value <= 1))
            throw Error(source + ": '" + item + "' is not a share of the tokens in (0, 1]");
        if (!shares.empty() && value > shares.back())
            throw Error(source + ": " + item + " after " + retentionScheduleText({shares.back()})
                + ": a token eliminated cannot come back, so the shares cannot grow");
        shares.push_back(value);
    }
    if (shares.size() == 1)
        return TokenRetention::geometric(shares.front(), layers).keep;
    if (int(shares.size()) != layers - 1)
        throw Error(source + ": give one rate, or one share for each layer but the last (" + std::to_string(layers - 1)
            + " for this model); got " + std::to_string(shares.size()));
    return shares;
}

std::string retentionScheduleText(const std::vector<float> &keep)
{
    std::string text;
    for (float share : keep) {
        char item[32];
        std::snprintf(item, sizeof item, "%.3g", double(share));
        text += (text.empty() ? "" : ", ") + std::string(item);
    }
    return text;
}

void checkTokenRetention(
    const ModelConfig &config, const TokenRetention &retention, int tokens, bool efficientKernel, bool dropsLayers)
{
    if (retention.empty())
        return;
    const char *why = config.causal ? "attends both ways (a causal model's early tokens receive more attention "
                                      "only because more queries see them)"
        : config.isEncoderDecoder() ? "has one stack"
        : config.reversible         ? "has plain blocks (not reversible ones)"
        : efficientKernel           ? "runs exact attention (not an efficient kernel)"
        : dropsLayers               ? "runs every block (no LayerDrop)"
        : config.adaptiveSpan()     ? "has no adaptive span"
                                    : nullptr;
    if (why)
        throw Error("eliminating tokens (PoWER-BERT) needs a model that " + std::string(why));
    if (int(retention.keep.size()) != config.layers - 1)
        throw Error("the token schedule has " + std::to_string(retention.keep.size()) + " shares; this model's "
            + std::to_string(config.layers) + " layers need " + std::to_string(config.layers - 1));
    for (size_t j = 0; j < retention.keep.size(); ++j)
        if (!(retention.keep[j] > 0 && retention.keep[j] <= 1) || (j > 0 && retention.keep[j] > retention.keep[j - 1]))
            throw Error("the token schedule's share after layer " + std::to_string(j)
                + " must be in (0, 1] and no larger than the one before");
    for (size_t k = 0; k < retention.protect.size(); ++k)
        if (retention.protect[k] < 0 || retention.protect[k] >= tokens
            || (k > 0 && retention.protect[k] <= retention.protect[k - 1]))
            throw Error("protected position " + std::to_string(retention.protect[k]) + " must be in 0.."
                + std::to_string(tokens - 1) + ", ascending and listed once");
}

void eliminateTokens(Tensor &significance, Tensor &kept, const Tensor &probs, const Tensor *present, int target,
    const TokenRetention &retention, int layer)
{
    const int64_t H = probs.dim(0), T = probs.dim(1);
    const auto isPresent = [&](int64_t k) { return !present || present->data()[k] != 0; };
    const bool targetsOnly = retention.rank == TokenRetention::Rank::Targets && !retention.protect.empty();
    const auto asks = [&](int64_t i) {
        return isPresent(i)
            && (!targetsOnly || std::binary_search(retention.protect.begin(), retention.protect.end(), int(i)));
    };
    std::fill(significance.data(), significance.data() + T, 0.0f);
    float *sig = significance.data();
    for (int64_t h = 0; h < H; ++h) {
        ConstMatrixMap a = probs.slice(h);
        for (int64_t i = 0; i < T; ++i)
            if (asks(i))
                for (int64_t k = 0; k < T; ++k)
                    sig[k] += a(i, k);
    }
    for (int64_t k = 0; k < T; ++k)
        if (!isPresent(k))
            sig[k] = 0;
    std::vector<int64_t> order;
    for (int64_t k = 0; k < T; ++k)
        if (isPresent(k) && !std::binary_search(retention.protect.begin(), retention.protect.end(), int(k)))
            order.push_back(k);
    if (retention.rank == TokenRetention::Rank::Random) {
        std::mt19937_64 rng(retention.seed * 1000003u + uint64_t(layer));
        std::shuffle(order.begin(), order.end(), rng);
    } else {
        std::stable_sort(order.begin(), order.end(), [sig](int64_t a, int64_t b) { return sig[a] > sig[b]; });
    }
    std::fill(kept.data(), kept.data() + T, 0.0f);
    int count = 0;
    for (int p : retention.protect)
        if (isPresent(p)) {
            kept.data()[p] = 1;
            ++count;
        }
    for (size_t n = 0; n < order.size() && count < target; ++n, ++count)
        kept.data()[order[n]] = 1;
}

void maskEliminatedKeys(Tensor &masked, const Tensor &present)
{
    const float minusInf = -std::numeric_limits<float>::infinity();
    const int64_t H = masked.dim(0), T = masked.dim(1);
    for (int64_t k = 0; k < T; ++k)
        if (present.data()[k] == 0)
            for (int64_t h = 0; h < H; ++h)
                masked.slice(h).col(k).setConstant(minusInf);
}

// PoWER-BERT's extract layer after layer i's attention: the significance of each token and the ones that go on.
void ProgramBuilder::extractTokens(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const TokenRetention &r = m_input.retention;
    const int target = r.keptAfter(i, int(T));
    std::vector<std::string> inputs = {p + "attn.probs"};
    if (i > 0)
        inputs.push_back(names::layerPrefix(m_s, i - 1) + "kept");
    const std::string ranked = r.rank == TokenRetention::Rank::Random
        ? std::to_string(target) + " tokens at random (a control for significance)"
        : "the " + std::to_string(target) + " of highest sig (ties: the earlier)";
    const bool targets = r.rank == TokenRetention::Rank::Targets && !r.protect.empty();
    const std::string queries = targets ? "protected query (not PoWER-BERT: the positions asked for only)"
        : i > 0                         ? "query still present"
                                        : "query";
    add(p + "extract", "extract tokens (PoWER-BERT)", i, inputs,
        {{p + "attn.significance", {T},
             "sig(k) = Σ_h Σ_i A_h[i, k]  (the attention token k receives, over every head and every " + queries + ")"},
            {p + "kept", {T},
                "1 for the tokens that go on past layer " + std::to_string(i) + ": "
                    + (r.protect.empty() ? "" : "the " + std::to_string(r.protect.size()) + " protected, then ")
                    + ranked + "; later layers mask the others as keys"}},
        [p, i, target, T = T, previous = i > 0 ? inputs[1] : std::string()](
            const Model &, const Input &in, const Trace &tr) {
            Tensor significance({T}), kept({T});
            eliminateTokens(significance, kept, tr.tensor(p + "attn.probs"),
                previous.empty() ? nullptr : &tr.tensor(previous), target, in.retention, i);
            return Outputs {std::move(significance), std::move(kept)};
        });
}

} // namespace atlas
