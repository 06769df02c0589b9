#include "engine/inputbuilder.h"

#include "io/atomicfile.h"
#include "io/limits.h"
#include "tokenize/tokenizer.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <algorithm>

namespace atlas {

Input makeInput(const Tokenizer &tokenizer, const std::string &text, const std::vector<int> &tokens,
    const std::vector<int> &padding)
{
    Input input;
    input.tokens = tokens.empty() ? tokenizer.encodeWithSpecialTokens(text) : tokens;
    input.padding = padding;
    return input;
}

BoxInput readBoxInput(const std::string &box)
{
    if (box.starts_with("##"))
        return {box.substr(1), {}};
    if (!box.starts_with('#') || box.find_first_not_of("0123456789, \t\n", 1) != std::string::npos)
        return {box, {}};
    std::vector<int> ids = parseTokenList(box.substr(1));
    if (ids.empty())
        throw Error("'#' starts token ids, as #464,3290,318, and none follow it (a text that starts with '#' is "
                    "written ##)");
    return {{}, std::move(ids)};
}

std::string boxInputText(const std::string &text, const std::vector<int> &tokens)
{
    if (tokens.empty())
        return text.starts_with('#') ? "#" + text : text;
    std::string box = "#";
    for (size_t i = 0; i < tokens.size(); ++i)
        box.append(i ? "," : "").append(std::to_string(tokens[i]));
    return box;
}

namespace {

void requireTextTokenizer(const Tokenizer &tokenizer)
{
    if (!tokenizer.canEncode())
        throw Error(
            "This model reads token ids only (" + tokenizer.noTextReason() + "): type ids after '#', as #0,1,2");
}

} // namespace

std::vector<int> boxTokens(const Tokenizer &tokenizer, const BoxInput &box)
{
    if (!box.tokens.empty())
        return box.tokens;
    requireTextTokenizer(tokenizer);
    return tokenizer.encodeWithSpecialTokens(box.text);
}

std::vector<int> boxDecoderTokens(const Tokenizer &tokenizer, const BoxInput &box, int startToken)
{
    if (box.tokens.empty())
        requireTextTokenizer(tokenizer);
    return decoderInput(tokenizer, box.text, box.tokens, startToken);
}

std::string readInputText(const std::string &path)
{
    std::string text = readFile(path, limits::kInputTextBytes);
    if (text.starts_with("\xEF\xBB\xBF"))
        text.erase(0, 3);
    if (const size_t bad = unicode::firstInvalidUtf8(text); bad != std::string::npos) {
        const size_t line = 1 + size_t(std::count(text.begin(), text.begin() + long(bad), '\n'));
        throw Error(path + ": not UTF-8 text: a malformed byte at offset " + std::to_string(bad) + " (line "
            + std::to_string(line) + "); save it as UTF-8");
    }
    if (text.empty())
        throw Error(path + ": the file is empty: an input needs at least one token");
    return text;
}

std::vector<int> decoderInput(
    const Tokenizer &tokenizer, const std::string &text, const std::vector<int> &tokens, int startToken)
{
    if (!tokens.empty())
        return tokens;
    if (startToken < 0)
        return tokenizer.encodeWithSpecialTokens(text);
    std::vector<int> ids = {startToken};
    for (const int id : tokenizer.encode(text))
        ids.push_back(id);
    return ids;
}

std::vector<attention::AttentionKernelSpec> attentionPerLayer(
    const attention::AttentionKernelSpec &spec, const std::vector<int> &layers, int layerCount)
{
    if (attention::isExactAttention(spec))
        return {};
    if (layers.empty())
        return {spec};
    std::vector<attention::AttentionKernelSpec> perLayer(static_cast<size_t>(layerCount)); // default: full
    std::vector<bool> listed(size_t(layerCount), false);
    for (int layer : layers) {
        if (layer < 0 || layer >= layerCount)
            throw Error("attention layers: layer " + std::to_string(layer) + " is not in the model (layers 0 to "
                + std::to_string(layerCount - 1) + ")");
        if (listed[size_t(layer)])
            throw Error("attention layers: layer " + std::to_string(layer) + " is listed twice");
        listed[size_t(layer)] = true;
        perLayer[size_t(layer)] = spec;
    }
    return perLayer;
}

} // namespace atlas
