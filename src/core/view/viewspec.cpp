#include "view/viewspec.h"

#include "attention/attentionkernel.h"
#include "engine/headablation.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "util/error.h"
#include "view/viewkinds.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <map>
#include <utility>

namespace atlas {
namespace {

using Json = nlohmann::json;

const std::vector<std::string> kKeys = {"view", "model", "text", "tokens", "padding", "layer", "head", "tensor",
    "scale", "colormap", "top_k", "position", "theme", "attention", "attention_params", "attention_layers",
    "approximation", "approximation_value", "op", "query", "veil_query", "temperature", "checkpoint_every",
    "ffn_chunks", "memory_scope", "cursor", "capacity_factor", "expert_top_k", "devices", "block_size", "positions",
    "depth", "hidden_heads", "key", "ablate_heads", "ablation", "thumbnail_size", "decoder_text", "decoder_tokens",
    "site", "objective", "seed"};
const std::vector<std::string> kScales = {"linear", "log"};
const std::vector<std::string> kColormaps = {"viridis", "magma", "cividis", "greys"};
const std::vector<std::string> kThemes = {"light", "dark"};

size_t editDistance(const std::string &a, const std::string &b)
{
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string joined(const std::vector<std::string> &words)
{
    std::string s;
    for (const std::string &w : words)
        s += (s.empty() ? "" : ", ") + w;
    return s;
}

// "did you mean 'layer'?" when a candidate is close enough to be a plausible typo, else the full list.
std::string suggestion(const std::string &word, const std::vector<std::string> &candidates)
{
    const std::string *best = nullptr;
    size_t bestDistance = SIZE_MAX;
    for (const std::string &c : candidates) {
        const size_t d = editDistance(word, c);
        if (d < bestDistance) {
            bestDistance = d;
            best = &c;
        }
    }
    const size_t tolerance = std::max<size_t>(2, std::max(word.size(), best->size()) / 2);
    if (bestDistance <= tolerance)
        return "did you mean '" + *best + "'?";
    return "expected one of: " + joined(candidates);
}

const char *typeName(const Json &value)
{
    if (value.is_number_integer())
        return "an integer";
    if (value.is_number())
        return "a number";
    if (value.is_string())
        return "a string";
    if (value.is_boolean())
        return "a boolean";
    if (value.is_null())
        return "null";
    if (value.is_array())
        return "an array";
    return "an object";
}

// Reads one member of the spec object; every failure names the source and the key.
class Reader
{
public:
    Reader(std::string source, std::string key)
        : m_source(std::move(source))
        , m_key(std::move(key))
    {
    }

    [[noreturn]] void fail(const std::string &reason) const
    {
        throw Error(m_source + ": key '" + m_key + "': " + reason);
    }

    std::string string(const Json &value) const
    {
        if (!value.is_string())
            fail(std::string("expected a string, got ") + typeName(value));
        return value.get<std::string>();
    }

    std::string oneOf(const Json &value, const std::vector<std::string> &allowed) const
    {
        std::string s = string(value);
        if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
            fail("unknown value '" + s + "' (" + suggestion(s, allowed) + ")");
        return s;
    }

    int integer(const Json &value, int minimum, const std::string &rule) const
    {
        if (!value.is_number_integer())
            fail(std::string("expected an integer, got ") + typeName(value));
        if (value.is_number_unsigned() ? value.get<uint64_t>() > uint64_t(INT_MAX)
                                       : value.get<int64_t>() < INT_MIN || value.get<int64_t>() > INT_MAX)
            fail("integer " + shownJson(value) + " is out of range");
        const int v = value.get<int>();
        if (v < minimum)
            fail("must be " + rule + ", got " + std::to_string(v));
        return v;
    }

    bool boolean(const Json &value) const
    {
        if (!value.is_boolean())
            fail(std::string("expected true or false, got ") + typeName(value));
        return value.get<bool>();
    }

    double positive(const Json &value, double maximum) const
    {
        if (!value.is_number())
            fail(std::string("expected a number, got ") + typeName(value));
        const double v = value.get<double>();
        if (!std::isfinite(v) || v <= 0 || v > maximum)
            fail("must be above 0 and at most " + Json(maximum).dump() + ", got " + shownJson(value));
        return v;
    }

    std::vector<std::string> strings(const Json &value) const
    {
        if (!value.is_array())
            fail(std::string("expected an array of strings, got ") + typeName(value));
        std::vector<std::string> out;
        for (const Json &e : value)
            out.push_back(string(e));
        return out;
    }

    // The kernel and its parameters must make a valid spec; the message names this key.
    void checkKernel(const std::string &kind, const std::vector<std::string> &params) const
    {
        try {
            attention::parseAttentionKernelSpec(kind, params);
        } catch (const Error &e) {
            fail(e.what());
        }
    }

    std::vector<int> integers(const Json &value) const
    {
        if (!value.is_array())
            fail(std::string("expected an array of integers, got ") + typeName(value));
        std::vector<int> out;
        for (size_t i = 0; i < value.size(); ++i) {
            const Json &e = value[i];
            if (!e.is_number_integer() || (!e.is_number_unsigned() && e.get<int64_t>() < 0)
                || (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT_MAX)))
                fail("element " + std::to_string(i) + " must be a non-negative integer, got " + shownJson(e));
            out.push_back(e.get<int>());
        }
        return out;
    }

private:
    std::string m_source;
    std::string m_key;
};

using Setter = std::function<void(ViewSpec &, const Reader &, const Json &)>;

const std::map<std::string, Setter> &setters()
{
    static const std::map<std::string, Setter> table = {
        {"view", [](ViewSpec &s, const Reader &r, const Json &v) { s.view = r.oneOf(v, ViewSpec::viewKinds()); }},
        {"model", [](ViewSpec &s, const Reader &r, const Json &v) { s.model = r.string(v); }},
        {"text", [](ViewSpec &s, const Reader &r, const Json &v) { s.text = r.string(v); }},
        {"tokens", [](ViewSpec &s, const Reader &r, const Json &v) { s.tokens = r.integers(v); }},
        {"padding", [](ViewSpec &s, const Reader &r, const Json &v) { s.padding = r.integers(v); }},
        {"decoder_text", [](ViewSpec &s, const Reader &r, const Json &v) { s.decoderText = r.string(v); }},
        {"decoder_tokens", [](ViewSpec &s, const Reader &r, const Json &v) { s.decoderTokens = r.integers(v); }},
        {"site",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.site = r.oneOf(v, {"self", "encoder", "cross"});
            }},
        {"layer", [](ViewSpec &s, const Reader &r, const Json &v) { s.layer = r.integer(v, 0, ">= 0"); }},
        {"head",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.head = r.integer(v, -1, ">= 0, or -1 for every head");
            }},
        {"tensor", [](ViewSpec &s, const Reader &r, const Json &v) { s.tensor = r.string(v); }},
        {"scale", [](ViewSpec &s, const Reader &r, const Json &v) { s.scale = r.oneOf(v, kScales); }},
        {"colormap", [](ViewSpec &s, const Reader &r, const Json &v) { s.colormap = r.oneOf(v, kColormaps); }},
        {"top_k", [](ViewSpec &s, const Reader &r, const Json &v) { s.topK = r.integer(v, 1, ">= 1"); }},
        {"position",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.position = r.integer(v, -1, ">= 0, or -1 for the last token");
            }},
        {"theme", [](ViewSpec &s, const Reader &r, const Json &v) { s.theme = r.oneOf(v, kThemes); }},
        {"attention",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.attention = r.oneOf(v, attention::attentionKernelKinds());
            }},
        {"attention_params", [](ViewSpec &s, const Reader &r, const Json &v) { s.attentionParams = r.strings(v); }},
        {"attention_layers", [](ViewSpec &s, const Reader &r, const Json &v) { s.attentionLayers = r.integers(v); }},
        {"hidden_heads", [](ViewSpec &s, const Reader &r, const Json &v) { s.hiddenHeads = r.integers(v); }},
        {"ablate_heads",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.ablateHeads = r.string(v);
                try { // the form here; whether each head exists, against the model that runs
                    parseHeadList(s.ablateHeads, 1 << 20, 1 << 20, "heads");
                } catch (const Error &e) {
                    r.fail(std::string(e.what()).substr(7)); // after "heads: "
                }
            }},
        {"thumbnail_size",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.thumbnailSize = r.integer(v, 0, ">= 0");
                if (s.thumbnailSize != 0
                    && (s.thumbnailSize < ViewSpec::kMinThumbnail || s.thumbnailSize > ViewSpec::kMaxThumbnail))
                    r.fail("0 (fit the view) or " + std::to_string(ViewSpec::kMinThumbnail) + " … "
                        + std::to_string(ViewSpec::kMaxThumbnail) + " pixels");
            }},
        {"ablation",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.ablation = r.oneOf(v, {"zero", "mean"});
            }},
        {"key",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.key = r.integer(v, -1, ">= 0, or -1 for the most weighted");
            }},
        {"approximation",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.approximation = r.oneOf(v, {"linformer", "performer"});
            }},
        {"approximation_value",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.approximationValue = r.integer(v, 0, ">= 1, or 0 for the middle of the sweep");
            }},
        {"op", [](ViewSpec &s, const Reader &r, const Json &v) { s.op = r.string(v); }},
        {"query",
            [](ViewSpec &s, const Reader &r, const Json &v) { s.query = r.integer(v, -1, ">= 0, or -1 for none"); }},
        {"veil_query", [](ViewSpec &s, const Reader &r, const Json &v) { s.veilQuery = r.boolean(v); }},
        {"temperature", [](ViewSpec &s, const Reader &r, const Json &v) { s.temperature = r.positive(v, 100.0); }},
        {"checkpoint_every",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.checkpointEvery = r.integer(v, 0, ">= 1, or 0 for the square root of the depth");
            }},
        {"ffn_chunks", [](ViewSpec &s, const Reader &r, const Json &v) { s.ffnChunks = r.integer(v, 1, ">= 1"); }},
        {"memory_scope",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.memoryScope = r.oneOf(v, {"all", "activations"});
            }},
        {"cursor",
            [](ViewSpec &s, const Reader &r, const Json &v) { s.cursor = r.integer(v, -1, ">= 0, or -1 for none"); }},
        {"depth",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.depth = r.integer(v, 0, ">= 0, or 0 for the model's own depth");
                if (s.depth > ViewSpec::kMaxDepth)
                    r.fail("at most " + std::to_string(ViewSpec::kMaxDepth) + " blocks (a sweep trains every depth)");
            }},
        {"capacity_factor",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.capacityFactor = v.is_number() && v.get<double>() == 0 ? 0.0 : r.positive(v, 1024.0);
            }},
        {"expert_top_k",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.expertTopK = r.integer(v, 0, ">= 1, or 0 for the model's own");
            }},
        {"devices", [](ViewSpec &s, const Reader &r, const Json &v) { s.devices = r.integer(v, 1, ">= 1"); }},
        {"block_size", [](ViewSpec &s, const Reader &r, const Json &v) { s.blockSize = r.integer(v, 1, ">= 1"); }},
        {"objective",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.objective = r.oneOf(v, {"", "next", "mlm", "span", "prefix", "nsp"});
            }},
        {"seed", [](ViewSpec &s, const Reader &r, const Json &v) { s.seed = r.integer(v, 0, ">= 0"); }},
        {"positions",
            [](ViewSpec &s, const Reader &r, const Json &v) {
                s.positions = r.oneOf(v, {"", "sinusoidal", "rope", "rope-half", "alibi", "none"});
            }},
    };
    return table;
}

} // namespace

