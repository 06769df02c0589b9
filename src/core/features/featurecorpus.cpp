#include "features/featurecorpus.h"

#include "io/atomicfile.h"
#include "io/resourcepaths.h"
#include "io/safetensors.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"
#include "util/keptvalue.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace atlas {

namespace fs = std::filesystem;

namespace {

constexpr const char *kFormat = "atlas feature corpus 1";

uint64_t fnv1a(std::string_view bytes, uint64_t hash = 14695981039346656037ull)
{
    for (const unsigned char c : bytes)
        hash = (hash ^ c) * 1099511628211ull;
    return hash;
}

std::string hex(uint64_t value)
{
    char text[17];
    std::snprintf(text, sizeof text, "%016" PRIx64, value);
    return text;
}

// What the model was read from: its directory's config and weights (or its GGUF file), with their sizes and times;
// "" for a model made in memory.
std::string modelFiles(const Model &model)
{
    if (model.directory.empty())
        return {};
    std::error_code error;
    const fs::path root(model.directory);
    if (!fs::is_directory(root, error))
        return root.string() + "=" + fileStamp(root.string());
    std::vector<std::string> files;
    for (const fs::directory_entry &entry : fs::directory_iterator(root, error)) {
        const fs::path p = entry.path();
        if (p.filename() == "config.json" || p.extension() == ".safetensors" || p.extension() == ".json")
            files.push_back(p.filename().string() + "=" + fileStamp(p.string()));
    }
    std::sort(files.begin(), files.end());
    std::string text = fs::absolute(root, error).string();
    for (const std::string &f : files)
        text += ";" + f;
    return text;
}

Tensor tensorOf(const std::vector<float> &values, Shape shape)
{
    Tensor t = Tensor::uninitialized(std::move(shape));
    std::copy(values.begin(), values.end(), t.data());
    return t;
}

template <typename T> Tensor tensorFrom(const std::vector<T> &values, Shape shape)
{
    Tensor t = Tensor::uninitialized(std::move(shape));
    std::transform(values.begin(), values.end(), t.data(), [](T v) { return float(v); });
    return t;
}

} // namespace

void writeFeatureCorpusFile(const std::string &path, const std::string &key, const FeatureCorpusStats &s)
{
    const int64_t F = s.features, K = s.top, C = s.contextSize();
    const Tensor tokens = tensorFrom(s.tokens, {int64_t(s.tokens.size())});
    const Tensor topActivation = tensorOf(s.topActivation, {F, K});
    const Tensor topToken = tensorFrom(s.topToken, {F, K});
    const Tensor context = tensorOf(s.context, {F, K, C});
    const Tensor active = tensorFrom(s.activeCount, {F});
    const Tensor histogram = tensorOf(s.histogram, {F, FeatureCorpusStats::kBins});
    std::error_code error;
    fs::create_directories(fs::path(path).parent_path(), error);
    writeSafetensors(path,
        {{"tokens", &tokens}, {"top_activation", &topActivation}, {"top_token", &topToken}, {"context", &context},
            {"active_count", &active}, {"histogram", &histogram}},
        {{"format", kFormat}, {"key", key}, {"window", std::to_string(s.window)}, {"before", std::to_string(s.before)},
            {"after", std::to_string(s.after)}, {"seconds", std::to_string(s.seconds)}});
}

std::optional<FeatureCorpusStats> readFeatureCorpusFile(const std::string &path, const std::string &key)
{
    std::error_code error;
    if (!fs::is_regular_file(path, error))
        return std::nullopt;
    try {
        const SafetensorsFile file(path);
        const auto &meta = file.metadata();
        const auto value = [&](const char *name) {
            const auto it = meta.find(name);
            if (it == meta.end())
                throw Error(std::string("no ") + name);
            return it->second;
        };
        if (value("format") != kFormat || value("key") != key)
            return std::nullopt;
        FeatureCorpusStats s;
        s.window = std::stoi(value("window"));
        s.before = std::stoi(value("before"));
        s.after = std::stoi(value("after"));
        s.seconds = std::stod(value("seconds"));
        const Tensor top = file.tensor("top_activation"), where = file.tensor("top_token");
        const Tensor context = file.tensor("context"), active = file.tensor("active_count");
        const Tensor histogram = file.tensor("histogram"), tokens = file.tensor("tokens");
        if (top.rank() != 2 || where.shape() != top.shape() || s.before < 0 || s.after < 0 || s.before > 1000
            || s.after > 1000 || s.window < 1)
            return std::nullopt;
        s.features = top.dim(0);
        s.top = int(top.dim(1));
        if (context.shape() != Shape {s.features, s.top, s.contextSize()} || active.shape() != Shape {s.features}
            || histogram.shape() != Shape {s.features, FeatureCorpusStats::kBins} || tokens.rank() != 1)
            return std::nullopt;
        // Counts and indices were written as whole numbers below 2^24; anything else (NaN, a fraction, a huge value
        // in a file someone edited) is not converted: the pass runs again.
        const int64_t N = tokens.numel();
        const auto whole = [](const Tensor &t, double low, double high) {
            return std::all_of(
                t.data(), t.data() + t.numel(), [&](float v) { return v >= low && v <= high && std::floor(v) == v; });
        };
        if (!whole(tokens, 0, double(1 << 24)) || !whole(where, -1, double(N - 1)) || !whole(active, 0, double(N))
            || !whole(histogram, 0, double(N)))
            return std::nullopt;
        s.tokens.assign(tokens.data(), tokens.data() + N);
        s.topActivation.assign(top.data(), top.data() + top.numel());
        s.topToken.assign(where.data(), where.data() + where.numel());
        s.context.assign(context.data(), context.data() + context.numel());
        s.activeCount.assign(active.data(), active.data() + active.numel());
        s.histogram.assign(histogram.data(), histogram.data() + histogram.numel());
        return s;
    } catch (const std::exception &) { // not a file this program wrote, or one cut short: run the pass again
        return std::nullopt;
    }
}

