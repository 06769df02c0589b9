#include "attention/attentionkernel.h"

#include "attention/attentionpattern.h"
#include "attention/fullattention.h"
#include "util/error.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>

namespace atlas::attention {

namespace {

using ParamType = KernelParamType;
using ParamInfo = KernelParam;

// A stride of about √T: the Sparse Transformer's choice for T tokens.
int sqrtStride(int T)
{
    return std::max(1, int(std::lround(std::sqrt(double(T)))));
}

// A spec's typed parameters, run through the kernel's own checks (buckets even, window_blocks odd, summary <=
// stride) where it has them.
template <class P, class Check> P checked(P params, Check check)
{
    check(params);
    return params;
}

} // namespace

// Every kind, its parameters, their defaults (the parameter structs' own) and ranges. Rules that tie two
// parameters together are the kernels' check functions, run by their typed readers below.
const std::vector<AttentionKernelKind> &attentionKernels()
{
    static const LshParams lsh;
    static const BigBirdParams bigbird;
    static const LongformerParams longformer;
    static const StridedParams strided;
    static const FixedParams fixed;
    static const SwinParams swin;
    static const LinformerParams linformer;
    static const PerformerParams performer;
    const ParamInfo seed {"seed", ParamType::Seed};
    static const std::vector<AttentionKernelKind> table = {
        {.kind = "full",
            .complexity = "O(N²)",
            .exact = true,
            .forward = [](const AttentionKernelSpec &, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
                           const AttentionOptions &o) { return full_attention_forward(q, k, v, o); },
            .title = "exact softmax"},
        {.kind = "lsh",
            .params = {{"rounds", ParamType::Integer, lsh.rounds, 1}, {"buckets", ParamType::Integer, lsh.buckets, 1},
                {"chunk", ParamType::Integer, lsh.chunk, 1}, seed},
            .complexity = "O(N log N)",
            .check = [](const AttentionKernelSpec &s) { (void)lshParams(s); },
            .forward = [](const AttentionKernelSpec &s, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
                           const AttentionOptions &o) { return lsh_attention_forward(q, k, v, lshParams(s), o); },
            .suggest =
                [](int T) {
                    int buckets = 2; // about 8 keys a bucket, an even count up to 64, and chunks of that size
                    while (buckets * 2 <= std::min(64, T / 8))
                        buckets *= 2;
                    const int chunk = std::clamp((T + buckets - 1) / buckets, 2, 64);
                    return std::vector<std::string> {
                        "rounds=2", "buckets=" + std::to_string(buckets), "chunk=" + std::to_string(chunk)};
                },
            .compared =
                [](int64_t) {
                    return std::vector<std::string> {"rounds=2", "buckets=4", "chunk=4"};
                },
            .hashes = true,
            .title = "Reformer's LSH"},
        {.kind = "bigbird",
            .params = {{"block", ParamType::Integer, bigbird.block, 1},
                {"window_blocks", ParamType::Integer, bigbird.windowBlocks, 0},
                {"global_blocks", ParamType::Integer, bigbird.globalBlocks, 0},
                {"random_blocks", ParamType::Integer, bigbird.randomBlocks, 0}, seed},
            .complexity = "O(N)",
            .fixedPattern = true,
            .check = [](const AttentionKernelSpec &s) { (void)bigBirdParams(s); },
            .forward
            = [](const AttentionKernelSpec &s, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
                  const AttentionOptions &o) { return bigbird_attention_forward(q, k, v, bigBirdParams(s), o); },
            .suggest =
                [](int T) {
                    int block = 1; // blocks of T/16 (a power of two up to 64); more globals and randoms past 4096
                    while (block * 2 <= std::min(64, T / 16))
                        block *= 2;
                    const bool large = T >= 4096;
                    return std::vector<std::string> {"block=" + std::to_string(block), "window_blocks=3",
                        "global_blocks=" + std::to_string(large ? 2 : 1),
                        "random_blocks=" + std::to_string(large ? 3 : 1), "seed=0"};
                },
            .compared =
                [](int64_t) {
                    return std::vector<std::string> {
                        "block=2", "window_blocks=1", "global_blocks=1", "random_blocks=1"};
                },
            .rule = [](const AttentionKernelSpec &s, bool) { return bigBirdRule(bigBirdParams(s)); },
            .title = "BigBird"},
        {.kind = "longformer",
            .params = {{"window", ParamType::Integer, longformer.window, 0},
                {"dilation", ParamType::Integer, longformer.dilation, 1}, {"global", ParamType::Positions}},
            .complexity = "O(N)",
            .fixedPattern = true,
            .check = [](const AttentionKernelSpec &s) { (void)longformerParams(s); },
            .forward
            = [](const AttentionKernelSpec &s, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
                  const AttentionOptions &o) { return longformer_attention_forward(q, k, v, longformerParams(s), o); },
            .suggest =
                [](int T) {
                    const int window = std::clamp(2 * int(std::lround(T / 16.0)), 2, 512); // an eighth of T
                    return std::vector<std::string> {"window=" + std::to_string(window), "dilation=1", "global=0"};
                },
            .compared = [](int64_t) { return std::vector<std::string> {"window=4"}; },
            .rule
            = [](const AttentionKernelSpec &s, bool causal) { return longformerRule(longformerParams(s), causal); },
            .globalPositions = true,
            .title = "Longformer"},
        {.kind = "strided",
            .params = {{"stride", ParamType::Integer, strided.stride, 1}},
            .complexity = "O(N√N)",
            .fixedPattern = true,
            .check = [](const AttentionKernelSpec &s) { (void)stridedParams(s); },
            .forward
            = [](const AttentionKernelSpec &s, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
                  const AttentionOptions &o) { return strided_attention_forward(q, k, v, stridedParams(s), o); },
            .suggest = [](int T) { return std::vector<std::string> {"stride=" + std::to_string(sqrtStride(T))}; },
            .compared = [](int64_t) { return std::vector<std::string> {"stride=4"}; },
            .rule =
                [](const AttentionKernelSpec &s, bool) {
                    const std::string l = std::to_string(stridedParams(s).stride);
                    return "|i − j| ≤ " + l + "  or  (i − j) mod " + l + " = 0";
                },
            .title = "Sparse Transformer (strided)"},
        {.kind = "fixed",
            .params
            = {{"stride", ParamType::Integer, fixed.stride, 1}, {"summary", ParamType::Integer, fixed.summary, 0}},
            .complexity = "O(N√N)",
            .fixedPattern = true,
            .check = [](const AttentionKernelSpec &s) { (void)fixedParams(s); },
            .forward = [](const AttentionKernelSpec &s, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
                           const AttentionOptions &o) { return fixed_attention_forward(q, k, v, fixedParams(s), o); },
            .suggest =
                [](int T) {
                    return std::vector<std::string> {"stride=" + std::to_string(sqrtStride(T)), "summary=1"};
                },
            .compared = [](int64_t) { return std::vector<std::string> {"stride=4"}; },
            .rule = [](const AttentionKernelSpec &s, bool) { return fixedRule(fixedParams(s)); },
            .title = "Sparse Transformer (fixed)"},
        {.kind = "swin",
            .params = {{"window", ParamType::Integer, swin.window, 1}, {"shift", ParamType::Integer, swin.shift, 0},
                {"grid", ParamType::Integer, swin.grid, 0}},
            .complexity = "O(N)",
            .fixedPattern = true,
            .check = [](const AttentionKernelSpec &s) { (void)swinParams(s); },
            .forward = [](const AttentionKernelSpec &s, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
                           const AttentionOptions &o) { return swin_attention_forward(q, k, v, swinParams(s), o); },
            .suggest =
                [](int T) { // windows of about T/8 (a power of two up to 64), shifted by half in the odd layers
                    int window = 2;
                    while (window * 2 <= std::min(64, T / 8))
                        window *= 2;
                    return std::vector<std::string> {
                        "window=" + std::to_string(window), "shift=" + std::to_string(window / 2), "grid=0"};
                },
            .compared =
                [](int64_t) {
                    return std::vector<std::string> {"window=4", "shift=2"};
                },
            .rule =
                [](const AttentionKernelSpec &s, bool) {
                    const SwinParams p = swinParams(s);
                    const std::string W = std::to_string(p.window), sh = std::to_string(p.shift);
                    const std::string windows = p.grid == 0
                        ? "⌊(i + " + sh + ") / " + W + "⌋ = ⌊(j + " + sh + ") / " + W + "⌋"
                        : "i and j in the same " + W + " × " + W + " window of a grid " + std::to_string(p.grid)
                            + " patches wide" + (p.shift > 0 ? ", shifted by " + sh : "");
                    return p.shift > 0 ? windows + "   (odd layers; the even ones unshifted)" : windows;
                },
            .atLayer =
                [](const AttentionKernelSpec &s, int layer) {
                    AttentionKernelSpec out = s;
                    out.params["shift"] = std::to_string(swinParamsAtLayer(swinParams(s), layer).shift);
                    return out;
                },
            .title = "Swin (shifted windows)"},
        {.kind = "linformer",
            .params = {{"k", ParamType::Integer, linformer.k, 1}, seed,
                {"projection", ParamType::Choice, 0, 0, {"random", "identity"}}},
            .complexity = "O(N)",
            .causal = false,
            .notCausal = "each projected key and value mixes all T positions, future ones included",
            .check = [](const AttentionKernelSpec &s) { (void)linformerParams(s); },
            .forward
            = [](const AttentionKernelSpec &s, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
                  const AttentionOptions &o) { return linformer_attention_forward(q, k, v, linformerParams(s), o); },
            .suggest
            = [](int T) { return std::vector<std::string> {"k=" + std::to_string(std::clamp(T / 4, 1, 256))}; },
            .compared
            = [](int64_t T) { return std::vector<std::string> {"k=" + std::to_string(std::max<int64_t>(1, T / 2))}; },
            .approximation = {"k", "k", "projected length",
                [](int64_t T) { // 1, 2, 4 … below T, then T itself (no projection left to approximate)
                    std::vector<int> values;
                    for (int64_t k = 1; k < T; k *= 2)
                        values.push_back(int(k));
                    values.push_back(int(std::max<int64_t>(1, T)));
                    return values;
                },
                "Linformer projects keys and values along the sequence with a random E (k × T, entries N(0, 1/k)): "
                "context = P·(E V) with P = softmax(Q (E K)ᵀ/√d) (T × k). The weight of value j in query i's context "
                "is therefore (P·E)ᵢⱼ: it can be negative, and rows need not sum to 1."},
            .title = "Linformer"},
        {.kind = "performer",
            .params = {{"features", ParamType::Integer, performer.features, 1}, seed},
            .complexity = "O(N)",
            .check = [](const AttentionKernelSpec &s) { (void)performerParams(s); },
            .forward
            = [](const AttentionKernelSpec &s, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
                  const AttentionOptions &o) { return performer_attention_forward(q, k, v, performerParams(s), o); },
            .suggest
            = [](int T) { return std::vector<std::string> {"features=" + std::to_string(T >= 1024 ? 256 : 64)}; },
            .compared = [](int64_t) { return std::vector<std::string> {"features=64"}; },
            .approximation = {"features", "m", "random features",
                [](int64_t) {
                    std::vector<int> values;
                    for (int m = 8; m <= 1024; m *= 2)
                        values.push_back(m);
                    return values;
                },
                "Performer (FAVOR+) estimates exp(qᵢ·kⱼ/√d) by φ(qᵢ)·φ(kⱼ), with m positive orthogonal random features "
                "φ(x) = exp(ω·x − |x|²/2)/√m (x = q/d^¼ or k/d^¼). Its implied weights are wᵢⱼ = φ(qᵢ)·φ(kⱼ) / Σⱼ′ "
                "φ(qᵢ)·φ(kⱼ′): positive, each row sums to 1, never formed by the kernel itself (it computes "
                "φ(Q)(φ(K)ᵀV) in O(T·m·d))."},
            .title = "Performer"},
    };
    return table;
}

namespace {

std::string joined(const std::vector<std::string> &items, const char *separator = ", ")
{
    std::string out;
    for (const std::string &s : items)
        out += (out.empty() ? "" : separator) + s;
    return out;
}

const AttentionKernelKind &kindOf(const std::string &kind)
{
    return attentionKernel(kind);
}

// A spec's values read through the table: every error names the kind and the key.
class Params
{
public:
    Params(const AttentionKernelSpec &spec, const char *kind)
        : m_spec(spec)
        , m_info(kindOf(spec.kind))
    {
        if (spec.kind != kind)
            throw Error("attention kernel '" + spec.kind + "' is not '" + kind + "'");
        for (const auto &[key, value] : spec.params)
            if (find(key) == nullptr) {
                std::vector<std::string> known;
                for (const ParamInfo &p : m_info.params)
                    known.push_back(p.key);
                throw Error("attention kernel '" + spec.kind + "': unknown parameter '" + key
                    + "' (known: " + (known.empty() ? std::string("none") : joined(known)) + ")");
            }
    }

