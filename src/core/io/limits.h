#pragma once

#include <cstddef>

// The largest inputs the program accepts from a user's files and options (docs/reliability.md). Anything larger
// is refused with a message naming the file or option, before memory is spent on it.
namespace atlas::limits {

constexpr size_t kSpecBytes = size_t(1) << 20; // a view spec file (render --spec), config.json, trainer.json
constexpr size_t kLessonBytes = size_t(4) << 20; // a lesson file
constexpr int kLessonSteps = 200; // steps of one lesson (the shipped ones have under 20)
constexpr int kStepActions = 32; // actions of one step (the shipped lessons have at most 3)
constexpr int kLessonActions = 256; // actions of one lesson
constexpr size_t kStepTextBytes = size_t(32) << 10; // a step's text or notes, one screen (the shipped: under 2.5 KiB)
constexpr size_t kInputTextBytes = size_t(4) << 20; // an input text file: about a million tokens, past any context
// A view spec (render --spec, the clipboard, the session saved between runs): its keys, and an input text of up to
// kInputTextBytes with room for JSON's escapes (a newline takes two bytes).
constexpr size_t kViewSpecBytes = kSpecBytes + 2 * kInputTextBytes;
constexpr size_t kTokenizerBytes = size_t(64) << 20; // vocab.json, merges.txt (GPT-2's are 1 MB and 0.5 MB)
constexpr int kJsonDepth = 64; // nesting of any JSON a user gives (ours need 5; a value's message recurses)
constexpr int kMinImageSide = 16; // render --size, lesson render --size: pixels per side
constexpr int kMaxImageSide = 8192;

} // namespace atlas::limits
