#include "arguments.h"
#include "commands.h"
#include "engine/engine.h"
#include "engine/generator.h"
#include "modelinput.h"
#include "util/error.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>

namespace atlas {

// Prints each new token with its probability and the KV cache's size as it grows, then the text; stops early when the
// context is full. An encoder-decoder (--text the source, --decoder-text the decoder's start) runs its encoder once and
// stops after '.' when the model writes one.
int generateCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "generate");
    ModelAndInput run = loadModelAndInput(args);
    const SamplingOptions options = samplingArgument(args);
    const bool fromSource = run.model->config.isEncoderDecoder();
    Generator generator(run.model, run.input, options);
    if (fromSource)
        std::printf("encoder run once on %d source tokens; cross-attention K/V of its output: %.1f KiB in %d "
                    "layers, computed once\n",
            generator.crossPositions(), double(generator.crossCacheBytes()) / 1024.0, run.model->config.layers);
    const ModelConfig &c = run.model->config;
    if (c.kvHeadCount() < c.heads)
        std::printf("grouped-query attention: the cache keeps %d K/V heads for %d query heads, %dx less than one per "
                    "head\n",
            c.kvHeadCount(), c.heads, c.queriesPerKv());
    const int steps = args.intValue("steps", 20, 1, 1 << 20);
    for (int s = 0; s < steps; ++s) {
        if (int(generator.tokens().size()) >= run.model->config.context) { // the text so far is still worth printing
            std::printf(
                "stopped after %d tokens: the model's context of %d tokens is full\n", s, run.model->config.context);
            break;
        }
        const int id = generator.generate();
        std::printf("%4d  id %-6d %-10s p = %.3f  KV cache: %d positions, %.1f KiB\n", s + 1, id,
            run.tokenizer->piece(id).c_str(), generator.lastProbability(), generator.cachedPositions(),
            double(generator.cacheBytes()) / 1024.0);
        if (fromSource && run.tokenizer->piece(id) == ".") // the end of an answer (seq2seq-sort's)
            break;
    }
    if (fromSource)
        std::cout << "\nsource:  " << run.tokenizer->decode(run.input.source)
                  << "\ndecoder: " << run.tokenizer->decode(generator.tokens()) << "\n";
    else
        std::cout << "\n" << run.tokenizer->decode(generator.tokens()) << "\n";
    return 0;
}

} // namespace atlas