    int integer(const std::string &key) const
    {
        const ParamInfo &info = *find(key);
        const std::string *text = given(key);
        if (text == nullptr)
            return info.fallback;
        const int value = parse<int>(key, *text, true);
        if (value < info.minimum)
            fail(key, "must be at least " + std::to_string(info.minimum) + ", got " + *text);
        return value;
    }

    uint64_t seed() const
    {
        const std::string *text = given("seed");
        return text == nullptr ? 0 : parse<uint64_t>("seed", *text);
    }

    std::vector<int> positions(const std::string &key) const
    {
        std::vector<int> out;
        const std::string *text = given(key);
        for (size_t begin = 0; text != nullptr && begin <= text->size();) {
            const size_t comma = std::min(text->find(',', begin), text->size());
            out.push_back(parse<int>(key, text->substr(begin, comma - begin)));
            begin = comma + 1;
        }
        return out;
    }

    std::string choice(const std::string &key) const
    {
        const ParamInfo &info = *find(key);
        const std::string *text = given(key);
        if (text == nullptr)
            return info.choices.front();
        if (std::find(info.choices.begin(), info.choices.end(), *text) == info.choices.end())
            fail(key, "must be " + joined(info.choices, " or ") + ", got '" + *text + "'");
        return *text;
    }

    // Every parameter with defaults filled in, "key=value" in the table's order; an empty list is left out.
    std::string describe() const
    {
        std::vector<std::string> parts;
        for (const ParamInfo &p : m_info.params) {
            std::string value;
            if (p.type == ParamType::Integer)
                value = std::to_string(integer(p.key));
            else if (p.type == ParamType::Seed)
                value = std::to_string(seed());
            else if (p.type == ParamType::Choice)
                value = choice(p.key);
            else
                for (int position : positions(p.key)) {
                    if (!value.empty())
                        value += ',';
                    value += std::to_string(position);
                }
            if (!value.empty())
                parts.push_back(p.key + "=" + value);
        }
        return parts.empty() ? m_spec.kind : m_spec.kind + " (" + joined(parts) + ")";
    }

