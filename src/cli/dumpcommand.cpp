#include "arguments.h"
#include "commands.h"
#include "engine/engine.h"
#include "io/atomicfile.h"
#include "io/npy.h"
#include "modelinput.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

namespace atlas {

// dump --model DIR (--tokens 1,2,3 | --text "...") [--padding 5,6] --out DIR [--memory-budget GIB]
int dumpCommand(const CommandArgs &argv)
{
    const Arguments args(argv, {"model", "tokens", "text", "padding", "out", "memory-budget"});
    const std::string out = args.required("out");
    ModelAndInput run = loadModelAndInput(args);
    Engine engine(run.model, run.input, {true, memoryBudgetArgument(args)});
    engine.runToEnd();

    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec)
        throw Error(out + ": cannot create the output directory: " + ec.message());
    nlohmann::json manifest = {{"model", run.model->name}, {"tokens", run.input.tokens}, {"padding", run.input.padding}};
    nlohmann::json tensors = nlohmann::json::array();
    for (const TraceEntry &e : engine.trace().entries()) {
        writeNpy((std::filesystem::path(out) / (e.name + ".npy")).string(), e.tensor);
        tensors.push_back({{"name", e.name}, {"shape", e.tensor.shape()}, {"formula", e.formula},
                           {"op", engine.program().ops[static_cast<size_t>(e.op)].name}});
    }
    manifest["tensors"] = tensors;
    writeFileAtomically((std::filesystem::path(out) / "manifest.json").string(), manifest.dump(2) + "\n");
    std::cout << "wrote " << tensors.size() << " tensors and manifest.json to " << out << "\n";
    return 0;
}

} // namespace atlas
