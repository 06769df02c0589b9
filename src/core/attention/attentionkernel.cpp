#include "attention/attentionkernel.h"

#include "attention/fullattention.h"
#include "util/error.h"

#include <algorithm>
#include <charconv>
#include <climits>

namespace atlas::attention {

namespace {

struct KindKeys
{
    std::string kind;
    std::vector<std::string> keys;
};

const std::vector<KindKeys> &kindKeys()
{
    static const std::vector<KindKeys> table = {
        {"full", {}},
        {"lsh", {"rounds", "buckets", "chunk", "seed"}},
        {"bigbird", {"block", "window_blocks", "global_blocks", "random_blocks", "seed"}},
        {"longformer", {"window", "dilation", "global"}},
        {"strided", {"stride"}},
        {"fixed", {"stride", "summary"}},
        {"linformer", {"k", "seed", "projection"}},
        {"performer", {"features", "seed"}},
    };
    return table;
}

std::string joined(const std::vector<std::string> &items)
{
    std::string out;
    for (const std::string &s : items) {
        if (!out.empty())
            out += ", ";
        out += s;
    }
    return out;
}

const KindKeys &kindOf(const AttentionKernelSpec &spec)
{
    for (const KindKeys &k : kindKeys())
        if (k.kind == spec.kind)
            return k;
    throw Error("unknown attention kernel '" + spec.kind + "' (known: " + joined(attentionKernelKinds()) + ")");
}

// Reads one spec's values, each error naming the kind and the key.
class ParamReader
{
public:
    ParamReader(const AttentionKernelSpec &spec, const char *kind)
        : m_spec(spec)
    {
        if (spec.kind != kind)
            throw Error(std::string("attention kernel '") + spec.kind + "' is not '" + kind + "'");
        const KindKeys &known = kindOf(spec);
        for (const auto &[key, value] : spec.params)
            if (std::find(known.keys.begin(), known.keys.end(), key) == known.keys.end())
                throw Error("attention kernel '" + spec.kind + "': unknown parameter '" + key
                    + "' (known: " + (known.keys.empty() ? std::string("none") : joined(known.keys)) + ")");
    }

    [[noreturn]] void fail(const std::string &key, const std::string &what) const
    {
        throw Error("attention kernel '" + m_spec.kind + "': parameter '" + key + "' " + what);
    }

    int integer(const std::string &key, int fallback, int min) const
    {
        auto it = m_spec.params.find(key);
        if (it == m_spec.params.end())
            return fallback;
        const int value = parse<int>(key, it->second);
        if (value < min)
            fail(key, "must be at least " + std::to_string(min) + ", got " + it->second);
        return value;
    }

    uint64_t seed() const
    {
        auto it = m_spec.params.find("seed");
        return it == m_spec.params.end() ? 0 : parse<uint64_t>("seed", it->second);
    }

    std::vector<int> list(const std::string &key) const
    {
        std::vector<int> out;
        auto it = m_spec.params.find(key);
        if (it == m_spec.params.end())
            return out;
        for (size_t begin = 0; begin <= it->second.size();) {
            const size_t comma = std::min(it->second.find(',', begin), it->second.size());
            out.push_back(parse<int>(key, it->second.substr(begin, comma - begin)));
            if (out.back() < 0)
                fail(key, "holds the negative position " + std::to_string(out.back()));
            begin = comma + 1;
        }
        return out;
    }

    std::string text(const std::string &key, const std::string &fallback) const
    {
        auto it = m_spec.params.find(key);
        return it == m_spec.params.end() ? fallback : it->second;
    }

private:
    template <typename T> T parse(const std::string &key, const std::string &text) const
    {
        T value {};
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
            fail(key, "must be a non-negative integer, got '" + text + "'");
        return value;
    }

