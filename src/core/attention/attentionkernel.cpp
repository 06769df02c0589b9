#include "attention/attentionkernel.h"

#include "attention/fullattention.h"
#include "util/error.h"

#include <algorithm>
#include <charconv>
#include <climits>

namespace atlas::attention {

namespace {

// How a parameter is written: an integer with a default and a minimum, a seed, a list of positions, or one of
// a few words.
enum class ParamType { Integer, Seed, Positions, Choice };

struct ParamInfo
{
    std::string key;
    ParamType type = ParamType::Integer;
    int fallback = 0; // Integer: the default
    int minimum = 0; // Integer: the smallest value allowed
    std::vector<std::string> choices = {}; // Choice: the words, the first is the default
};

struct KindInfo
{
    std::string kind;
    std::vector<ParamInfo> params; // in the order describeAttentionKernel lists them
};

// Every kind, its parameters, their defaults (the parameter structs' own) and ranges. Rules that tie two
// parameters together (buckets even, window_blocks odd, summary <= stride) are the kernels' check functions.
const std::vector<KindInfo> &kinds()
{
    static const LshParams lsh;
    static const BigBirdParams bigbird;
    static const LongformerParams longformer;
    static const StridedParams strided;
    static const FixedParams fixed;
    static const LinformerParams linformer;
    static const PerformerParams performer;
    const ParamInfo seed {"seed", ParamType::Seed};
    static const std::vector<KindInfo> table = {
        {"full", {}},
        {"lsh",
            {{"rounds", ParamType::Integer, lsh.rounds, 1}, {"buckets", ParamType::Integer, lsh.buckets, 1},
                {"chunk", ParamType::Integer, lsh.chunk, 1}, seed}},
        {"bigbird",
            {{"block", ParamType::Integer, bigbird.block, 1},
                {"window_blocks", ParamType::Integer, bigbird.windowBlocks, 0},
                {"global_blocks", ParamType::Integer, bigbird.globalBlocks, 0},
                {"random_blocks", ParamType::Integer, bigbird.randomBlocks, 0}, seed}},
        {"longformer",
            {{"window", ParamType::Integer, longformer.window, 0},
                {"dilation", ParamType::Integer, longformer.dilation, 1}, {"global", ParamType::Positions}}},
        {"strided", {{"stride", ParamType::Integer, strided.stride, 1}}},
        {"fixed", {{"stride", ParamType::Integer, fixed.stride, 1}, {"summary", ParamType::Integer, fixed.summary, 0}}},
        {"linformer",
            {{"k", ParamType::Integer, linformer.k, 1}, seed,
                {"projection", ParamType::Choice, 0, 0, {"random", "identity"}}}},
        {"performer", {{"features", ParamType::Integer, performer.features, 1}, seed}},
    };
    return table;
}

std::string joined(const std::vector<std::string> &items, const char *separator = ", ")
{
    std::string out;
    for (const std::string &s : items)
        out += (out.empty() ? "" : separator) + s;
    return out;
}

const KindInfo &kindOf(const std::string &kind)
{
    for (const KindInfo &k : kinds())
        if (k.kind == kind)
            return k;
    throw Error("unknown attention kernel '" + kind + "' (known: " + joined(attentionKernelKinds()) + ")");
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
    const KindInfo &m_info;
};

// Runs a kernel's own check, naming the kernel (its messages already name the parameter).
template <class P, class Check> P checked(P params, Check check)
{
    check(params);
    return params;
}

} // namespace

const std::vector<std::string> &attentionKernelKinds()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const KindInfo &k : kinds())
            out.push_back(k.kind);
        return out;
    }();
    return names;
}

std::string timeComplexity(const std::string &kind)
{
    const std::string &known = kindOf(kind).kind;
    if (known == "full")
        return "O(N²)";
    if (known == "lsh")
        return "O(N log N)";
    if (known == "strided" || known == "fixed")
        return "O(N√N)";
    return "O(N)";
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
    const std::string &kind = kindOf(spec.kind).kind;
    if (kind == "lsh")
        lshParams(spec);
    else if (kind == "bigbird")
        bigBirdParams(spec);
    else if (kind == "strided")
        stridedParams(spec);
    else if (kind == "fixed")
        fixedParams(spec);
    describeAttentionKernel(spec); // reads, and so checks, every parameter of every kind
}

std::string describeAttentionKernel(const AttentionKernelSpec &spec)
{
    return Params(spec, kindOf(spec.kind).kind.c_str()).describe();
}

AttentionResult attention_kernel_forward(const AttentionKernelSpec &spec, ConstMatrixMap q, ConstMatrixMap k,
    ConstMatrixMap v, const AttentionOptions &options)
{
    const std::string &kind = kindOf(spec.kind).kind;
    if (kind == "full") {
        (void)Params(spec, "full");
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
