#include "arguments.h"
#include "commands.h"
#include "engine/generator.h"
#include "features/saefile.h"
#include "features/steering.h"
#include "modelinput.h"
#include "util/error.h"

#include <algorithm>
#include <cstdio>

namespace atlas {

// Steering: the model's continuation of the input with and without a direction added to the stream at one site (a
// feature's decoder row, or a difference of means), or a feature clamped, both greedy or both sampled from one seed
// through the KV cache. (The options: commandtable.cpp.)
int steerCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "steer");
    ModelAndInput run = loadModelAndInput(args);
    Steering s;
    std::string what;
    if (args.has("sae") == (args.has("means-a") || args.has("means-b")))
        throw Error("steer by a feature (--sae DIR --feature N) or by a difference of means (--means-a \"...|...\" "
                    "--means-b \"...|...\" --site HOOK), one of the two");
    if (args.has("sae")) {
        std::optional<SaeSite> site;
        if (args.has("site"))
            site = saeSiteFromHook(args.value("site"));
        const SaeDirectory d = loadDictionary(dictionaryPath(*run.model, args.value("sae")), site);
        const int feature = args.intValue("feature", -1, 0, int(d.sae.width()) - 1);
        if (feature < 0)
            throw Error("give the feature to steer with: --feature N");
        if (args.has("clamp")) {
            s = clampedFeature(d, feature, args.doubleValue("clamp", 0, -1e6, 1e6));
            what = "feature #" + std::to_string(feature) + " clamped at " + args.value("clamp");
        } else {
            s = addedFeature(d, feature, args.doubleValue("strength", 4, -1e6, 1e6));
            what = args.value("strength", "4") + " × feature #" + std::to_string(feature) + "'s decoder row";
        }
    } else {
        s.site = saeSiteFromHook(args.required("site"));
        s.direction = differenceOfMeans(
            run.model, s.site, splitPrompts(args.required("means-a")), splitPrompts(args.required("means-b")));
        s.strength = args.doubleValue("strength", 1, -1e6, 1e6);
        what = args.value("strength", "1") + " × (mean of A − mean of B)";
    }
    const int count = args.intValue("new-tokens", 40, 1, 4096);
    const SamplingOptions sampling = samplingArgument(args);
    // unsteered: the model's own continuation
    const std::vector<int> plain = Generator(run.model, run.input.tokens, sampling).continuation(count);
    const std::vector<int> steered = steeredContinuation(run.model, run.input.tokens, s, count, sampling);
    std::printf("%s at %s\n", what.c_str(), s.site.hookName().c_str());
    if (sampling.temperature > 0)
        std::printf("both sampled at temperature %g (top-k %d, top-p %g) from seed %llu\n",
            double(sampling.temperature), sampling.topK, sampling.topP, static_cast<unsigned long long>(sampling.seed));
    const std::string prompt = run.tokenizer->decode(run.input.tokens);
    std::printf("  unsteered: %s|%s\n", prompt.c_str(), run.tokenizer->decode(plain).c_str());
    std::printf("  steered:   %s|%s\n", prompt.c_str(), run.tokenizer->decode(steered).c_str());
    std::printf("the next tokens it moves most (p without \u2192 with):");
    for (const NextTokenShift &n : nextTokenShift(run.model, run.input, s, 5))
        std::printf("  '%s' %.3f \u2192 %.3f", run.tokenizer->piece(n.id).c_str(), double(n.without), double(n.with));
    std::printf("\n");
    return 0;
}

} // namespace atlas
