#include "view/viewspec.h"

#include "attention/attentionkernel.h"
#include "engine/headablation.h"
#include "engine/tokenretention.h"
#include "io/limits.h"
#include "util/error.h"
#include "view/corruptionkeys.h"
#include "view/viewkinds.h"

#include <algorithm>
#include <climits>
#include <string>

// The view spec's keys, each described once: the parser, the JSON writer, docs/view-spec.md's table and the lesson
// checks read this table (view/viewspec.cpp reads and writes with it).
namespace atlas {

namespace {

// "`attention` (one head's attention weights as a heat map), `heads` (…), …": every kind with its descriptor's
// summary, in the app's order.
std::string viewKeyMeaning()
{
    std::string meaning;
    for (const ViewKind &k : viewKinds())
        meaning.append(meaning.empty() ? "" : ", ").append("`" + k.kind + "` (" + k.summary + ")");
    return meaning;
}

// The OwnKey's name of a view's own key; "" for a field of ViewSpec.
std::string ownKeyName(const SpecKey::Field &field)
{
    return std::visit(
        [](const auto &f) -> std::string {
            if constexpr (requires { f.name; })
                return f.name;
            else
                return {};
        },
        field);
}

// Whether `kind`'s descriptor names `key` as a key it reads.
bool namesKey(const ViewKind &kind, const std::string &key)
{
    const auto names
        = [&](const std::vector<std::string> &keys) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
    return names(kind.analysisKeys) || names(kind.alsoReads);
}

// The shared keys, each some views read given the views whose descriptors name it, then every view's own, read by
// that view alone and named by its OwnKey.
std::vector<SpecKey> withViewKeys(std::vector<SpecKey> keys)
{
    for (SpecKey &key : keys) {
        if (const std::string own = ownKeyName(key.field); !own.empty() && own != key.name)
            throw Error("the shared key \"" + key.name + "\" reads the OwnKey \"" + own + "\"");
        if (!key.someViews)
            continue;
        for (const ViewKind &kind : viewKinds())
            if (namesKey(kind, key.name))
                key.views.push_back(kind.kind);
        if (key.views.empty())
            throw Error("the shared key \"" + key.name + "\" is read by some views, and no view's descriptor names it");
    }
    for (const ViewKind &kind : viewKinds())
        for (const std::string &name : kind.alsoReads) {
            const auto shared
                = std::find_if(keys.begin(), keys.end(), [&](const SpecKey &k) { return k.name == name; });
            if (shared == keys.end() || !shared->someViews)
                throw Error("the " + kind.kind + " view's alsoReads names \"" + name
                    + "\", which is not a shared key some views read");
        }
    for (const ViewKind &kind : viewKinds())
        for (SpecKey key : kind.keys) {
            key.name = ownKeyName(key.field);
            if (key.name.empty())
                throw Error("the " + kind.kind + " view lists a key of ViewSpec's own as its key: a view's keys are "
                    + "OwnKeys declared in its folder");
            key.views = {kind.kind};
            keys.push_back(std::move(key));
        }
    return keys;
}

} // namespace

const std::vector<SpecKey> &specKeys()
{
    static const std::vector<SpecKey> keys = withViewKeys({
        {.name = "view",
            .field = &ViewSpec::view,
            .type = "string",
            .meaning = viewKeyMeaning(),
            .choices = ViewSpec::viewKinds()},
        {.name = "model",
            .field = &ViewSpec::model,
            .type = "string",
            .meaning = "a built-in model (`transformer-atlas models`) or a model directory"},
        {.name = "text",
            .field = &ViewSpec::text,
            .type = "string",
            .meaning = "the input, encoded with the model's tokenizer"},
        {.name = "tokens",
            .field = &ViewSpec::tokens,
            .type = "array of ints",
            .meaning = "explicit token ids; when not empty they replace `text`"},
        {.name = "padding",
            .field = &ViewSpec::padding,
            .type = "array of ints",
            .meaning = "positions treated as padding: no query attends to them"},
        {.name = "decoder_text",
            .field = &ViewSpec::decoderText,
            .type = "string",
            .meaning = "an encoder–decoder's decoder input (`text`, `tokens` and `padding` are then its source, as "
                       "`dump --text … --decoder-text …`); empty with the model's sample `text` = its sample decoder "
                       "input; given for a one-stack model, an error"},
        {.name = "decoder_tokens",
            .field = &ViewSpec::decoderTokens,
            .type = "array of ints",
            .meaning = "the same as token ids; when not empty they replace `decoder_text`"},
        {.name = "site",
            .field = &ViewSpec::site,
            .type = "string",
            .meaning
            = "which attention the `attention`, `heads`, `lines`, `mask`, `neuron`, `positions` and "
              "`rollout` views show: `self` (a one-stack model's, or an encoder–decoder's decoder "
              "self-attention, `dec.layer.{i}.attn.*`), `encoder` (the encoder's bidirectional self-attention, "
              "`enc.layer.{i}.attn.*`) or `cross` (the decoder's cross-attention `dec.layer.{i}.cross.*`: "
              "decoder tokens down the rows, source tokens across; in the lines view the decoder on the left, "
              "the source on the right; in the neuron view a decoder query and a source key; in the positions "
              "view `encoder` and `self` choose the stack whose positions are drawn, and `cross`, which has "
              "none of its own, is refused); in the `quantization` view `encoder` chooses the encoder's "
              "blocks, `self` and `cross` the decoder's with their cross-attention. `layer` counts the blocks "
              "of that stack. `encoder` or `cross` on a one-stack model is an error naming the key. An "
              "encoder–decoder's other views: `tensor`, `next-token`, `architecture`, `objective`, "
              "`tokenizer`, `logit-lens`, `logit-attribution`, `head-kinds` and the four memory views show "
              "it; the rest (the efficient-attention kernels, experts, training …) say they show one-stack "
              "models and name the views that show it",
            .choices = {"self", "encoder", "cross"}},
        {.name = "layer", .field = &ViewSpec::layer, .type = "int ≥ 0", .meaning = "layer shown"},
        {.name = "head",
            .field = &ViewSpec::head,
            .type = "int ≥ −1",
            .meaning = "head shown; −1 = every head of the layer (lines view)",
            .minimum = -1,
            .rule = ">= 0, or -1 for every head"},
        {.name = "tensor",
            .field = &ViewSpec::tensor,
            .type = "string",
            .someViews = true,
            .meaning = "trace name for the tensor view, e.g. `layer.0.attn.q` (see trace-names.md)"},
        {.name = "scale",
            .field = &ViewSpec::scale,
            .type = "string",
            .someViews = true,
            .meaning = "colour scale of heat maps: `linear` or `log`",
            .choices = {"linear", "log"}},
        {.name = "colormap",
            .field = &ViewSpec::colormap,
            .type = "string",
            .meaning = "`viridis`, `magma`, `cividis` or `greys` (perceptually uniform)",
            .choices = {"viridis", "magma", "cividis", "greys"}},
        {.name = "top_k",
            .field = &ViewSpec::topK,
            .type = "int ≥ 1",
            .someViews = true,
            .meaning = "bars in the next-token view; the choices the fills view lists at each hidden position",
            .minimum = 1,
            .rule = ">= 1",
            .ownedByView = true},
        {.name = "position",
            .field = &ViewSpec::position,
            .type = "int",
            .someViews = true,
            .meaning = "query position of the next-token view, the position whose sources the rollout view's bars "
                       "show, the position whose output the patching and circuit views' metric reads, the "
                       "position whose logit the logit-attribution view splits, and the token whose strongest "
                       "features the features view lists; −1 = the last token",
            .minimum = -1,
            .rule = ">= 0, or -1 for the last token"},
        {.name = "theme",
            .field = &ViewSpec::theme,
            .type = "string",
            .meaning = "`light` or `dark`",
            .choices = {"light", "dark"}},
        {.name = "attention",
            .field = &ViewSpec::attention,
            .type = "string",
            .meaning = "the attention kernel the model runs: `full`, `lsh`, `bigbird`, `longformer`, `strided`, "
                       "`fixed`, `swin`, `linformer`, `performer`",
            .choices = attention::attentionKernelKinds()},
        {.name = "attention_params",
            .field = &ViewSpec::attentionParams,
            .type = "array of strings",
            .meaning = "its parameters as `\"key=value\"` (e.g. `\"window=4\"`; keys and defaults in "
                       "`src/core/attention/attentionkernel.h`)"},
        {.name = "attention_layers",
            .field = &ViewSpec::attentionLayers,
            .type = "array of ints",
            .meaning = "the layers that run it, the others running full attention; empty = every layer"},
        {.name = "op",
            .field = &ViewSpec::op,
            .type = "string",
            .meaning = "the stepper's position: the model runs up to and including this operation (`ln_f`), or the one "
                       "that writes this tensor (`layer.0.attn.probs`); `\"\"` = the end (docs/trace-names.md lists "
                       "them)"},
        {.name = "query",
            .field = &ViewSpec::query,
            .type = "int",
            .someViews = true,
            .meaning = "a query row the Attention view outlines (a lesson's predict question sets it on Reveal); −1 = "
                       "none; the neuron view's query and the RNN vs attention view's row i (−1: the last token)",
            .minimum = -1,
            .rule = ">= 0, or -1 for none"},
        {.name = "checkpoint_every",
            .field = &ViewSpec::checkpointEvery,
            .type = "int ≥ 0",
            .someViews = true,
            .meaning = "memory views: gradient checkpointing keeps every k-th block boundary, 1 … L; 0 = ⌈√L⌉",
            .rule = ">= 1, or 0 for the square root of the depth",
            .ownedByView = true},
        {.name = "ffn_chunks",
            .field = &ViewSpec::ffnChunks,
            .type = "int ≥ 1",
            .someViews = true,
            .meaning
            = "memory views: the feed-forward sub-layers run over the sequence in this many chunks (at most T)",
            .minimum = 1,
            .rule = ">= 1",
            .ownedByView = true},
        {.name = "cursor",
            .field = &ViewSpec::cursor,
            .type = "int ≥ −1",
            .someViews = true,
            .meaning = "memory timeline and computation graph: the op of the training step singled out (the scrub "
                       "position); −1 = none",
            .minimum = -1,
            .rule = ">= 0, or -1 for none"},
        {.name = "depth",
            .field = &ViewSpec::depth,
            .type = "int 0 … 64",
            .someViews = true,
            .meaning = "memory-depth (the deepest of depths 1, 2, 4 …), memory-tradeoff and inversion-error: models of "
                       "the model's shape with random weights at this depth; 0 = the model's own depth "
                       "(inversion-error: the model's own weights, which must be reversible). steps: a shared block "
                       "applied 1 … this many times; 0 = twice the count the model was trained with",
            .rule = ">= 0, or 0 for the model's own depth",
            .check =
                [](const ViewSpec &s) {
                    return s.depth > ViewSpec::kMaxDepth
                        ? "at most " + std::to_string(ViewSpec::kMaxDepth) + " blocks (a sweep trains every depth)"
                        : std::string();
                },
            .ownedByView = true},
        {.name = "positions",
            .field = &ViewSpec::positions,
            .type = "string",
            .meaning
            = "run the model's weights with another positional encoding that needs no parameters: "
              "`sinusoidal`, `rope`, `rope-half`, `alibi` or `none` (as `dump --positions`); `\"\"` = its own. "
              "The Positions view's \"Run the model with\" box sets it; every view then shows the same weights "
              "under that encoding",
            .choices = {"", "sinusoidal", "rope", "rope-half", "alibi", "none"}},
        {.name = "objective",
            .field = &ViewSpec::objective,
            .type = "string",
            .someViews = true,
            .meaning = "objective view: the pretraining objective applied to the input, `next` (GPT), `mlm` (BERT's "
                       "masked LM), `span` (T5's span corruption), `prefix` (the prefix LM) or `nsp` (BERT's "
                       "next-sentence prediction); `\"\"` = the model's own (`mlm` for a model of task mlm such as "
                       "`austen-mlm`, else `next`). Fills view: `mlm` corrupts the input from `seed` and fills every "
                       "chosen position; `\"\"` fills the `[MASK]`s the input holds; another objective is an error "
                       "naming the key",
            .choices = {"", "next", "mlm", "span", "prefix", "nsp"}},
        {.name = "seed",
            .field = &ViewSpec::seed,
            .type = "int ≥ 0",
            .someViews = true,
            .meaning = "objective and fills views: the draw of the masked LM's choices and replacements, of the spans, "
                       "of the prefix length, or of the sentence pair (`dump --objective … --seed` draws the same); "
                       "patching and circuit views: the draw of the noise at `noise_positions`"},
        {.name = "corrupted_text",
            .field = corruptionkeys::kCorruptedText,
            .type = "string",
            .someViews = true,
            .meaning = "patching and circuit views: the corrupted input, read as the Input box reads it (text the "
                       "model's tokenizer reads, or token ids as `#464,3290`) into as many tokens as the input; `\"\"` "
                       "= the input with noise at `noise_positions`",
            .perModel = true},
        {.name = "noise_positions",
            .field = corruptionkeys::kNoisePositions,
            .type = "array of ints",
            .someViews = true,
            .meaning = "patching and circuit views, without `corrupted_text`: the positions whose embedding gets "
                       "Gaussian noise of 3 × the embedding matrix's standard deviation (Meng et al. 2022), drawn from "
                       "`seed`",
            .perModel = true},
        {.name = "contrast",
            .field = corruptionkeys::kContrast,
            .type = "string",
            .someViews = true,
            .meaning = "patching and circuit views: the metric is logit(`target`) − logit(`contrast`) at `position`, a "
                       "token written as `target` is; `\"\"` = the probability of `target`",
            .ownedByView = true,
            .perModel = true},
        {.name = "target",
            .field = &ViewSpec::target,
            .type = "string",
            .someViews = true,
            .meaning
            = "logit lens: a token whose probability and rank each cell reports and whose probability colours "
              "the grid; logit attribution: the token whose logit is split; patching and circuit: the token "
              "the metric reads (needed there). `#id`, or a text the model's tokenizer reads as exactly one token "
              "(`\" the\"`); `\"\"` = none (the lens then colours by each cell's most probable token, the "
              "attribution splits the most probable token's logit)",
            .ownedByView = true,
            .perModel = true},
        {.name = "baseline_model",
            .field = &ViewSpec::baselineModel,
            .type = "string",
            .someViews = true,
            .meaning
            = "LayerDrop, Token reduction, Lost in the middle, Funnel, Sinkhorn, Gradients by depth, Steps and "
              "Position "
              "loss views: a second model (a built-in name or a directory) whose sweep, gradients or loss are "
              "drawn beside `model`'s, e.g. "
              "`austen-6`, trained as `austen-layerdrop` without LayerDrop, `austen-mlm` beside `austen-mlm-power`, "
              "`austen-mlm-funnel` or `austen-mlm-sinkhorn`, the post-LN `austen-bert` beside the pre-LN "
              "`austen-mlm`, `austen-shared` (no halting) beside `austen-ut`, or `austen` (128 characters) beside "
              "`austen-long` (1024); `\"\"` = `model`'s alone",
            .ownedByView = true,
            .perModel = true},
        {.name = "compare",
            .field = &ViewSpec::compare,
            .type = "string",
            .meaning = "two runs side by side: `\"\"` = one run; `side` draws the view for this spec's run (A) and, "
                       "beside it, for a run B that differs by `compare_model`, `compare_text` or "
                       "`compare_attention` (layer, head and position are shared); `difference` draws A − B on a "
                       "diverging scale (attention view, equal shapes); `heads` compares every head (how far B's "
                       "attention is from A's) and the next-token distributions (KL, top token), for two runs of one "
                       "length and one model shape (a GGUF file against its quantized copy)",
            .choices = {"", "side", "difference", "heads"}},
        {.name = "compare_model",
            .field = &ViewSpec::compareModel,
            .type = "string",
            .meaning = "run B's model (a built-in name or a directory); `\"\"` = A's"},
        {.name = "compare_text",
            .field = &ViewSpec::compareText,
            .type = "string",
            .meaning = "run B's input text (an encoder-decoder's source), replacing A's text or tokens; `\"\"` = A's"},
        {.name = "compare_attention",
            .field = &ViewSpec::compareAttention,
            .type = "string",
            .meaning = "run B's attention kernel, run by A's `attention_layers`; `\"\"` = A's",
            .choices =
                [] {
                    std::vector<std::string> kinds = attention::attentionKernelKinds();
                    kinds.insert(kinds.begin(), "");
                    return kinds;
                }()},
        {.name = "compare_attention_params",
            .field = &ViewSpec::compareAttentionParams,
            .type = "array of strings",
            .meaning = "the parameters of `compare_attention`, as `attention_params`"},
    });
    return keys;
}

} // namespace atlas