int pruneFeatureCorpusCache(const std::string &directory, uint64_t limitBytes, const std::string &keep)
{
    struct Pass
    {
        fs::path path;
        uint64_t bytes = 0;
        fs::file_time_type used;
    };
    const auto ours = [](const fs::path &path) {
        const std::string stem = path.stem().string();
        std::error_code error;
        if (path.extension() != ".safetensors" || stem.size() != 16
            || stem.find_first_not_of("0123456789abcdef") != std::string::npos
            || !fs::is_regular_file(fs::symlink_status(path, error)))
            return false;
        try {
            const auto meta = SafetensorsFile(path.string()).metadata();
            const auto format = meta.find("format");
            return format != meta.end() && format->second == kFormat;
        } catch (const std::exception &) { // not a file of this program's
            return false;
        }
    };
    std::vector<Pass> passes;
    uint64_t total = 0;
    std::error_code listing;
    for (fs::directory_iterator it(directory, listing), end; !listing && it != end; it.increment(listing)) {
        if (!ours(it->path()))
            continue;
        std::error_code size, time, same;
        Pass p {it->path(), fs::file_size(it->path(), size), fs::last_write_time(it->path(), time)};
        if (size || time)
            continue;
        total += p.bytes;
        if (!fs::equivalent(p.path, keep, same))
            passes.push_back(std::move(p));
    }
    std::sort(passes.begin(), passes.end(), [](const Pass &a, const Pass &b) { return a.used < b.used; });
    int removed = 0;
    for (const Pass &p : passes) {
        if (total <= limitBytes)
            break;
        std::error_code error;
        if (fs::remove(p.path, error)) {
            total -= p.bytes;
            ++removed;
        }
    }
    return removed;
}

FeatureCorpus featureCorpus(const FeatureCorpusSource &source, const std::function<bool(int64_t, int64_t)> &progress,
    const std::atomic<bool> *cancel, const WorkBudget &budget, bool useCache)
{
    const Model &model = *source.model;
    const SaeDirectory &d = *source.dictionary;
    const FeatureCorpusOptions &o = source.options;
    const std::string files = modelFiles(model);
    const ModelConfig &c = model.config;
    std::string key = std::string(kFormat) + "|"
        + (files.empty() ? "memory:" + hex(uint64_t(model.wte.storage())) : files) + "|" + positionKindName(c.positions)
        + "/cf" + std::to_string(c.capacityFactor) + "/k" + std::to_string(c.expertTopK) + "|"
        + dictionaryStamp(source.dictionaryPath) + "|" + d.site.hookName() + "|" + source.corpusName + "="
        + std::to_string(source.text->size()) + "#" + hex(fnv1a(*source.text)) + "|" + std::to_string(o.maxTokens) + ","
        + std::to_string(o.top) + "," + std::to_string(o.before) + "," + std::to_string(o.after);
    FeatureCorpus out;
    const std::string cacheRoot = files.empty() ? std::string() : userCacheDirectory();
    if (!cacheRoot.empty())
        out.cachePath = (fs::path(cacheRoot) / "feature-dashboards" / (hex(fnv1a(key)) + ".safetensors")).string();
    static KeptValue<FeatureCorpusStats> kept; // the last pass, for every other feature's page
    if (useCache) {
        if ((out.stats = kept.find(key))) {
            out.origin = FeatureCorpus::Origin::Memory;
            return out;
        }
        if (!out.cachePath.empty())
            if (std::optional<FeatureCorpusStats> s = readFeatureCorpusFile(out.cachePath, key)) {
                out.stats = std::make_shared<const FeatureCorpusStats>(std::move(*s));
                out.origin = FeatureCorpus::Origin::Disk;
                std::error_code error; // used now: the last to be pruned
                fs::last_write_time(out.cachePath, fs::file_time_type::clock::now(), error);
                kept.keep(key, out.stats);
                return out;
            }
    }
    // The text's start is enough for maxTokens tokens (a token is at most a few dozen bytes), and tokenising a
    // megabyte of text to read a thousand tokens would be time lost.
    const std::string_view text(*source.text);
    const std::string head(text.substr(0, size_t(std::min<int64_t>(int64_t(text.size()), o.maxTokens * 32))));
    const std::vector<int> tokens = tokenizerForModel(model)->encode(head);
    out.stats = std::make_shared<const FeatureCorpusStats>(
        featureCorpusPass(source.model, d.sae, d.site, tokens, o, progress, cancel, budget));
    kept.keep(key, out.stats);
    if (!out.cachePath.empty()) {
        try {
            writeFeatureCorpusFile(out.cachePath, key, *out.stats);
            pruneFeatureCorpusCache(
                fs::path(out.cachePath).parent_path().string(), kFeatureCorpusCacheBytes, out.cachePath);
        } catch (const std::exception &e) { // a full disk or a read-only cache: the pass stands, kept in memory
            out.cacheProblem = e.what();
        }
    }
    return out;
}

} // namespace atlas