    [[noreturn]] void fail(const std::string &key, const std::string &what) const
    {
        throw Error("attention kernel '" + m_spec.kind + "': parameter '" + key + "' " + what);
    }

private:
    const ParamInfo *find(const std::string &key) const
    {
        for (const ParamInfo &p : m_info.params)
            if (p.key == key)
                return &p;
        return nullptr;
    }

    const std::string *given(const std::string &key) const
    {
        const auto it = m_spec.params.find(key);
        return it == m_spec.params.end() ? nullptr : &it->second;
    }

    // An integer, negative ones too when `signedOk` (the caller's range check then names the minimum).
    template <typename T> T parse(const std::string &key, const std::string &text, bool signedOk = false) const
    {
        T value {};
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || (!signedOk && value < T(0)))
            fail(key,
                std::string(signedOk ? "must be an integer" : "must be a non-negative integer") + ", got '" + text
                    + "'");
        return value;
    }

    const AttentionKernelSpec &m_spec;
    const AttentionKernelKind &m_info;
};

} // namespace

const AttentionKernelKind &attentionKernel(const std::string &kind)
{
    for (const AttentionKernelKind &k : attentionKernels())
        if (k.kind == kind)
            return k;
    throw Error("unknown attention kernel '" + kind + "' (known: " + joined(attentionKernelKinds()) + ")");
}

