#include "model/configjson.h"

#include "io/jsonread.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

// RoPE's settings: read from config.json (rope_scaling, transformers 5's rope_parameters, LongRoPE's factors), and
// turned into each layer's angles (ModelConfig::ropeFrequencies, ropeAmplitude).
namespace atlas {

namespace configjson {

namespace {

// LongRoPE's rope_scaling `s` (Phi-3's "longrope", "su" before transformers 4.42), as _compute_longrope_parameters
// reads it: the original context L is the config's own original_max_position_embeddings where it has one (Phi3Config
// always does, 4096 by default) and the stretch s = max_position_embeddings / L; else L = max_position_embeddings and
// s = rope_scaling.factor. The attention factor is rope_scaling.attention_factor, else √(1 + ln s / ln L) (1 for
// s ≤ 1). `positions`: max_position_embeddings as read.
RopeScaling readLongRope(
    const json &j, const json &s, const JsonPlace &place, const std::string &modelType, int positions)
{
    RopeScaling r;
    r.kind = RopeScaling::Kind::LongRope;
    const auto factors = [&](const char *key) {
        const JsonPlace at = place.at(key);
        const json &list = jsonMember(s, key, place);
        if (!list.is_array() || list.empty() || list.size() > 65536)
            at.fail("must be a list of one positive factor per rotated pair, is " + shownJson(list));
        std::vector<double> out;
        for (size_t i = 0; i < list.size(); ++i)
            out.push_back(jsonNumber(list[i], at.at(i), 1e-6, 1e6));
        return out;
    };
    r.shortFactors = factors("short_factor");
    r.longFactors = factors("long_factor");
    constexpr IntKey original {"original_max_position_embeddings", 1, 1 << 24};
    const bool ownOriginal = j.contains(original.key) || modelType == "phi3";
    double stretch = 1.0;
    if (ownOriginal) {
        r.originalContext = readInt(j, original, 4096, place.source);
        stretch = double(positions) / r.originalContext;
    } else {
        r.originalContext = positions;
        stretch = jsonNumber(s, "factor", 1.0, 1024.0, place.source + ": key '" + place.key + "'");
    }
    r.factor = stretch;
    r.attentionFactor = optionalJsonMember(s, "attention_factor")
        ? jsonNumber(s["attention_factor"], place.at("attention_factor"), 1e-3, 1e3)
        : stretch <= 1.0 ? 1.0
                         : std::sqrt(1.0 + std::log(stretch) / std::log(double(r.originalContext)));
    return r;
}

// YaRN's rope_scaling (_compute_yarn_parameters as of gpt-oss's release, transformers 4.55): factor s; beta_fast and
// beta_slow (32 and 1 when absent or 0); the original context L from original_max_position_embeddings, else
// max_position_embeddings (`positions`); attention_factor, else 0.1 ln s + 1; truncate (true when absent). DeepSeek's
// mscale keys are refused by name.
RopeScaling readYarn(const json &s, const JsonPlace &place, int positions)
{
    RopeScaling r;
    r.kind = RopeScaling::Kind::Yarn;
    const std::string where = place.source + ": key '" + place.key + "'";
    for (const char *key : {"mscale", "mscale_all_dim"})
        if (optionalJsonMember(s, key))
            place.at(key).fail("is not read (DeepSeek's YaRN); this app reads factor, beta_fast, beta_slow, "
                               "attention_factor, original_max_position_embeddings and truncate");
    r.factor = jsonNumber(s, "factor", 1.0, 1024.0, where);
    const auto beta = [&](const char *key, double fallback) {
        const json *v = optionalJsonMember(s, key);
        const double b = v ? jsonNumber(*v, place.at(key), 0.0, 1e6) : 0.0;
        return b > 0 ? b : fallback; // `or 32`, `or 1`: a 0 takes the default too
    };
    r.betaFast = beta("beta_fast", 32.0);
    r.betaSlow = beta("beta_slow", 1.0);
    if (const json *original = optionalJsonMember(s, "original_max_position_embeddings"))
        r.originalContext = int(jsonInteger(*original, place.at("original_max_position_embeddings"), 1, 1 << 24));
    else if (positions > 0)
        r.originalContext = positions;
    else
        place.fail("needs original_max_position_embeddings for YaRN");
    r.attentionFactor = optionalJsonMember(s, "attention_factor")
        ? jsonNumber(s["attention_factor"], place.at("attention_factor"), 1e-3, 1e3)
        : r.factor <= 1.0 ? 1.0
                          : 0.1 * std::log(r.factor) + 1.0;
    r.truncate = jsonBool(s, "truncate", place, true);
    return r;
}

} // namespace

// `j`'s rope_scaling, named in messages as `key` (rope_parameters, when withRopeParametersRead moved it there).
// `positions`: max_position_embeddings as read, which LongRoPE's stretch reads.
RopeScaling readRopeScaling(
    const json &j, const std::string &source, const std::string &key, const std::string &modelType, int positions)
{
    RopeScaling r;
    if (!j.contains("rope_scaling") || j["rope_scaling"].is_null())
        return r;
    const json &s = j["rope_scaling"];
    const std::string where = source + ": key '" + key + "'";
    if (!s.is_object())
        throw Error(where + " must be an object or null, is " + shownJson(s));
    // Hugging Face wrote "type" before 4.43 and "rope_type" since.
    const char *typeKey = s.contains("rope_type") ? "rope_type" : "type";
    const std::string type = readString(s, typeKey, "", where);
    if (type == "default" || type.empty())
        return r;
    if ((type == "longrope" || type == "su") && positions > 0)
        return readLongRope(j, s, JsonPlace {source, key}, modelType, positions);
    if (type == "yarn")
        return readYarn(s, JsonPlace {source, key}, positions);
    if (type == "frequency_factors") {
        const JsonPlace at = JsonPlace {source, key}.at("factors");
        const json &list = jsonMember(s, "factors", JsonPlace {source, key});
        if (!list.is_array() || list.empty() || list.size() > 65536)
            at.fail("must be a list of one positive factor per rotated pair, is " + shownJson(list));
        r.kind = RopeScaling::Kind::Factors;
        for (size_t i = 0; i < list.size(); ++i)
            r.frequencyFactors.push_back(jsonNumber(list[i], at.at(i), 1e-6, 1e6));
        return r;
    }
    if (type != "linear" && type != "llama3")
        throw Error(where + ": rope_type '" + type + "' is not supported (supported: linear, llama3"
            + (positions > 0 ? ", longrope" : "") + " and yarn; dynamic and others are not)");
    r.kind = type == "linear" ? RopeScaling::Kind::Linear : RopeScaling::Kind::Llama3;
    r.factor = jsonNumber(s, "factor", 1.0, 1024.0, where);
    if (r.kind == RopeScaling::Kind::Llama3) {
        r.lowFreqFactor = jsonNumber(s, "low_freq_factor", 1e-3, 1e3, where);
        r.highFreqFactor = jsonNumber(s, "high_freq_factor", 1e-3, 1e3, where);
        r.originalContext = int(jsonInteger(s, "original_max_position_embeddings", 1, 1 << 24, where));
        if (!(r.highFreqFactor > r.lowFreqFactor))
            throw Error(where + ": high_freq_factor must exceed low_freq_factor");
    }
    return r;
}

// transformers 5 writes RoPE's settings as one object, rope_parameters: {"rope_type", "rope_theta", "factor" …}, or
// one per kind of layer ({"full_attention": {…}, "sliding_attention": {…}}: Gemma 3). The readers below take the keys
// it replaced (rope_theta, rope_scaling, rope_local_base_freq): a config with rope_parameters and no rope_theta is read
// as if it had written those. `scalingKey` is where the scaling was written, for messages.
json withRopeParametersRead(const json &j, const std::string &source, std::string &scalingKey)
{
    scalingKey = "rope_scaling";
    const json *parameters = optionalJsonMember(j, "rope_parameters");
    if (!parameters || j.contains("rope_theta"))
        return j;
    const JsonPlace place {source, "rope_parameters"};
    if (!parameters->is_object())
        place.fail("must be an object, is " + shownJson(*parameters));
    const auto theta = [](const json &p, const JsonPlace &at) {
        if (!p.is_object() || !p.contains("rope_theta"))
            at.fail("must hold rope_theta, is " + shownJson(p));
        return p["rope_theta"];
    };
    json out = j;
    out.erase("rope_parameters");
    const bool perKind = parameters->contains("full_attention");
    const json &global = perKind ? (*parameters)["full_attention"] : *parameters;
    const JsonPlace globalPlace = perKind ? place.at("full_attention") : place;
    out["rope_theta"] = theta(global, globalPlace);
    out["rope_scaling"] = global;
    scalingKey = globalPlace.key;
    if (const json *local = perKind ? optionalJsonMember(*parameters, "sliding_attention") : nullptr) {
        const JsonPlace localPlace = place.at("sliding_attention");
        out["rope_local_base_freq"] = theta(*local, localPlace);
        const std::string kind = jsonString(*local, "rope_type", localPlace, "default");
        if (kind != "default") // Gemma 3 turns its local layers unscaled
            localPlace.fail("has rope_type '" + kind + "': the local layers' RoPE is read unscaled only");
    }
    return out;
}

} // namespace configjson

namespace {

// YaRN's blend, in float32 as _compute_yarn_parameters: pair j keeps θ_j where the ramp is 0 (fast pairs, which turn
// more than β_fast times over the original context), takes θ_j / s where it is 1 (slow pairs), and mixes linearly
// between the two correction dimensions.
void yarnFrequencies(std::vector<double> &theta, const RopeScaling &r, float base, int64_t d)
{
    const double pi = 3.14159265358979323846;
    const auto correction = [&](double rotations) { // the dimension that turns `rotations` times over the context
        return double(d) * std::log(r.originalContext / (rotations * 2 * pi)) / (2 * std::log(double(base)));
    };
    double low = correction(r.betaFast), high = correction(r.betaSlow);
    if (r.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, double(d - 1));
    if (low == high)
        high += 0.001; // as Hugging Face, against a zero-width ramp
    const float factor = float(r.factor);
    for (size_t j = 0; j < theta.size(); ++j) {
        const float turn = std::pow(base, float(2 * j) / float(d));
        const float ramp = std::clamp((float(j) - float(low)) / float(high - low), 0.0f, 1.0f);
        const float kept = 1.0f - ramp; // inv_freq_extrapolation_factor
        theta[j] = double((1.0f / (factor * turn)) * (1.0f - kept) + (1.0f / turn) * kept);
    }
}

} // namespace

std::vector<double> ModelConfig::ropeFrequencies(int layer, int64_t positions) const
{
    const int64_t d = rotatedDims(); // the width that turns
    const bool local = ropeLocalBase > 0 && layer >= 0 && windowed(layer);
    const float base = local ? ropeLocalBase : ropeBase;
    const RopeScaling &r = ropeScaling;
    // LongRoPE's per-pair factors, as _compute_longrope_parameters: 1 / (λ_j · base^(2j/d)) in float32
    const std::vector<double> *stretch = r.kind != RopeScaling::Kind::LongRope ? nullptr
        : positions > r.originalContext                                        ? &r.longFactors
                                                                               : &r.shortFactors;
    std::vector<double> theta;
    for (int64_t j = 0; j < d / 2; ++j) {
        // As Hugging Face computes them: 1 / base^(2j/d) in float32.
        const float turn = std::pow(base, float(2 * j) / float(d));
        const double f = double(1.0f / (stretch ? float((*stretch)[size_t(j)]) * turn : turn));
        theta.push_back(family == Family::Gpt2 ? std::pow(double(base), -2.0 * double(j) / double(d)) : f);
    }
    if (local)
        return theta;
    if (r.kind == RopeScaling::Kind::Linear)
        for (double &f : theta)
            f /= r.factor;
    if (r.kind == RopeScaling::Kind::Factors)
        for (size_t j = 0; j < theta.size(); ++j)
            theta[j] /= r.frequencyFactors[j];
    if (r.kind == RopeScaling::Kind::Yarn)
        yarnFrequencies(theta, r, base, d);
    if (r.kind == RopeScaling::Kind::Llama3) {
        const double pi = 3.14159265358979323846;
        const double lowWavelength = r.originalContext / r.lowFreqFactor,
                     highWavelength = r.originalContext / r.highFreqFactor;
        for (double &f : theta) {
            const double wavelength = 2 * pi / f;
            if (wavelength > lowWavelength) {
                f /= r.factor;
            } else if (wavelength >= highWavelength) {
                const double smooth
                    = (r.originalContext / wavelength - r.lowFreqFactor) / (r.highFreqFactor - r.lowFreqFactor);
                f = (1 - smooth) * f / r.factor + smooth * f;
            }
        }
    }
    return theta;
}

double ModelConfig::ropeAmplitude(int layer) const
{
    const bool local = ropeLocalBase > 0 && layer >= 0 && windowed(layer);
    const bool scaled = ropeScaling.kind == RopeScaling::Kind::LongRope || ropeScaling.kind == RopeScaling::Kind::Yarn;
    return scaled && !local ? ropeScaling.attentionFactor : 1.0;
}

} // namespace atlas
