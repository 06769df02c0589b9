#include "commands.h"

#include "util/error.h"

#include <cstdio>
#include <functional>
#include <map>

namespace atlas {

namespace {

const char *usage = R"(transformer-atlas: run small transformers one operation at a time.

  transformer-atlas                       open the desktop app on the built-in model
  transformer-atlas dump --model M (--tokens 1,2,3 | --text "...") --out DIR [--padding 5,6]
                                          write every traced tensor as .npy plus manifest.json
  transformer-atlas render --spec FILE.json --out FILE.png|.svg|.pdf [--size 1200x800]
                                          draw a view described by a view spec, headless
  transformer-atlas bench (--model M | --shape gpt2-small) --length N --repeat R [--no-trace]
                                          time the forward pass and print the median
  transformer-atlas bench-view [--model M] --length N --repeat R
                                          time switching the attention view's layer or head
  transformer-atlas generate --model M --text "..." [--steps N --temperature T --top-k K --seed S]
                                          generate with a KV cache, printing its growth
  transformer-atlas models                list the built-in models
  transformer-atlas new-model --out DIR [--layers L --heads H --d-model D ... --seed S]
                                          make a model with GPT-2's initialisation from a fixed seed

M is a built-in model name (see `models`) or a Hugging Face GPT-2 directory (config.json, model.safetensors).
)";

} // namespace

int runCommandLine(int argc, char **argv)
{
    static const std::map<std::string, std::function<int(const CommandArgs &)>> commands = {
        {"dump", dumpCommand},         {"render", renderCommand},     {"bench", benchCommand},
        {"bench-view", benchViewCommand}, {"generate", generateCommand}, {"models", modelsCommand},
        {"new-model", newModelCommand},
    };
    if (argc < 2)
        return -1;
    const std::string name = argv[1];
    if (name == "help" || name == "--help" || name == "-h") {
        std::fputs(usage, stdout);
        return 0;
    }
    auto it = commands.find(name);
    if (it == commands.end()) {
        if (name.starts_with("-"))
            return -1; // Qt's own options (-platform, -style …) go to the app
        std::fprintf(stderr, "transformer-atlas: unknown command '%s'\n\n%s", name.c_str(), usage);
        return 2;
    }
    try {
        return it->second(CommandArgs(argv + 2, argv + argc));
    } catch (const Error &e) {
        std::fprintf(stderr, "transformer-atlas %s: error: %s\n", name.c_str(), e.what());
        return 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "transformer-atlas %s: unexpected error: %s\n", name.c_str(), e.what());
        return 1;
    }
}

} // namespace atlas
