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

// Every subcommand: the table's (commandtable.cpp), and each view folder's (viewFolderCommands) after the analyses'.
const std::vector<CliCommand> &cliCommands();
// The subcommands of the view folders that have a CLI part (`atlas::views::NAME::commands()`), in the folders' order:
// made by src/views/CMakeLists.txt.
std::vector<CliCommand> viewFolderCommands();
// The entry of `name`; nullptr for an unknown one.
const CliCommand *findCliCommand(const std::string &name);

// The whole usage: every form of every subcommand, then the note on models.
std::string usageText();
// One subcommand's forms and every option it takes, with their help; empty for an unknown name.
std::string commandUsage(const std::string &name);

// Options several subcommands share, for the table and the view folders' CLI parts.
namespace cli {

using Options = std::vector<CliOption>;

inline Options operator+(Options a, const Options &b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

inline const Options kModel = {{"model", "M", "a built-in model name (see `models`) or a model directory"}};
// The corrupted run and the metric of `patch`, `circuit` and `path-patch` (modelinput.h).
inline const Options kCorruption = {{"text", "\"...\"", "the clean input as text"},
    {"tokens", "1,2", "the clean input as token ids"}, {"padding", "5,6", "positions treated as padding"},
    {"corrupted-text", "\"...\"", "the corrupted run's input (as many tokens as the clean one)"},
    {"corrupted-tokens", "1,2", "the same as token ids"},
    {"noise-positions", "3,4", "or: noise added to the embedding at these positions"},
    {"noise-scale", "X", "the noise's standard deviation (default 3)"}, {"seed", "S", "the noise's seed"},
    {"target", "TOKEN", "the token whose logit is measured"},
    {"contrast", "TOKEN", "the metric is logit(target) - logit(contrast)"},
    {"position", "P", "the position measured (default the last)"}};
inline const Options kWorkBudget = {{"work-budget", "TFLOP",
    "the work one analysis may do, in TFLOP (default 2): a heavier one is refused with its estimate"}};

} // namespace cli

} // namespace atlas
