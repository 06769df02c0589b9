#include "arguments.h"
#include "commands.h"
#include "engine/engine.h"
#include "engine/generator.h"
#include "modelinput.h"
#include "util/error.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace atlas {

namespace {

// An encoder–decoder, greedily: each step runs the encoder and the whole decoder on the tokens so far (no KV
// cache) and appends the most probable next token; it stops after '.' when the model writes one.
int generateFromSource(const Arguments &args, ModelAndInput &run)
{
    if (args.doubleValue("temperature", 0.0, 0.0, 1000.0) != 0.0 || args.intValue("top-k", 0) != 0)
        throw Error("an encoder-decoder generates greedily here: drop --temperature and --top-k");
    const int steps = args.intValue("steps", 20);
    Input input = run.input;
    for (int s = 0; s < steps; ++s) {
        if (int(input.tokens.size()) >= run.model->config.context) {
            std::printf(
                "stopped after %d tokens: the model's context of %d tokens is full\n", s, run.model->config.context);
            break;
        }
        const auto [id, probability] = nextTokenFromSource(run.model, input);
        input.tokens.push_back(id);
        std::printf("%4d  id %-6d %-10s p = %.3f\n", s + 1, id, run.tokenizer->piece(id).c_str(), probability);
        if (run.tokenizer->piece(id) == ".")
            break;
    }
    std::cout << "\nsource:  " << run.tokenizer->decode(input.source)
              << "\ndecoder: " << run.tokenizer->decode(input.tokens) << "\n";
    return 0;
}

} // namespace

// generate --model NAME|DIR (--text "..." | --tokens ...) [--steps 20 --temperature 0 --top-k 0 --seed 0]
// Prints each new token with the KV cache's size as it grows, then the text; stops early when the context is full.
int generateCommand(const CommandArgs &argv)
{
    const Arguments args(argv,
        {"model", "tokens", "text", "padding", "steps", "temperature", "top-k", "seed", "decoder-text",
            "decoder-tokens"});
    ModelAndInput run = loadModelAndInput(args);
    if (run.model->config.isEncoderDecoder())
        return generateFromSource(args, run);
    SamplingOptions options;
    options.temperature = static_cast<float>(args.doubleValue("temperature", 0.0, 0.0, 1000.0));
    options.topK = args.intValue("top-k", 0);
    options.seed = static_cast<uint64_t>(args.intValue("seed", 0));
    Generator generator(run.model, run.input.tokens, options);
    const int steps = args.intValue("steps", 20);
    for (int s = 0; s < steps; ++s) {
        if (int(generator.tokens().size()) >= run.model->config.context) { // the text so far is still worth printing
            std::printf(
                "stopped after %d tokens: the model's context of %d tokens is full\n", s, run.model->config.context);
            break;
        }
        const int id = generator.generate();
        std::printf("%4d  id %-6d %-10s KV cache: %d positions, %.1f KiB\n", s + 1, id,
            run.tokenizer->piece(id).c_str(), generator.cachedPositions(), double(generator.cacheBytes()) / 1024.0);
    }
    std::cout << "\n" << run.tokenizer->decode(generator.tokens()) << "\n";
    return 0;
}

} // namespace atlas
