#include "analysis/logitattribution.h"
#include "arguments.h"
#include "commandtable.h"
#include "engine/engine.h"
#include "engine/outputhead.h"
#include "io/atomicfile.h"
#include "modelinput.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

// The Logit attribution view's subcommand: `dla`, direct logit attribution on the command line.
namespace atlas::views::logitattribution {

namespace {

int dla(const CommandArgs &argv)
{
    const Arguments args(argv, "dla");
    ModelAndInput run = loadModelAndInput(args);
    const ModelConfig &config = run.model->config;
    Engine engine(run.model, run.input, traceOptionsArgument(args));
    engine.runToEnd();
    LogitAttributionOptions options;
    options.position = args.intValue("position", -1, -1);
    if (args.has("target")) {
        options.target = singleToken(*run.tokenizer, args.value("target"), config.vocab, "--target");
    } else { // the model's own most probable token at the position
        const int t = options.position < 0 ? int(run.input.tokens.size()) - 1 : options.position;
        const Tensor probs = nextTokenProbs(*run.model, engine.program(), engine.trace(), run.input, {t});
        options.target = int(std::max_element(probs.data(), probs.data() + probs.numel()) - probs.data());
    }
    options.contrast
        = args.has("against") ? singleToken(*run.tokenizer, args.value("against"), config.vocab, "--against") : -1;
    const LogitAttribution r = logitAttribution(*run.model, engine.program(), engine.trace(), run.input, options);

    const auto piece = [&](int id) { // appended, as GCC 12 misreads "'" + a string (-Wstringop-overflow)
        std::string quoted = "'";
        return quoted.append(run.tokenizer->piece(id)).append("'");
    };
    const std::string what = r.contrast >= 0 ? "logit(" + piece(r.target) + ") - logit(" + piece(r.contrast) + ")"
                                             : "logit(" + piece(r.target) + ")";
    std::printf(
        "%s at position %d, split into what each part wrote into the residual stream\n", what.c_str(), r.position);
    std::printf("the final %s's 1/%s = %.6g, frozen at this position%s\n",
        config.norm == NormKind::LayerNorm ? "LayerNorm" : "RMSNorm",
        config.norm == NormKind::LayerNorm ? "sigma" : "rms", r.frozenScale,
        r.softcap > 0 ? "; the logits are split before their soft-cap" : "");
    std::printf("embedding %+.4f\n", r.embedding);
    std::printf("layer");
    for (int h = 0; h < r.heads; ++h)
        std::printf("     H%-3d", h);
    if (r.crossAttention)
        for (int h = 0; h < r.heads; ++h)
            std::printf("     X%-3d", h);
    std::printf("     bias      FFN\n");
    for (int l = 0; l < r.layers; ++l) {
        std::printf("%5d", l);
        for (int h = 0; h < r.heads; ++h)
            std::printf(" %+8.4f", r.selfHead(l, h));
        if (r.crossAttention)
            for (int h = 0; h < r.heads; ++h)
                std::printf(" %+8.4f", r.crossHead(l, h));
        std::printf(" %+8.4f %+8.4f\n", r.attentionBias[size_t(l)], r.feedForward[size_t(l)]);
    }
    for (int l = 0; l < r.layers; ++l)
        for (const LogitAttribution::ExpertPart &e : r.experts[size_t(l)])
            std::printf("  layer %d's FFN: expert %d (gate %.4f) %+.4f\n", l, e.expert, e.gate, e.value);
    if (config.norm == NormKind::LayerNorm)
        std::printf(
            "final norm's beta %+.4f (its centring took %+.4f out of the uncentred parts)\n", r.normShift, r.centring);
    std::printf("the parts sum to %.6f; the model's own %s is %.6f (gap %.2g)\n", r.sum,
        r.contrast >= 0 ? "logit difference" : "logit", r.modelLogit, r.sum - r.modelLogit);

    const std::vector<NamedPart> writers = largestWriters(r);
    const int top = args.intValue("top", 10, 1);
    std::printf("largest writers:\n");
    for (size_t i = 0; i < std::min(writers.size(), size_t(top)); ++i)
        std::printf("  %-10s %+.4f\n", writers[i].name.c_str(), writers[i].value);

    if (args.has("json")) {
        const auto grid = [&r](const std::vector<double> &cells) {
            nlohmann::json rows = nlohmann::json::array();
            for (int l = 0; l < r.layers && !cells.empty(); ++l)
                rows.push_back(std::vector<double>(cells.begin() + l * r.heads, cells.begin() + (l + 1) * r.heads));
            return rows;
        };
        nlohmann::json j = {{"metric", what}, {"position", r.position}, {"target", r.target}, {"contrast", r.contrast},
            {"tokens", run.input.tokens}, {"embedding", r.embedding}, {"heads", grid(r.selfHeads)},
            {"bias", r.attentionBias}, {"ffn", r.feedForward}, {"norm_shift", r.normShift}, {"centring", r.centring},
            {"frozen_scale", r.frozenScale}, {"sum", r.sum}, {"logit", r.modelLogit}, {"stream_gap", r.streamGap}};
        if (r.crossAttention)
            j["cross_heads"] = grid(r.crossHeads);
        if (config.experts > 0) {
            nlohmann::json experts = nlohmann::json::array();
            for (const auto &layer : r.experts) {
                nlohmann::json parts = nlohmann::json::array();
                for (const LogitAttribution::ExpertPart &e : layer)
                    parts.push_back({{"expert", e.expert}, {"gate", e.gate}, {"part", e.value}});
                experts.push_back(parts);
            }
            j["experts"] = experts;
        }
        writeFileAtomically(args.value("json"), j.dump(1) + "\n");
    }
    return 0;
}

} // namespace

std::vector<CliCommand> commands()
{
    using namespace atlas::cli;
    return {{"dla",
        {{"--model M (--text \"...\" | --tokens 1,2) [--target TOKEN] [--against TOKEN] [--position P]",
             "direct logit attribution: the logit of target (default the model's top token), or logit(target) − "
             "logit(against), split into what the embedding, each head and each feed-forward wrote into the residual "
             "stream"},
            {"... [--top N] [--json FILE]", "the N largest writers listed (default 10), the parts as JSON"}},
        kModel
            + Options {{"text", "\"...\"", "the input as text"}, {"tokens", "1,2", "the input as token ids"},
                {"padding", "5,6", "positions treated as padding"},
                {"decoder-text", "\"...\"", "an encoder-decoder's decoder input as text (--text is its source)"},
                {"decoder-tokens", "1,2", "the same as token ids"},
                {"target", "TOKEN", "the token whose logit is split (default the model's most probable)"},
                {"against", "TOKEN", "split logit(target) - logit(against)"},
                {"position", "P", "the position whose prediction is split (default the last)"},
                {"top", "N", "how many of the largest writers to list (default 10)"},
                {"json", "FILE", "also write the parts as JSON"},
                {"memory-budget", "GIB", "the memory the traced run may hold (default 8)"},
                {"attention-trace", "auto|whole|on-demand|checkpoints|inputs", "how the run keeps its attention"}},
        dla}};
}

} // namespace atlas::views::logitattribution
