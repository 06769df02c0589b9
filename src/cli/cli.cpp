#include "commands.h"

#include "commandtable.h"
#include "util/error.h"

#include <cstdio>
#include <filesystem>
#include <new>
#include <string_view>

namespace atlas {

namespace {

bool asksForHelp(char **first, char **last)
{
    for (char **arg = first; arg != last; ++arg)
        if (std::string_view(*arg) == "--help" || std::string_view(*arg) == "-h")
            return true;
    return false;
}

} // namespace

OpenablePath appArgument(int argc, char **argv)
{
    if (argc < 2)
        return {};
    if (std::string(argv[1]) == "--model")
        return argc > 2 ? OpenablePath {OpenablePath::Kind::Model, argv[2]} : OpenablePath {};
    return openablePath(argv[1]);
}

std::vector<std::string> commandNames()
{
    std::vector<std::string> names;
    for (const CliCommand &c : cliCommands())
        names.push_back(c.name);
    return names;
}

int runCommandLine(int argc, char **argv)
{
    if (argc < 2)
        return -1;
    const std::string name = argv[1];
    if (name == "help" || name == "--help" || name == "-h") {
        if (argc > 2 && !commandUsage(argv[2]).empty()) { // help SUBCOMMAND
            std::fputs(commandUsage(argv[2]).c_str(), stdout);
            return 0;
        }
        std::fputs(usageText().c_str(), stdout);
        return 0;
    }
    // SUBCOMMAND --help, anywhere after the subcommand (lesson export --help): its part of the usage, nothing run.
    if (const std::string help = commandUsage(name); !help.empty() && asksForHelp(argv + 2, argv + argc)) {
        std::fputs(help.c_str(), stdout);
        return 0;
    }
    const CliCommand *command = findCliCommand(name);
    if (!command || !command->run) {
        if (name.starts_with("-") || appArgument(argc, argv).kind != OpenablePath::Kind::None)
            return -1; // Qt's own options (-platform, -style …) and a model, lesson or spec to open go to the app
        std::fprintf(stderr,
            "transformer-atlas: '%s' is neither a command nor something the app opens (a built-in model's name, a "
            "model directory or its config.json, a .gguf file, a lesson's .md, a view spec's .json): "
            "`transformer-atlas help` lists the commands\n",
            name.c_str());
        return 2;
    }
    try {
        return command->run(CommandArgs(argv + 2, argv + argc));
    } catch (const Error &e) {
        std::fprintf(stderr, "transformer-atlas %s: error: %s\n", name.c_str(), e.what());
        return 1;
    } catch (const std::filesystem::filesystem_error &e) { // a symbolic link loop, an unreadable directory …
        const std::string path = e.path1().empty() ? std::string("a path") : e.path1().string();
        std::fprintf(
            stderr, "transformer-atlas %s: error: %s: %s\n", name.c_str(), path.c_str(), e.code().message().c_str());
        return 1;
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr,
            "transformer-atlas %s: error: out of memory (an input, a model or a size too large for this machine)\n",
            name.c_str());
        return 1;
    } catch (const std::exception &e) { // a bug: every failure a user can cause is an atlas::Error
        std::fprintf(stderr, "transformer-atlas %s: unexpected error: %s\n", name.c_str(), e.what());
        return 1;
    } catch (...) {
        std::fprintf(stderr, "transformer-atlas %s: unexpected error of unknown type\n", name.c_str());
        return 1;
    }
}

} // namespace atlas
