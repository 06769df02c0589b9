#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>

// Reading JSON that strangers wrote (view specs, config.json, trainer.json, vocab.json): every failure, including
// nlohmann's own exceptions (a number too large for a double, a wrong type), becomes an atlas::Error whose
// message names the source and the key. Integers are checked for type and range before they are converted.
namespace atlas {

// Parses `text`; throws atlas::Error "<source>: not valid JSON: <reason> (at key 'layer')", naming the last key
// read (a number too large for a double fails in the parser, before any field is read). Objects and arrays nested
// deeper than limits::kJsonDepth are refused while parsing: the library's dump(), copy and comparison recurse.
// `onEvent`, when given, sees every parse event too (a key at `depth` 1 is a top-level key).
using JsonEventHook = std::function<void(int depth, nlohmann::json::parse_event_t event, const nlohmann::json &parsed)>;
nlohmann::json parseJson(const std::string &text, const std::string &source, const JsonEventHook &onEvent = {});
// The same with a filter that sees every event as the parser's callback does and may keep a value out of the tree:
// returning false drops `parsed` (the filter may move it away first). A large table read this way need not be
// built as nested objects first (tokenizer.json's vocabulary).
using JsonFilter = std::function<bool(int depth, nlohmann::json::parse_event_t event, nlohmann::json &parsed)>;
nlohmann::json parseJsonFiltered(const std::string &text, const std::string &source, const JsonFilter &filter);
// The same over raw bytes (a safetensors header inside a mapped file).
nlohmann::json parseJson(
    const char *begin, const char *end, const std::string &source, const JsonEventHook &onEvent = {});

// A value as a user wrote it, for a message, without recursing into it: a scalar as written (invalid UTF-8
// replaced, cut after 60 characters), an array or object by its size ("an array of 3 values").
std::string shownJson(const nlohmann::json &value);

// `object[key]` as an integer in [minimum, maximum]; throws atlas::Error "<source>: key '<key>': …" when it is
// missing, not an integer (1.5, 1e30, "3") or out of range.
int64_t jsonInteger(
    const nlohmann::json &object, const std::string &key, int64_t minimum, int64_t maximum, const std::string &source);
// The same for a number (integer or not) that must be finite and in [minimum, maximum].
double jsonNumber(
    const nlohmann::json &object, const std::string &key, double minimum, double maximum, const std::string &source);
// `object[key]` as a string; throws atlas::Error when it is missing or not a string.
std::string jsonString(const nlohmann::json &object, const std::string &key, const std::string &source);

// nlohmann's message without its "[json.exception.type_error.302] " prefix, which means nothing to a user.
std::string jsonReason(const std::exception &e);

} // namespace atlas
