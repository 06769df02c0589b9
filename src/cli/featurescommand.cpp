#include "arguments.h"
#include "commands.h"
#include "features/saefile.h"
#include "features/saetraining.h"
#include "io/atomicfile.h"
#include "modelinput.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace atlas {

// A dictionary's features on an input: the strongest at each position, or one feature on every token.
// (The options: commandtable.cpp.)
int featuresCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "features");
    ModelAndInput run = loadModelAndInput(args);
    std::optional<SaeSite> site;
    if (args.has("site"))
        site = saeSiteFromHook(args.value("site"));
    const SaeDirectory d = loadDictionary(dictionaryPath(*run.model, args.required("sae")), site);
    if (d.sae.inputSize() != run.model->config.dModel)
        throw Error(args.value("sae") + ": W_enc is " + d.sae.wEnc.shapeString() + ", but " + d.site.hookName() + " of "
            + run.model->name + " has " + std::to_string(run.model->config.dModel) + " dimensions");
    const Tensor rows = siteRows(run.model, d.site, run.input);
    const Tensor f = d.sae.encode(rows);
    const int64_t T = f.dim(0), F = f.dim(1);
    const int top = args.intValue("top", 5, 1, 100);
    std::printf("%s: %s, %lld features over %s%s\n", args.value("sae").c_str(), d.kindName().c_str(),
        static_cast<long long>(F), d.sitesName().c_str(),
        d.modelName.empty() || d.modelName == run.model->name ? "" : (" (trained on " + d.modelName + ")").c_str());
    nlohmann::json json = {{"sae", args.value("sae")}, {"site", d.site.hookName()}, {"width", F}};
    if (d.writes)
        json["writes"] = d.writes->hookName(); // a transcoder's output site
    const auto piece = [&](int64_t t) { return run.tokenizer->piece(run.input.tokens[size_t(t)]); };
    if (args.has("feature")) {
        const int feature = args.intValue("feature", 0, 0, int(F - 1));
        std::printf("feature %d on every token:\n", feature);
        for (int64_t t = 0; t < T; ++t) {
            const float a = f.data()[t * F + feature];
            std::printf("  %4lld  %-12s %9.4f\n", static_cast<long long>(t), piece(t).c_str(), double(a));
            json["activations"].push_back(a);
        }
        json["feature"] = feature;
    } else {
        std::vector<int64_t> scratch;
        for (int64_t t = 0; t < T; ++t) {
            const float *row = f.data() + t * F;
            const std::vector<int64_t> order = largestIndices(row, F, top, scratch);
            const int64_t active = std::count_if(row, row + F, [](float v) { return v != 0.0f; });
            std::printf("  %4lld  %-12s L0 %4lld:", static_cast<long long>(t), piece(t).c_str(),
                static_cast<long long>(active));
            nlohmann::json features = nlohmann::json::array();
            for (size_t i = 0; i < order.size() && row[order[i]] > 0; ++i) {
                std::printf("  #%lld %.3f", static_cast<long long>(order[i]), double(row[order[i]]));
                features.push_back({{"feature", order[i]}, {"activation", row[order[i]]}});
            }
            std::printf("\n");
            json["positions"].push_back({{"token", piece(t)}, {"l0", active}, {"top", features}});
        }
    }
    if (args.has("json"))
        writeFileAtomically(args.value("json"), json.dump(1) + "\n");
    return 0;
}

} // namespace atlas
