#pragma once

#include <string>
#include <vector>

namespace atlas {

struct TrainingRun;

// One option of a new training run, described once. `train --NAME VALUE` (its help and the values it takes), a
// lesson's `train TASK NAME=VALUE` and the Train panel's fields (their ranges and tooltips) all read this table
// and set the run through it, so they accept the same values with the same messages (docs/architecture.md,
// "A training run's options").
struct TrainingRunOption
{
    enum class Group {
        Run, // the optimiser's and the run's: a resumed run keeps its own
        Model, // the model's shape and layout: a new model
    };
    enum class Kind {
        Flag, // no value, or true/false
        Integer, // in [low, high]
        Number, // in [low, high]
        Text, // checked by setText
    };
    std::string name; // "expert-top-k"
    std::string valueName; // "K", as a usage writes it; "" for a flag
    std::string help; // the command line's help and the panel's tooltip
    Group group = Group::Model;
    Kind kind = Kind::Integer;
    double low = 0, high = 0;
    // The option this one only sets up: "experts" (it must be set too), or "family=llama|qwen3|olmo2|gemma2|smollm3"
    // (it must have one of those values).
    std::string needs;
    void (*setNumber)(TrainingRun &, double) = nullptr; // Flag (0 or 1), Integer, Number
    void (*setText)(TrainingRun &, const std::string &value, const std::string &where) = nullptr; // Text
    std::string (*text)(const TrainingRun &) = nullptr; // the run's value as the option writes it
};

const std::vector<TrainingRunOption> &trainingRunOptions();
// The layouts `family` trains (gpt2, llama, qwen3, …, bert); refuses any other, naming `where` and the list.
void checkTrainableFamily(const std::string &family, const std::string &where);
// The entry of `name`; nullptr for an unknown one.
const TrainingRunOption *findTrainingRunOption(const std::string &name);

// Sets the option `name` of `run` from its text (a flag from "", "true" or "false"). Throws atlas::Error beginning
// with `where` ("option --experts", "train: experts") for an unknown name, a value that is not a number, or one out
// of the option's range.
void setTrainingRunOption(
    TrainingRun &run, const std::string &name, const std::string &value, const std::string &where);
// Whether `run` changes the option from a new run's default.
bool isTrainingRunOptionSet(const TrainingRun &run, const TrainingRunOption &option);
// For an option that needs another to have a value ("family=llama|qwen3|olmo2"): whether `value` is one of those.
bool neededValueAccepts(const TrainingRunOption &option, const std::string &value);
// Throws atlas::Error when an option is set without the one it `needs` ("span-penalty and span-init need
// adaptive-span: give adaptive-span R too").
void checkTrainingRunOptionsNeeded(const TrainingRun &run);

} // namespace atlas
