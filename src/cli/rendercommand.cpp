#include "arguments.h"
#include "commands.h"
#include "io/atomicfile.h"
#include "util/error.h"
#include "view/viewspec.h"
#include "views/headlessrender.h"

#include <cstdio>
#include <regex>

namespace atlas {

namespace {

std::pair<int, int> parseSize(const std::string &text)
{
    static const std::regex pattern(R"((\d{2,5})x(\d{2,5}))");
    std::smatch m;
    if (!std::regex_match(text, m, pattern))
        throw Error("--size: '" + text + "' is not WIDTHxHEIGHT (e.g. 1200x800)");
    return {std::stoi(m[1]), std::stoi(m[2])};
}

} // namespace

// render --spec FILE.json --out FILE.png|.svg|.pdf [--size WxH]: draws a view with no display.
int renderCommand(const CommandArgs &argv)
{
    const Arguments args(argv, {"spec", "out", "size", "memory-budget"});
    const std::string specPath = args.required("spec"), out = args.required("out");
    const auto [width, height] = parseSize(args.value("size", "1200x800"));
    const ViewSpec spec = ViewSpec::fromJson(readFile(specPath), specPath);

    const HeadlessApplication app;
    const std::string model = renderSpecToFile(spec, out, width, height);
    std::printf("rendered %s view of %s to %s (%dx%d)\n", spec.view.c_str(), model.c_str(), out.c_str(), width, height);
    return 0;
}

} // namespace atlas
