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

// Where a value sits in a file, for messages: the file and the path of keys to it ("model.vocab",
// "pre_tokenizer.pretokenizers[1]"). Every typed reader below names it: "tokenizer.json: key 'model.unk_id' …".
struct JsonPlace
{
    std::string source;
    std::string key; // "" for the whole file
    JsonPlace at(const std::string &child) const { return {source, key.empty() ? child : key + "." + child}; }
    JsonPlace at(size_t index) const { return {source, key + "[" + std::to_string(index) + "]"}; }
    // "tokenizer.json: pre_tokenizer.pattern", or the source alone.
    std::string operator()() const { return key.empty() ? source : source + ": " + key; }
    // "<source>: key '<key>' <problem>", or "<source>: the file <problem>" at the top level.
    [[noreturn]] void fail(const std::string &problem) const;
};

// A value of the expected type, or atlas::Error "<source>: key '<key>' must be …, is <value as written>".
std::string jsonString(const nlohmann::json &value, const JsonPlace &place);
bool jsonBool(const nlohmann::json &value, const JsonPlace &place);
// An integer in [minimum, maximum], checked before it is converted: 1.5, 1e30, "3" and 2^64 are refused.
int64_t jsonInteger(const nlohmann::json &value, const JsonPlace &place, int64_t minimum, int64_t maximum);
// A finite number in [minimum, maximum].
double jsonNumber(const nlohmann::json &value, const JsonPlace &place, double minimum, double maximum);

// `object[key]`: atlas::Error when `object` is not an object or has no such key.
const nlohmann::json &jsonMember(const nlohmann::json &object, const std::string &key, const JsonPlace &place);
// `object[key]`, or nullptr when it is absent or null (a key whose value falls back to a default).
const nlohmann::json *optionalJsonMember(const nlohmann::json &object, const std::string &key);

// The typed readers of a member: `object[key]` must exist; with a fallback, an absent or null key gives it.
int64_t jsonInteger(
    const nlohmann::json &object, const std::string &key, int64_t minimum, int64_t maximum, const std::string &source);
double jsonNumber(
    const nlohmann::json &object, const std::string &key, double minimum, double maximum, const std::string &source);
std::string jsonString(const nlohmann::json &object, const std::string &key, const std::string &source);
std::string jsonString(const nlohmann::json &object, const std::string &key, const JsonPlace &place);
int64_t jsonInteger(const nlohmann::json &object, const std::string &key, const JsonPlace &place, int64_t minimum,
    int64_t maximum, int64_t fallback);
std::string jsonString(
    const nlohmann::json &object, const std::string &key, const JsonPlace &place, const std::string &fallback);
bool jsonBool(const nlohmann::json &object, const std::string &key, const JsonPlace &place, bool fallback);

// nlohmann's message without its "[json.exception.type_error.302] " prefix, which means nothing to a user.
std::string jsonReason(const std::exception &e);

} // namespace atlas
