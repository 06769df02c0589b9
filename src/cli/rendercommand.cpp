#include "arguments.h"
#include "commands.h"
#include "io/atomicfile.h"
#include "offscreenapplication.h"
#include "util/error.h"
#include "view/viewspec.h"
#include "views/specrunner.h"
#include "views/view.h"
#include "views/viewexport.h"
#include "views/viewfactory.h"

#include <QApplication>

#include <cstdio>
#include <regex>

namespace atlas {

namespace {

QSize parseSize(const std::string &text)
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
    const QSize size = parseSize(args.value("size", "1200x800"));
    const ViewSpec spec = ViewSpec::fromJson(readFile(specPath), specPath);

    const OffscreenApplication app;

    const SpecRun run = runSpec(spec);
    std::unique_ptr<View> view = createView(spec.view);
    view->resize(size);
    view->setInput(run.viewInput);
    view->setSpec(spec);
    view->ensurePolished();
    exportView(view.get(), QString::fromStdString(out), size);
    std::printf("rendered %s view of %s to %s (%dx%d)\n", spec.view.c_str(), run.model->name.c_str(), out.c_str(),
        size.width(), size.height());
    return 0;
}

} // namespace atlas