    const AttentionKernelSpec &m_spec;
};

} // namespace

const std::vector<std::string> &attentionKernelKinds()
{
    static const std::vector<std::string> kinds = [] {
        std::vector<std::string> out;
        for (const KindKeys &k : kindKeys())
            out.push_back(k.kind);
        return out;
    }();
    return kinds;
}

LshParams lshParams(const AttentionKernelSpec &spec)
{
    const ParamReader r(spec, "lsh");
    LshParams p;
    p.rounds = r.integer("rounds", p.rounds, 1);
    p.buckets = r.integer("buckets", p.buckets, 1);
    if (p.buckets != 1 && p.buckets % 2 != 0)
        r.fail(
            "buckets", "must be 1 or even (angular LSH hashes to ±b/2 directions), got " + std::to_string(p.buckets));
    p.chunk = r.integer("chunk", p.chunk, 1);
    p.seed = r.seed();
    return p;
}

BigBirdParams bigBirdParams(const AttentionKernelSpec &spec)
{
    const ParamReader r(spec, "bigbird");
    BigBirdParams p;
    p.block = r.integer("block", p.block, 1);
    p.windowBlocks = r.integer("window_blocks", p.windowBlocks, 1);
    if (p.windowBlocks % 2 == 0)
        r.fail("window_blocks",
            "must be odd (the own block and as many on each side), got " + std::to_string(p.windowBlocks));
    p.globalBlocks = r.integer("global_blocks", p.globalBlocks, 0);
    p.randomBlocks = r.integer("random_blocks", p.randomBlocks, 0);
    p.seed = r.seed();
    return p;
}

LongformerParams longformerParams(const AttentionKernelSpec &spec)
{
    const ParamReader r(spec, "longformer");
    LongformerParams p;
    p.window = r.integer("window", p.window, 0);
    p.dilation = r.integer("dilation", p.dilation, 1);
    p.global = r.list("global");
    return p;
}

StridedParams stridedParams(const AttentionKernelSpec &spec)
{
    const ParamReader r(spec, "strided");
    StridedParams p;
    p.stride = r.integer("stride", p.stride, 1);
    return p;
}

FixedParams fixedParams(const AttentionKernelSpec &spec)
{
    const ParamReader r(spec, "fixed");
    FixedParams p;
    p.stride = r.integer("stride", p.stride, 1);
    p.summary = r.integer("summary", p.summary, 0);
    if (p.summary > p.stride)
        r.fail(
            "summary", "must not exceed stride (" + std::to_string(p.stride) + "), got " + std::to_string(p.summary));
    return p;
}

LinformerParams linformerParams(const AttentionKernelSpec &spec)
{
    const ParamReader r(spec, "linformer");
    LinformerParams p;
    p.k = r.integer("k", p.k, 1);
    p.seed = r.seed();
    const std::string projection = r.text("projection", "random");
    if (projection != "random" && projection != "identity")
        r.fail("projection", "must be 'random' or 'identity', got '" + projection + "'");
    p.identity = projection == "identity";
    return p;
}

PerformerParams performerParams(const AttentionKernelSpec &spec)
{
    const ParamReader r(spec, "performer");
    PerformerParams p;
    p.features = r.integer("features", p.features, 1);
    p.seed = r.seed();
    return p;
}

AttentionKernelSpec parseAttentionKernelSpec(const std::string &kind, const std::vector<std::string> &keyValues)
{
    AttentionKernelSpec spec {kind, {}};
    kindOf(spec);
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
}

std::string describeAttentionKernel(const AttentionKernelSpec &spec)
{
    const std::string &kind = kindOf(spec).kind;
    const auto seed = [](uint64_t s) { return ", seed=" + std::to_string(s); };
    const auto n = [](int v) { return std::to_string(v); };
    if (kind == "full") {
        (void)ParamReader(spec, "full");
        return kind;
    }
    if (kind == "lsh") {
        const LshParams p = lshParams(spec);
        return kind + " (rounds=" + n(p.rounds) + ", buckets=" + n(p.buckets) + ", chunk=" + n(p.chunk) + seed(p.seed)
            + ")";
    }
    if (kind == "bigbird") {
        const BigBirdParams p = bigBirdParams(spec);
        return kind + " (block=" + n(p.block) + ", window_blocks=" + n(p.windowBlocks)
            + ", global_blocks=" + n(p.globalBlocks) + ", random_blocks=" + n(p.randomBlocks) + seed(p.seed) + ")";
    }
    if (kind == "longformer") {
        const LongformerParams p = longformerParams(spec);
        std::string globals;
        for (int g : p.global) {
            if (!globals.empty())
                globals += ',';
            globals += n(g);
        }
        return kind + " (window=" + n(p.window) + ", dilation=" + n(p.dilation) + ", global=" + globals + ")";
    }
    if (kind == "strided")
        return kind + " (stride=" + n(stridedParams(spec).stride) + ")";
    if (kind == "fixed") {
        const FixedParams p = fixedParams(spec);
        return kind + " (stride=" + n(p.stride) + ", summary=" + n(p.summary) + ")";
    }
    if (kind == "linformer") {
        const LinformerParams p = linformerParams(spec);
        return kind + " (k=" + n(p.k) + seed(p.seed) + ", projection=" + (p.identity ? "identity" : "random") + ")";
    }
    const PerformerParams p = performerParams(spec);
    return kind + " (features=" + n(p.features) + seed(p.seed) + ")";
}

AttentionResult attention_kernel_forward(const AttentionKernelSpec &spec, ConstMatrixMap q, ConstMatrixMap k,
    ConstMatrixMap v, const AttentionOptions &options)
{
    const std::string &kind = kindOf(spec).kind;
    if (kind == "full") {
        (void)ParamReader(spec, "full");
        return full_attention_forward(q, k, v, options);
    }
    if (kind == "lsh")
        return lsh_attention_forward(q, k, v, lshParams(spec), options);
    if (kind == "bigbird")
        return bigbird_attention_forward(q, k, v, bigBirdParams(spec), options);
    if (kind == "longformer")
        return longformer_attention_forward(q, k, v, longformerParams(spec), options);
    if (kind == "strided")
        return strided_attention_forward(q, k, v, stridedParams(spec), options);
    if (kind == "fixed")
        return fixed_attention_forward(q, k, v, fixedParams(spec), options);
    if (kind == "linformer")
        return linformer_attention_forward(q, k, v, linformerParams(spec), options);
    return performer_attention_forward(q, k, v, performerParams(spec), options);
}

} // namespace atlas::attention
