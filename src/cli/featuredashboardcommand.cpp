#include "arguments.h"
#include "commands.h"
#include "engine/inputbuilder.h"
#include "features/featurecorpus.h"
#include "features/saefile.h"
#include "io/atomicfile.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "train/corpus.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace atlas {

namespace {

// A context as one line: the example's token in [[ ]] with its activation, the others bare.
std::string contextLine(const Tokenizer &tokenizer, const FeatureCorpusStats &s, int64_t f, int slot)
{
    const int64_t at = s.topToken[size_t(f * s.top + slot)];
    std::string line;
    for (int64_t u = std::max<int64_t>(0, at - s.before);
         u <= std::min<int64_t>(int64_t(s.tokens.size()) - 1, at + s.after); ++u) {
        const std::string piece = tokenizer.piece(s.tokens[size_t(u)]);
        line += u == at ? "[[" + piece + "]]" : piece;
    }
    return line;
}

} // namespace

// One feature's dashboard over a corpus (features/featuredashboard.h): its strongest examples, how often and how
// strongly it fires, the tokens it raises and lowers, and the nearest features; the pass over the corpus is timed,
// and kept in the user's cache. (The options: commandtable.cpp.)
int featureDashboardCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "feature-dashboard");
    const auto model = loadModel(args.required("model"));
    std::optional<SaeSite> site;
    if (args.has("site"))
        site = saeSiteFromHook(args.value("site"));
    const std::string path = dictionaryPath(*model, args.required("sae"));
    const auto dictionary = std::make_shared<const SaeDirectory>(loadDictionary(path, site));
    const int width = int(dictionary->sae.width());
    const int feature = args.intValue("feature", 0, 0, width - 1);
    std::string text;
    FeatureCorpusSource source {model, path, dictionary, "built-in corpus", &corpusTraining(), {}};
    if (args.has("text-file")) {
        text = readInputText(args.value("text-file"));
        source.corpusName = args.value("text-file");
        source.text = &text;
    }
    source.options.maxTokens = args.intValue("tokens", 100'000, 1, 10'000'000);
    source.options.top = args.intValue("top", 20, 1, 1000);
    int64_t shown = -1;
    const FeatureCorpus corpus = featureCorpus(
        source,
        [&](int64_t done, int64_t total) {
            if (done * 10 / std::max<int64_t>(1, total) != shown) {
                shown = done * 10 / std::max<int64_t>(1, total);
                std::fprintf(stderr, "\r  reading the corpus: %lld of %lld tokens", static_cast<long long>(done),
                    static_cast<long long>(total));
            }
            return true;
        },
        nullptr, WorkBudget::process(), !args.flag("no-cache"));
    if (shown >= 0)
        std::fprintf(stderr, "\n");
    const FeatureCorpusStats &s = *corpus.stats;
    const char *origin = corpus.origin == FeatureCorpus::Origin::Computed ? "run now"
        : corpus.origin == FeatureCorpus::Origin::Memory                  ? "kept from the last pass"
                                                                          : "read from the cache";
    std::printf("%s over %s of %s (%s, windows of %d): %lld tokens, %lld features, the pass %s (it took %.2f s)\n",
        dictionary->sitesName().c_str(), source.corpusName.c_str(), model->name.c_str(),
        saeArchitectureName(dictionary->sae.architecture), s.window, static_cast<long long>(s.tokens.size()),
        static_cast<long long>(s.features), origin, s.seconds);
    if (!corpus.cachePath.empty())
        std::printf("  cache: %s%s\n", corpus.cachePath.c_str(),
            corpus.cacheProblem.empty() ? "" : (" (not written: " + corpus.cacheProblem + ")").c_str());
    const std::unique_ptr<Tokenizer> tokenizer = tokenizerForModel(*model);
    nlohmann::json json = {{"sae", path}, {"site", dictionary->site.hookName()}, {"feature", feature},
        {"corpus", source.corpusName}, {"tokens", s.tokens.size()}, {"pass_seconds", s.seconds},
        {"active", s.activeCount[size_t(feature)]}, {"density", s.density(feature)}};
    std::printf("\nfeature #%d: active on %lld tokens (%.4f %%)\n", feature,
        static_cast<long long>(s.activeCount[size_t(feature)]), 100 * s.density(feature));
    std::printf("the strongest examples:\n");
    for (int i = 0; i < s.top && s.topToken[size_t(feature * s.top + i)] >= 0; ++i) {
        const float a = s.topActivation[size_t(feature * s.top + i)];
        const std::string line = contextLine(*tokenizer, s, feature, i);
        std::printf("  %9.4f  %s\n", double(a), line.c_str());
        json["examples"].push_back(
            {{"activation", a}, {"token", s.topToken[size_t(feature * s.top + i)]}, {"context", line}});
    }
    std::printf("active tokens by activation:\n");
    const float *histogram = s.histogram.data() + int64_t(feature) * FeatureCorpusStats::kBins;
    for (int b = 0; b < FeatureCorpusStats::kBins; ++b)
        if (histogram[b] > 0) {
            std::printf("  %9.4g \u2026 %-9.4g %8.0f\n", FeatureCorpusStats::binLow(b),
                FeatureCorpusStats::binLow(b + 1), double(histogram[b]));
            json["histogram"].push_back({{"from", FeatureCorpusStats::binLow(b)},
                {"to", FeatureCorpusStats::binLow(b + 1)}, {"tokens", histogram[b]}});
        }
    const LogitEffects effects = featureLogitEffects(*model, dictionary->sae, feature, 10);
    for (const auto &[title, list] : {std::pair {"raises", &effects.raised}, std::pair {"lowers", &effects.lowered}}) {
        std::printf("%s the logits of:", title);
        for (const auto &[id, e] : *list) {
            std::printf("  %s %+.3f", tokenizer->piece(id).c_str(), double(e));
            json[title].push_back({{"token", tokenizer->piece(id)}, {"id", id}, {"effect", e}});
        }
        std::printf("\n");
    }
    std::printf("nearest features by decoder cosine:");
    for (const auto &[other, cosine] : nearestFeatures(dictionary->sae, feature, 8)) {
        std::printf("  #%d %.3f", other, double(cosine));
        json["nearest"].push_back({{"feature", other}, {"cosine", cosine}});
    }
    std::printf("\n");
    if (args.has("json"))
        writeFileAtomically(args.value("json"), json.dump(1) + "\n");
    return 0;
}

} // namespace atlas
