#include "arguments.h"
#include "commands.h"
#include "model/builtinmodels.h"
#include "model/ggufmodel.h"
#include "util/error.h"
#include "util/memorycheck.h"

#include <cstdio>
#include <string>

namespace atlas {

// Writes any model the program opens (built-in, trained, a Hugging Face directory or a GGUF file) as a GGUF file
// llama.cpp runs, its matrices as --type.
int saveCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "save");
    const std::string format = args.value("format", "gguf");
    if (format != "gguf")
        throw Error("--format: '" + format + "' is not a format save writes (gguf is)");
    const std::string typeName = args.value("type", "f32");
    GgmlType type = GgmlType::F32;
    const GgmlTypeInfo *info = ggmlTypeNamed(typeName, &type);
    if (!info || !info->written())
        throw Error("--type: '" + typeName + "' is not a type save writes (it writes " + writtenGgmlTypeNames() + ")");
    const std::shared_ptr<const Model> model = loadModel(args.required("model"));
    const std::string &out = args.required("out");
    const GgufSaveReport report = saveGgufModel(*model, out, type, args.value("description"));
    std::string types;
    for (const auto &[name, count] : report.tensorsByType)
        types += (types.empty() ? "" : ", ") + std::to_string(count) + " " + name;
    std::printf("%s: %s as llama.cpp's %s architecture, %s (tensors: %s)\n", out.c_str(), model->name.c_str(),
        report.architecture.c_str(), formatBytes(double(report.bytes)).c_str(), types.c_str());
    for (const auto &[name, count] : report.fellBack)
        std::printf("%d %s rows are not a whole number of %s blocks (%lld values): stored as %s, as "
                    "llama-quantize stores such rows in another type\n",
            count, count == 1 ? "matrix's" : "matrices'", info->name, (long long)info->blockElements, name.c_str());
    return 0;
}

} // namespace atlas