const std::vector<std::string> &attentionKernelKinds()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const AttentionKernelKind &k : attentionKernels())
            out.push_back(k.kind);
        return out;
    }();
    return names;
}

bool isExactAttention(const AttentionKernelSpec &spec)
{
    return attentionKernel(spec.kind).exact;
}

int kernelInteger(const AttentionKernelSpec &spec, const std::string &key)
{
    return Params(spec, spec.kind.c_str()).integer(key);
}

uint64_t kernelSeed(const AttentionKernelSpec &spec)
{
    return Params(spec, spec.kind.c_str()).seed();
}

std::vector<int> kernelPositions(const AttentionKernelSpec &spec, const std::string &key)
{
    return Params(spec, spec.kind.c_str()).positions(key);
}

LshParams lshParams(const AttentionKernelSpec &spec)
{
    const Params r(spec, "lsh");
    return checked(LshParams {r.integer("rounds"), r.integer("buckets"), r.integer("chunk"), r.seed()}, checkLshParams);
}

BigBirdParams bigBirdParams(const AttentionKernelSpec &spec)
{
    const Params r(spec, "bigbird");
    return checked(BigBirdParams {r.integer("block"), r.integer("window_blocks"), r.integer("global_blocks"),
                       r.integer("random_blocks"), r.seed()},
        checkBigBirdParams);
}

