#include "arguments.h"
#include "commands.h"
#include "model/builtinmodels.h"
#include "model/model.h"

#include <iostream>

namespace atlas {

// The built-in models, one per line: name, shape and what they are for.
int modelsCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "models");
    const auto models = builtinModels();
    if (models.empty())
        std::cout << "no built-in models found (searched the resources/models folders)\n";
    for (const BuiltinModel &m : models) {
        std::cout << m.name << "\n    " << m.description << "\n";
        if (args.flag("paths"))
            std::cout << "    " << m.directory << "\n";
    }
    return 0;
}

} // namespace atlas
