#pragma once

#include "commands.h"

#include <string>
#include <vector>

namespace atlas {

// One option of a subcommand: "--name VALUE", or a flag when `value` is empty, with its line of help.
struct CliOption
{
    std::string name; // "attention-param"
    std::string value; // "key=value" as the usage writes it; "" for a flag
    std::string help;
};

// One way to call a subcommand: its arguments as the usage writes them, and what it does.
struct CliForm
{
    std::string synopsis; // "--model M (--tokens 1,2,3 | --text \"...\") --out DIR"
    std::string summary;
};

// A subcommand, described once: the usage, `help NAME` and the options it accepts (Arguments) are made from this
// table, never written again (docs/architecture.md, "Adding a subcommand").
struct CliCommand
{
    std::string name;
    std::vector<CliForm> forms;
    std::vector<CliOption> options;
    int (*run)(const CommandArgs &) = nullptr; // nullptr: bench-gui, which main() runs with the window
};

const std::vector<CliCommand> &cliCommands();
// The entry of `name`; nullptr for an unknown one.
const CliCommand *findCliCommand(const std::string &name);

// The whole usage: every form of every subcommand, then the note on models.
std::string usageText();
// One subcommand's forms and every option it takes, with their help; empty for an unknown name.
std::string commandUsage(const std::string &name);

} // namespace atlas
