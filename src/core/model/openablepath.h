#pragma once

#include <string>

namespace atlas {

// What a path given to the app names (`transformer-atlas PATH`, as a file manager's double-click runs it, or a
// file dropped on the window):
//   a model: a built-in model's name, a model directory, its config.json or a safetensors file in it (the
//     directory), a GGUF file;
//   a lesson: a .md file;
//   a view spec: a .json file other than a config.json (Copy View Spec's JSON, `render --spec`'s).
// Kind::None for anything else (a subcommand's name, a missing file). Only the name and the kind of file are read:
// opening it says what is wrong with it.
struct OpenablePath
{
    enum class Kind { None, Model, Lesson, ViewSpec };
    Kind kind = Kind::None;
    std::string path; // the model's name, directory or file; the lesson's or the spec's file
};
OpenablePath openablePath(const std::string &path);

} // namespace atlas