LongformerParams longformerParams(const AttentionKernelSpec &spec)
{
    const Params r(spec, "longformer");
    return LongformerParams {r.integer("window"), r.integer("dilation"), r.positions("global")};
}

StridedParams stridedParams(const AttentionKernelSpec &spec)
{
    const Params r(spec, "strided");
    return checked(StridedParams {r.integer("stride")}, checkStridedParams);
}

FixedParams fixedParams(const AttentionKernelSpec &spec)
{
    const Params r(spec, "fixed");
    return checked(FixedParams {r.integer("stride"), r.integer("summary")}, checkFixedParams);
}

SwinParams swinParams(const AttentionKernelSpec &spec)
{
    const Params r(spec, "swin");
    return checked(SwinParams {r.integer("window"), r.integer("shift"), r.integer("grid")}, checkSwinParams);
}

AttentionKernelSpec kernelSpecAtLayer(const AttentionKernelSpec &spec, int layer)
{
    const AttentionKernelKind &kind = attentionKernel(spec.kind);
    return kind.atLayer ? kind.atLayer(spec, layer) : spec;
}

LinformerParams linformerParams(const AttentionKernelSpec &spec)
{
    const Params r(spec, "linformer");
    LinformerParams p;
    p.k = r.integer("k");
    p.seed = r.seed();
    p.identity = r.choice("projection") == "identity";
    return p;
}

PerformerParams performerParams(const AttentionKernelSpec &spec)
{
    const Params r(spec, "performer");
    return PerformerParams {r.integer("features"), r.seed()};
}

AttentionKernelSpec parseAttentionKernelSpec(const std::string &kind, const std::vector<std::string> &keyValues)
{
    AttentionKernelSpec spec {kind, {}};
    kindOf(kind);
    for (const std::string &kv : keyValues) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
            throw Error("attention kernel '" + kind + "': '" + kv + "' is not key=value");
        const std::string key = kv.substr(0, eq);
        if (!spec.params.emplace(key, kv.substr(eq + 1)).second)
            throw Error("attention kernel '" + kind + "': parameter '" + key + "' is given twice");
    }
    validateAttentionKernelSpec(spec);
    return spec;
}

void validateAttentionKernelSpec(const AttentionKernelSpec &spec)
{
    describeAttentionKernel(spec); // reads, and so checks, every parameter
    if (const AttentionKernelKind &kind = attentionKernel(spec.kind); kind.check)
        kind.check(spec);
}

std::string describeAttentionKernel(const AttentionKernelSpec &spec)
{
    return Params(spec, kindOf(spec.kind).kind.c_str()).describe();
}

AttentionResult attention_kernel_forward(const AttentionKernelSpec &spec, ConstMatrixMap q, ConstMatrixMap k,
    ConstMatrixMap v, const AttentionOptions &options)
{
    (void)Params(spec, spec.kind.c_str()); // every parameter known to the kind
    return attentionKernel(spec.kind).forward(spec, q, k, v, options);
}

} // namespace atlas::attention
