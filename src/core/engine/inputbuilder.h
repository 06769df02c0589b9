#pragma once

#include "engine/input.h"

#include <string>
#include <vector>

namespace atlas {

class Tokenizer;

// The engine input for a model from either explicit ids or text (encoded with the model's tokenizer),
// plus padding positions. Throws atlas::Error when the text cannot be encoded.
Input makeInput(const Tokenizer &tokenizer, const std::string &text, const std::vector<int> &tokens,
    const std::vector<int> &padding);

// A model's input text read from a file (the app's File ▸ Open Text File, the CLI's --text-file): UTF-8, a leading
// byte-order mark dropped, at most limits::kInputTextBytes. Throws atlas::Error naming the file and the problem (not a
// regular file, too large, a malformed byte and where).
std::string readInputText(const std::string &path);

// An encoder–decoder's decoder input from explicit ids (as given) or text: the text's tokens without the tokenizer's
// post-processing (no </s> after it), after `startToken` when the model has one (T5's decoder_start_token_id: the
// decoder reads the target shifted right). Throws atlas::Error when the text cannot be encoded.
std::vector<int> decoderInput(
    const Tokenizer &tokenizer, const std::string &text, const std::vector<int> &tokens, int startToken);

// What the app's input boxes hold (Input, Decoder, Patching's Corrupted): text, or token ids written after '#' with
// commas or spaces ("#464,3290,318"). A box that starts with '#' and holds anything but ids is text ("#hashtag");
// "##" starts a text with a single '#' ("##12" is the text "#12").
struct BoxInput
{
    std::string text;
    std::vector<int> tokens; // not empty: the box gave ids
};
// Throws atlas::Error naming the bad item of an id list ("#12,,3").
BoxInput readBoxInput(const std::string &box);
// The box's text for an input: "#464,3290,318" for explicit ids, else the text with a leading '#' doubled.
std::string boxInputText(const std::string &text, const std::vector<int> &tokens);
// The box's tokens for `tokenizer`: its ids, or its text encoded with the model's special tokens. A model without a
// tokenizer says so in the box's own syntax: "… type token ids after '#', as #0,1,2".
std::vector<int> boxTokens(const Tokenizer &tokenizer, const BoxInput &box);
// An encoder–decoder's Decoder box: its ids as given, or its text as decoderInput reads it.
std::vector<int> boxDecoderTokens(const Tokenizer &tokenizer, const BoxInput &box, int startToken);

// Input::attention for a model of `layerCount` layers: `spec` in the listed layers (every layer when `layers` is
// empty), exact attention in the others; empty when spec is full attention. Throws atlas::Error for a layer
// outside the model or listed twice.
std::vector<attention::AttentionKernelSpec> attentionPerLayer(
    const attention::AttentionKernelSpec &spec, const std::vector<int> &layers, int layerCount);

} // namespace atlas
