#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Trace names (docs/trace-names.md) are built here and nowhere else: the program that writes the trace, the
// backward pass, the analyses, `dump` and the views all ask this module, so a name cannot drift between them.
namespace atlas::names {

// A stack of blocks and where its names live. A decoder-only or encoder-only model has one stack, named as below
// without a prefix. An encoder–decoder has two: the encoder's tensors start "enc." and its parameters
// "encoder.", the decoder's tensors start "dec." and its parameters are GPT-2's (docs/trace-names.md).
struct Stack
{
    std::string_view trace; // "", "enc." or "dec."
    std::string_view parameters; // "" or "encoder."
    bool operator==(const Stack &) const = default;
};
inline constexpr Stack kOnlyStack {"", ""}, kEncoderStack {"enc.", "encoder."}, kDecoderStack {"dec.", ""};

// One attention of a block: self-attention ("attn.") in any stack, or a decoder block's cross-attention ("cross.",
// decoder queries × source keys).
struct AttentionSite
{
    Stack stack = kOnlyStack;
    bool cross = false;
    bool operator==(const AttentionSite &) const = default;
};
// attentionTensor({kDecoderStack, true}, 1, "probs") == "dec.layer.1.cross.probs"; ({}, 0, "probs"):
// "layer.0.attn.probs".
std::string attentionTensor(const AttentionSite &site, int layer, std::string_view what);
// Every attention of a model with `layers` blocks, after `encoderLayers` encoder blocks when it has an encoder
// stack (encoder–decoder): the site and its block count. One stack: {{{}, layers}}.
std::vector<std::pair<AttentionSite, int>> attentionSites(int layers, int encoderLayers);

// `name` inside stack `s`: stackTensor(kEncoderStack, "input") == "enc.input".
std::string stackTensor(const Stack &s, std::string_view name);
// The encoder's output, which every decoder block's cross-attention reads: "enc.ln_f".
std::string encoderOutput();

// "layer.{layer}." — the prefix of every tensor of block `layer`.
std::string layerPrefix(int layer);
// "layer.{layer}.{suffix}", e.g. layerTensor(0, "attn.probs") == "layer.0.attn.probs".
std::string layerTensor(int layer, std::string_view suffix);
// The block of a "layer.{i}.…" name and the part after its prefix; false for a name outside the blocks.
bool splitLayerTensor(std::string_view name, int *layer, std::string *suffix);

// The same inside a stack: "enc.layer.0.", "dec.layer.1.attn.probs" …
std::string layerPrefix(const Stack &s, int layer);
std::string layerTensor(const Stack &s, int layer, std::string_view suffix);
// The stack and block of a "[enc.|dec.]layer.{i}.…" name and the part after its prefix; false outside the blocks.
bool splitStackTensor(std::string_view name, Stack *stack, int *layer, std::string *suffix);

// The residual stream entering block `layer`: "input" for block 0, else "layer.{layer-1}.out" (layer = L names the
// last block's output).
std::string residualStream(int layer);
std::string residualStream(const Stack &s, int layer); // "enc.input", "dec.layer.0.out" …
// Stream `stream` (1 or 2) entering block `layer` of a reversible model: "input" for block 0 (both streams start
// as the embedding), else "layer.{layer-1}.out1" / "layer.{layer-1}.out2".
std::string reversibleStream(int layer, int stream);
// A reversible model's two streams averaged after the last block, the input of ln_f: "stream_mean".
std::string streamMean();
// Adaptive computation time's tensors after the last block (ModelConfig::act): haltingTensor("out") == "act.out", the
// halting's mixture of the blocks' outputs that ln_f reads; "halting", "weights", "steps", "ponder".
std::string haltingTensor(std::string_view part);

// The queries and keys block `layer`'s scores use: "layer.{layer}.attn.q_rot" / "k_rot" when RoPE rotated them,
// else "attn.q" / "attn.k".
std::string queriesOf(int layer, bool rotated);
std::string keysOf(int layer, bool rotated);
std::string queriesOf(const Stack &s, int layer, bool rotated);
std::string keysOf(const Stack &s, int layer, bool rotated);
// The same in a model with QK-norm (`normed`): a layer that does not rotate (SmolLM3's NoPE layers) scores
// "attn.q_norm" / "k_norm", QK-norm's output as it is.
std::string queriesOf(const Stack &s, int layer, bool rotated, bool normed);
std::string keysOf(const Stack &s, int layer, bool rotated, bool normed);

// "h.{layer}." — the prefix of block `layer`'s parameters in model.safetensors (Hugging Face GPT-2 layout).
std::string parameterPrefix(int layer);
std::string parameterPrefix(const Stack &s, int layer); // "encoder.h.0." for the encoder of an encoder–decoder
// "h.{layer}.mlp.experts.{expert}." — the prefix of one expert's parameters in a mixture-of-experts layer.
std::string expertPrefix(int layer, int expert);
// "grad.{parameter}", the trace name `dump --grads` gives a parameter's gradient.
std::string gradientOf(std::string_view parameter);

} // namespace atlas::names
