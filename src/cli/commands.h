#pragma once

#include "model/openablepath.h"

#include <string>
#include <vector>

namespace atlas {

using CommandArgs = std::vector<std::string>;

// The subcommands the usage lists, each with its own `SUBCOMMAND --help` (bench-gui runs in the app's binary).
std::vector<std::string> commandNames();

// Each subcommand returns the process exit code; failures throw atlas::Error (printed by runCommandLine).
int dumpCommand(const CommandArgs &args);
int benchCommand(const CommandArgs &args);
int benchViewCommand(const CommandArgs &args);
int benchTrainCommand(const CommandArgs &args);
int modelsCommand(const CommandArgs &args);
int newModelCommand(const CommandArgs &args);
int generateCommand(const CommandArgs &args);
int renderCommand(const CommandArgs &args);
int trainCommand(const CommandArgs &args);
int trainSaeCommand(const CommandArgs &args);
int featuresCommand(const CommandArgs &args);
int featureDashboardCommand(const CommandArgs &args);
int steerCommand(const CommandArgs &args);
int analyzeHeadsCommand(const CommandArgs &args);
int evaluateCommand(const CommandArgs &args);
int tokenizeCommand(const CommandArgs &args);
int trainTokenizerCommand(const CommandArgs &args);
int saveCommand(const CommandArgs &args);
int benchTokenizerCommand(const CommandArgs &args);
int benchAttentionCommand(const CommandArgs &args);
int benchApproximationCommand(const CommandArgs &args);
int benchPatternCommand(const CommandArgs &args);
int lessonCommand(const CommandArgs &args);
int memoryCommand(const CommandArgs &args);

// Returns -1 when argv does not name a subcommand (then the app opens).
int runCommandLine(int argc, char **argv);
// What the app is asked to open: `transformer-atlas PATH` (model/openablepath.h) or `transformer-atlas --model M`;
// Kind::None when the first argument names nothing it opens (a subcommand, Qt's own options, nothing).
OpenablePath appArgument(int argc, char **argv);

} // namespace atlas
