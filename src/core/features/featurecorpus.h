#pragma once

#include "features/featuredashboard.h"
#include "features/saefile.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

// The feature dashboards' corpus pass (features/featuredashboard.h), kept: the last one in memory, and every one on
// disk in the user's cache (io/resourcepaths.h's userCacheDirectory, feature-dashboards/), keyed by what it read: the
// model's files, the dictionary's, the site, the corpus's text and the options. A model made in memory has no files
// to name, so its pass is kept in memory only.
namespace atlas {

struct FeatureCorpusSource
{
    std::shared_ptr<const Model> model;
    std::string dictionaryPath; // where `dictionary` was read (its files' times are part of the key)
    std::shared_ptr<const SaeDirectory> dictionary;
    std::string corpusName; // "built-in corpus", or the text file's path
    const std::string *text = nullptr; // its text; read from the start until options.maxTokens tokens
    FeatureCorpusOptions options;
};

struct FeatureCorpus
{
    std::shared_ptr<const FeatureCorpusStats> stats;
    enum class Origin { Computed, Memory, Disk } origin = Origin::Computed;
    std::string cachePath; // the disk cache's file ("" when there is none)
    std::string cacheProblem; // why it could not be written ("" when it was, or need not be)
};

// The pass for `source`: kept, or run (progress and cancel as featureCorpusPass's) and then kept. `useCache` false
// runs it whatever is kept (a benchmark), and keeps it.
FeatureCorpus featureCorpus(const FeatureCorpusSource &source, const std::function<bool(int64_t, int64_t)> &progress,
    const std::atomic<bool> *cancel, const WorkBudget &budget, bool useCache = true);

// The cache's own format, for its test: the stats as float32 safetensors, `key` in its metadata. Reading gives
// nothing for a file that is absent, of another key, or not such a file.
void writeFeatureCorpusFile(const std::string &path, const std::string &key, const FeatureCorpusStats &stats);
std::optional<FeatureCorpusStats> readFeatureCorpusFile(const std::string &path, const std::string &key);
// The disk cache's directory kept to `limitBytes`: the passes used longest ago (a read renews a file's time) removed
// until the rest fit, `keep` (the pass just written) never. Only files this program writes there count or go: regular
// files named as it names them, of its format; anything else is left alone. Returns how many it removed.
constexpr uint64_t kFeatureCorpusCacheBytes = uint64_t(512) << 20;
int pruneFeatureCorpusCache(const std::string &directory, uint64_t limitBytes, const std::string &keep);

} // namespace atlas