std::vector<std::string> ViewSpec::viewKinds()
{
    std::vector<std::string> kinds;
    for (const ViewKind &k : atlas::viewKinds())
        kinds.push_back(k.kind);
    return kinds;
}

ViewSpec ViewSpec::fromJson(const std::string &json, const std::string &source)
{
    if (json.size() > limits::kSpecBytes)
        throw Error(source + ": a view spec is at most " + std::to_string(limits::kSpecBytes) + " bytes, this one has "
            + std::to_string(json.size()));
    const Json root = parseJson(json, source); // a number too large for a double names its key, too
    if (!root.is_object())
        throw Error(source + ": expected a JSON object with view-spec keys, got " + typeName(root));

    ViewSpec spec;
    for (const auto &[key, value] : root.items()) {
        const Reader reader(source, key);
        const auto it = setters().find(key);
        if (it == setters().end())
            reader.fail("unknown key (" + suggestion(key, kKeys) + ")");
        it->second(spec, reader, value);
    }
    Reader(source, "attention_params").checkKernel(spec.attention, spec.attentionParams);
    return spec;
}

std::string ViewSpec::toJson(bool changedOnly) const
{
    if (changedOnly) {
        const nlohmann::ordered_json all = nlohmann::ordered_json::parse(toJson()),
                                     defaults = nlohmann::ordered_json::parse(ViewSpec().toJson());
        nlohmann::ordered_json j;
        for (const auto &[key, value] : all.items())
            if (key == "view" || key == "model" || value != defaults[key])
                j[key] = value;
        return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    }
    nlohmann::ordered_json j;
    j["view"] = view;
    j["model"] = model;
    j["text"] = text;
    j["tokens"] = tokens;
    j["padding"] = padding;
    j["decoder_text"] = decoderText;
    j["decoder_tokens"] = decoderTokens;
    j["site"] = site;
    j["layer"] = layer;
    j["head"] = head;
    j["tensor"] = tensor;
    j["scale"] = scale;
    j["colormap"] = colormap;
    j["top_k"] = topK;
    j["position"] = position;
    j["theme"] = theme;
    j["attention"] = attention;
    j["attention_params"] = attentionParams;
    j["attention_layers"] = attentionLayers;
    j["hidden_heads"] = hiddenHeads;
    j["thumbnail_size"] = thumbnailSize;
    j["key"] = key;
    j["ablate_heads"] = ablateHeads;
    j["ablation"] = ablation;
    j["approximation"] = approximation;
    j["approximation_value"] = approximationValue;
    j["op"] = op;
    j["query"] = query;
    j["veil_query"] = veilQuery;
    j["temperature"] = temperature;
    j["checkpoint_every"] = checkpointEvery;
    j["ffn_chunks"] = ffnChunks;
    j["memory_scope"] = memoryScope;
    j["cursor"] = cursor;
    j["depth"] = depth;
    j["capacity_factor"] = capacityFactor;
    j["expert_top_k"] = expertTopK;
    j["devices"] = devices;
    j["block_size"] = blockSize;
    j["positions"] = positions;
    j["objective"] = objective;
    j["seed"] = seed;
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace atlas
