#include "view/viewspec.h"

#include "attention/attentionkernel.h"
#include "engine/headablation.h"
#include "engine/tokenretention.h"
#include "io/limits.h"
#include "util/error.h"
#include "view/viewkinds.h"

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

} // namespace

const std::vector<SpecKey> &specKeys()
{
    static const std::vector<SpecKey> keys = {
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
            .meaning = "which attention the `attention`, `heads`, `lines`, `mask`, `neuron` and `positions` views "
                       "show: `self` (a one-stack model's, or an encoder–decoder's decoder self-attention, "
                       "`dec.layer.{i}.attn.*`), `encoder` (the encoder's bidirectional self-attention, "
                       "`enc.layer.{i}.attn.*`) or `cross` (the decoder's cross-attention `dec.layer.{i}.cross.*`: "
                       "decoder tokens down the rows, source tokens across; in the lines view the decoder on the left, "
                       "the source on the right; in the neuron view a decoder query and a source key; in the positions "
                       "view `encoder` and `self` choose the stack whose positions are drawn, and `cross`, which has "
                       "none of its own, is refused). `layer` counts the blocks of that stack. `encoder` or `cross` on "
                       "a one-stack model is an error naming the key. An encoder–decoder's other views: `tensor`, "
                       "`next-token`, `architecture`, `objective`, `tokenizer`, `logit-lens`, `rollout` and "
                       "`memory-timeline` show it; the rest (kernels, the computation graph, the memory sweeps …) say "
                       "they show one-stack models",
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
            .views = {"tensor"},
            .meaning = "trace name for the tensor view, e.g. `layer.0.attn.q` (see trace-names.md)"},
        {.name = "scale",
            .field = &ViewSpec::scale,
            .type = "string",
            .views
            = {"attention", "heads", "mask", "tensor", "kernels", "lsh", "approximation", "rollout", "logit-lens"},
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
            .views = {"next-token", "fills"},
            .meaning = "bars in the next-token view; the choices the fills view lists at each hidden position",
            .minimum = 1,
            .rule = ">= 1",
            .ownedByView = true},
        {.name = "position",
            .field = &ViewSpec::position,
            .type = "int",
            .views = {"next-token", "lines", "rollout", "patching", "ablation"},
            .meaning = "query position of the next-token view, the position whose sources the rollout view's bars "
                       "show, and the position whose output the patching view's metric reads; −1 = the last token",
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
        {.name = "hidden_heads",
            .field = &ViewSpec::hiddenHeads,
            .type = "array of ints",
            .views = {"lines"},
            .meaning = "lines view with every head (`head` −1): the heads switched off, each toggled by clicking its "
                       "swatch (BertViz's head view)",
            .ownedByView = true,
            .perModel = true},
        {.name = "thumbnail_size",
            .field = &ViewSpec::thumbnailSize,
            .type = "int, 0 or 48 … 1024",
            .views = {"heads"},
            .meaning = "heads view: each thumbnail's side in pixels, the view scrolling when the grid is larger than "
                       "the window (the view's \"Thumbnails\" box); 0 = fit the view. Once every token gets a row tall "
                       "enough for text, each thumbnail is labelled with its query tokens (left) and key tokens (top)",
            .check =
                [](const ViewSpec &s) {
                    return s.thumbnailSize != 0
                            && (s.thumbnailSize < ViewSpec::kMinThumbnail || s.thumbnailSize > ViewSpec::kMaxThumbnail)
                        ? "0 (fit the view) or " + std::to_string(ViewSpec::kMinThumbnail) + " \u2026 "
                            + std::to_string(ViewSpec::kMaxThumbnail) + " pixels"
                        : std::string();
                },
            .ownedByView = true},
        {.name = "key",
            .field = &ViewSpec::key,
            .type = "int ≥ −1",
            .views = {"neuron"},
            .meaning = "neuron view: the key of the pair; −1 = the key the query weights most",
            .minimum = -1,
            .rule = ">= 0, or -1 for the most weighted"},
        {.name = "ablate_heads",
            .field = &ViewSpec::ablateHeads,
            .type = "string",
            .views = {"ablation"},
            .meaning
            = "ablation view: the heads switched off as `layer.head`, comma-separated (`\"0.1,1.3\"`, as `dump "
              "--ablate-heads`); a head the model lacks is named in the view",
            .check =
                [](const ViewSpec &s) {
                    try { // the form here; whether each head exists, against the model that runs
                        parseHeadList(s.ablateHeads, 1 << 20, 1 << 20, "heads");
                    } catch (const Error &e) {
                        return std::string(e.what()).substr(7); // after "heads: "
                    }
                    return std::string();
                },
            .ownedByView = true,
            .perModel = true},
        {.name = "ablation",
            .field = &ViewSpec::ablation,
            .type = "string",
            .views = {"ablation"},
            .meaning
            = "ablation view: `zero` (a head's context C_h is replaced by 0 in the merge, Michel et al.'s head "
              "pruning) or `mean` (by its mean over held-out examples of the model's task, or over the input "
              "for a model without one)",
            .choices = {"zero", "mean"},
            .ownedByView = true},
        {.name = "approximation",
            .field = &ViewSpec::approximation,
            .type = "string",
            .views = {"approximation"},
            .meaning = "approximation view: `linformer` or `performer`",
            .choices = {"linformer", "performer"},
            .ownedByView = true},
        {.name = "approximation_value",
            .field = &ViewSpec::approximationValue,
            .type = "int ≥ 0",
            .views = {"approximation"},
            .meaning = "approximation view: the k (Linformer) or number of features (Performer) drawn, the nearest "
                       "swept one; 0 = the middle of the sweep",
            .rule = ">= 1, or 0 for the middle of the sweep",
            .ownedByView = true},
        {.name = "op",
            .field = &ViewSpec::op,
            .type = "string",
            .meaning = "the stepper's position: the model runs up to and including this operation (`ln_f`), or the one "
                       "that writes this tensor (`layer.0.attn.probs`); `\"\"` = the end (docs/trace-names.md lists "
                       "them)"},
        {.name = "query",
            .field = &ViewSpec::query,
            .type = "int",
            .views = {"attention", "neuron", "scaling", "positions"},
            .meaning = "a query row the Attention view outlines (a lesson's predict question sets it on Reveal); −1 = "
                       "none; the neuron view's query (−1: the last token)",
            .minimum = -1,
            .rule = ">= 0, or -1 for none"},
        {.name = "veil_query",
            .field = &ViewSpec::veilQuery,
            .type = "bool",
            .views = {"attention"},
            .meaning = "attention view: row `query` is covered (\"hidden until Reveal\") and its hover says nothing of "
                       "its weights. A lesson step with a predict question opens with it on, so the heat map does not "
                       "give the answer away; Reveal turns it off"},
        {.name = "temperature",
            .field = &ViewSpec::temperature,
            .type = "number, 0 < T ≤ 100",
            .views = {"next-token"},
            .meaning = "the next-token view's bars are softmax(z / T), computed from the traced `next_probs` = "
                       "softmax(z) as p^(1/T) / Σ p^(1/T): below 1 sharpens, above 1 flattens; what sampling at that "
                       "temperature draws from",
            .maximum = 100,
            .ownedByView = true},
        {.name = "checkpoint_every",
            .field = &ViewSpec::checkpointEvery,
            .type = "int ≥ 0",
            .views = {"memory-timeline", "memory-graph"},
            .meaning = "memory views: gradient checkpointing keeps every k-th block boundary, 1 … L; 0 = ⌈√L⌉",
            .rule = ">= 1, or 0 for the square root of the depth",
            .ownedByView = true},
        {.name = "ffn_chunks",
            .field = &ViewSpec::ffnChunks,
            .type = "int ≥ 1",
            .views = {"memory-timeline", "memory-graph", "memory-depth", "memory-tradeoff"},
            .meaning
            = "memory views: the feed-forward sub-layers run over the sequence in this many chunks (at most T)",
            .minimum = 1,
            .rule = ">= 1",
            .ownedByView = true},
        {.name = "memory_scope",
            .field = &ViewSpec::memoryScope,
            .type = "string",
            .views = {"memory-timeline"},
            .meaning = "memory timeline: `all` (every category stacked) or `activations` (stored, recomputed and "
                       "workspace only: the part the strategies change)",
            .choices = {"all", "activations"},
            .ownedByView = true},
        {.name = "cursor",
            .field = &ViewSpec::cursor,
            .type = "int ≥ −1",
            .views = {"memory-timeline", "memory-graph"},
            .meaning = "memory timeline and computation graph: the op of the training step singled out (the scrub "
                       "position); −1 = none",
            .minimum = -1,
            .rule = ">= 0, or -1 for none"},
        {.name = "depth",
            .field = &ViewSpec::depth,
            .type = "int 0 … 64",
            .views = {"memory-depth", "memory-tradeoff", "inversion-error"},
            .meaning = "memory-depth (the deepest of depths 1, 2, 4 …), memory-tradeoff and inversion-error: models of "
                       "the model's shape with random weights at this depth; 0 = the model's own depth "
                       "(inversion-error: the model's own weights, which must be reversible)",
            .rule = ">= 0, or 0 for the model's own depth",
            .check =
                [](const ViewSpec &s) {
                    return s.depth > ViewSpec::kMaxDepth
                        ? "at most " + std::to_string(ViewSpec::kMaxDepth) + " blocks (a sweep trains every depth)"
                        : std::string();
                },
            .ownedByView = true},
        {.name = "capacity_factor",
            .field = &ViewSpec::capacityFactor,
            .type = "number ≥ 0",
            .views = {"experts"},
            .meaning = "experts view: route with this capacity factor (each expert takes ⌈factor · T / E⌉ tokens); 0 = "
                       "the model's own (`atlas_capacity_factor`)",
            .maximum = 1024,
            .zeroAllowed = true,
            .ownedByView = true,
            .perModel = true},
        {.name = "expert_top_k",
            .field = &ViewSpec::expertTopK,
            .type = "int ≥ 0",
            .views = {"experts"},
            .meaning = "experts view: send each token to this many experts (at most E); 0 = the model's own "
                       "(`atlas_expert_top_k`)",
            .rule = ">= 1, or 0 for the model's own",
            .ownedByView = true,
            .perModel = true},
        {.name = "devices",
            .field = &ViewSpec::devices,
            .type = "int ≥ 1",
            .views = {"experts"},
            .meaning = "experts view: the devices the experts are spread over (clamped to E)",
            .minimum = 1,
            .rule = ">= 1",
            .ownedByView = true},
        {.name = "block_size",
            .field = &ViewSpec::blockSize,
            .type = "int ≥ 1",
            .views = {"sparse-ffn"},
            .meaning = "sparse FFN view: one neuron kept per block of this many (N)",
            .minimum = 1,
            .rule = ">= 1",
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
            .views = {"objective", "fills"},
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
            .views = {"objective", "fills", "patching"},
            .meaning = "objective and fills views: the draw of the masked LM's choices and replacements, of the spans, "
                       "of the prefix length, or of the sentence pair (`dump --objective … --seed` draws the same); "
                       "patching view: the draw of the noise at `noise_positions`"},
        {.name = "compare_tokenizer",
            .field = &ViewSpec::compareTokenizer,
            .type = "string",
            .views = {"tokenizer"},
            .meaning = "tokenizer view: the tokenizer whose split of the input is shown beside the model's own: a "
                       "built-in tokenizer (`gpt2`, `mistral-7b`, `bert-base-uncased`), a built-in model or a "
                       "directory with a tokenizer (as `tokenize --model`)",
            .check =
                [](const ViewSpec &s) {
                    return s.compareTokenizer.empty() ? std::string("compare_tokenizer: name a tokenizer")
                                                      : std::string();
                },
            .ownedByView = true},
        {.name = "rollout_heads",
            .field = &ViewSpec::rolloutHeads,
            .type = "string",
            .views = {"rollout"},
            .meaning = "rollout view: how each layer's heads are combined before the residual is added: `mean` (Abnar "
                       "& Zuidema's), or `max` / `min` (the largest or smallest weight of any head on each pair, rows "
                       "renormalised)",
            .choices = {"mean", "max", "min"},
            .ownedByView = true},
        {.name = "target",
            .field = &ViewSpec::target,
            .type = "string",
            .views = {"logit-lens", "patching"},
            .meaning = "logit lens: a token whose probability and rank each cell reports and whose probability colours "
                       "the grid; patching: the token the metric reads (needed there). `#id`, or a text the model's "
                       "tokenizer reads as exactly one token (`\" the\"`); `\"\"` = none (the lens then colours "
                       "by each cell's most probable token)",
            .ownedByView = true,
            .perModel = true},
        {.name = "baseline_model",
            .field = &ViewSpec::baselineModel,
            .type = "string",
            .views = {"layerdrop", "token-reduction", "lost-in-the-middle", "funnel", "sinkhorn"},
            .meaning
            = "LayerDrop, Token reduction, Lost in the middle, Funnel and Sinkhorn views: a second model (a built-in "
              "name or a "
              "directory) whose sweep is drawn beside `model`'s, e.g. `austen-6`, trained as "
              "`austen-layerdrop` without LayerDrop, or `austen-mlm` beside `austen-mlm-power`, `austen-mlm-funnel` or "
              "`austen-mlm-sinkhorn`; "
              "`\"\"` = "
              "`model`'s alone",
            .ownedByView = true,
            .perModel = true},
        {.name = "retention",
            .field = &ViewSpec::retention,
            .type = "string",
            .views = {"token-reduction"},
            .meaning = "token reduction: the share of the input's tokens kept after each layer (PoWER-BERT's retention "
                       "schedule), one rate r (r, r², r³ … of them) or one share per layer but the last, "
                       "non-increasing (`\"0.9,0.6,0.4\"`)",
            .check =
                [](const ViewSpec &s) {
                    try { // the form here; the count of shares against the model that runs
                        if (s.retention.find(',') == std::string::npos)
                            parseRetentionSchedule(s.retention, 2, "retention");
                    } catch (const Error &e) {
                        return std::string(e.what()).substr(11); // after "retention: "
                    }
                    return std::string();
                },
            .ownedByView = true},
        {.name = "ranking",
            .field = &ViewSpec::ranking,
            .type = "string",
            .views = {"token-reduction"},
            .meaning = "token reduction: how the tokens that go on are chosen, `significance` (PoWER-BERT: the "
                       "attention each receives from every query), `random` (a control) or `targets` (not "
                       "PoWER-BERT: the attention the [MASK] positions pay)",
            .choices = {"significance", "random", "targets"},
            .ownedByView = true},
        {.name = "exit_rule",
            .field = &ViewSpec::exitRule,
            .type = "string",
            .views = {"early-exit"},
            .meaning = "early exit: the rule that stops a token, `confidence` (after the first block whose top "
                       "probability is at least `exit_threshold`) or `patience` (PABEE: once its prediction has "
                       "stayed unchanged `exit_patience` times in a row)",
            .choices = {"confidence", "patience"},
            .ownedByView = true},
        {.name = "exit_threshold",
            .field = &ViewSpec::exitThreshold,
            .type = "number, 0 < θ ≤ 1",
            .views = {"early-exit"},
            .meaning = "early exit by confidence: θ, the top probability a block's prediction needs",
            .maximum = 1,
            .ownedByView = true},
        {.name = "exit_patience",
            .field = &ViewSpec::exitPatience,
            .type = "int ≥ 1",
            .views = {"early-exit"},
            .meaning = "early exit by patience: t, how many times in a row the prediction must stay unchanged "
                       "(clamped to the model's layers − 1)",
            .minimum = 1,
            .rule = ">= 1",
            .ownedByView = true},
        {.name = "contrast",
            .field = &ViewSpec::contrast,
            .type = "string",
            .views = {"patching"},
            .meaning
            = "patching view: the metric is logit(`target`) − logit(`contrast`) at `position`, a token written "
              "as `target` is; `\"\"` = the probability of `target`",
            .ownedByView = true,
            .perModel = true},
        {.name = "patch",
            .field = &ViewSpec::patch,
            .type = "string",
            .views = {"patching"},
            .meaning = "patching view: what is patched, one cell each: `residual` (the residual stream entering each "
                       "block at each position), `heads` (each head's output, its context C_h at every position) or "
                       "`mlp` (each layer's feed-forward output at every position)",
            .choices = {"residual", "heads", "mlp"},
            .ownedByView = true},
        {.name = "corrupted_text",
            .field = &ViewSpec::corruptedText,
            .type = "string",
            .views = {"patching"},
            .meaning = "patching view: the corrupted input, read as the Input box reads it (text the model's tokenizer "
                       "reads, or token ids as `#464,3290`) into as many tokens as the input; `\"\"` = the input with "
                       "noise at `noise_positions`",
            .ownedByView = true,
            .perModel = true},
        {.name = "noise_positions",
            .field = &ViewSpec::noisePositions,
            .type = "array of ints",
            .views = {"patching"},
            .meaning = "patching view, without `corrupted_text`: the positions whose embedding gets Gaussian noise of "
                       "3 × the embedding matrix's standard deviation (Meng et al. 2022), drawn from `seed`",
            .ownedByView = true,
            .perModel = true},
        {.name = "compare",
            .field = &ViewSpec::compare,
            .type = "string",
            .meaning = "two runs side by side: `\"\"` = one run; `side` draws the view for this spec's run (A) and, "
                       "beside it, for a run B that differs by `compare_model`, `compare_text` or "
                       "`compare_attention` (layer, head and position are shared); `difference` draws A − B on a "
                       "diverging scale (attention view, equal shapes)",
            .choices = {"", "side", "difference"}},
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
    };
    return keys;
}

} // namespace atlas
