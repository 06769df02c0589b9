#include "view/viewspec.h"

#include "attention/attentionkernel.h"
#include "engine/headablation.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "util/commalist.h"
#include "util/error.h"
#include "view/viewkinds.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <map>
#include <utility>
#include <variant>

namespace atlas {
namespace {

using Json = nlohmann::json;

size_t editDistance(const std::string &a, const std::string &b)
{
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// "did you mean 'layer'?" when a candidate is close enough to be a plausible typo, else the full list.
std::string suggestion(const std::string &word, const std::vector<std::string> &candidates)
{
    const std::string *best = nullptr;
    size_t bestDistance = SIZE_MAX;
    for (const std::string &c : candidates) {
        const size_t d = editDistance(word, c);
        if (d < bestDistance) {
            bestDistance = d;
            best = &c;
        }
    }
    const size_t tolerance = std::max<size_t>(2, std::max(word.size(), best->size()) / 2);
    if (bestDistance <= tolerance)
        return "did you mean '" + *best + "'?";
    return "expected one of: " + joinedCommaList(candidates);
}

const char *typeName(const Json &value)
{
    if (value.is_number_integer())
        return "an integer";
    if (value.is_number())
        return "a number";
    if (value.is_string())
        return "a string";
    if (value.is_boolean())
        return "a boolean";
    if (value.is_null())
        return "null";
    if (value.is_array())
        return "an array";
    return "an object";
}

// Reads one member of the spec object; every failure names the source and the key.
class Reader
{
public:
    Reader(std::string source, std::string key)
        : m_source(std::move(source))
        , m_key(std::move(key))
    {
    }

    [[noreturn]] void fail(const std::string &reason) const
    {
        throw Error(m_source + ": key '" + m_key + "': " + reason);
    }

    std::string string(const Json &value) const
    {
        if (!value.is_string())
            fail(std::string("expected a string, got ") + typeName(value));
        return value.get<std::string>();
    }

    std::string oneOf(const Json &value, const std::vector<std::string> &allowed) const
    {
        std::string s = string(value);
        if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
            fail("unknown value '" + s + "' (" + suggestion(s, allowed) + ")");
        return s;
    }

    int integer(const Json &value, int minimum, const std::string &rule) const
    {
        if (!value.is_number_integer())
            fail(std::string("expected an integer, got ") + typeName(value));
        if (value.is_number_unsigned() ? value.get<uint64_t>() > uint64_t(INT_MAX)
                                       : value.get<int64_t>() < INT_MIN || value.get<int64_t>() > INT_MAX)
            fail("integer " + shownJson(value) + " is out of range");
        const int v = value.get<int>();
        if (v < minimum)
            fail("must be " + rule + ", got " + std::to_string(v));
        return v;
    }

    bool boolean(const Json &value) const
    {
        if (!value.is_boolean())
            fail(std::string("expected true or false, got ") + typeName(value));
        return value.get<bool>();
    }

    double positive(const Json &value, double maximum) const
    {
        if (!value.is_number())
            fail(std::string("expected a number, got ") + typeName(value));
        const double v = value.get<double>();
        if (!std::isfinite(v) || v <= 0 || v > maximum)
            fail("must be above 0 and at most " + Json(maximum).dump() + ", got " + shownJson(value));
        return v;
    }

    std::vector<std::string> strings(const Json &value) const
    {
        if (!value.is_array())
            fail(std::string("expected an array of strings, got ") + typeName(value));
        std::vector<std::string> out;
        for (const Json &e : value)
            out.push_back(string(e));
        return out;
    }

    // The kernel and its parameters must make a valid spec; the message names this key.
    void checkKernel(const std::string &kind, const std::vector<std::string> &params) const
    {
        try {
            attention::parseAttentionKernelSpec(kind, params);
        } catch (const Error &e) {
            fail(e.what());
        }
    }

    std::vector<int> integers(const Json &value) const
    {
        if (!value.is_array())
            fail(std::string("expected an array of integers, got ") + typeName(value));
        std::vector<int> out;
        for (size_t i = 0; i < value.size(); ++i) {
            const Json &e = value[i];
            if (!e.is_number_integer() || (!e.is_number_unsigned() && e.get<int64_t>() < 0)
                || (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT_MAX)))
                fail("element " + std::to_string(i) + " must be a non-negative integer, got " + shownJson(e));
            out.push_back(e.get<int>());
        }
        return out;
    }

private:
    std::string m_source;
    std::string m_key;
};

// The visitor of a key's field: one call operator per field type.
template <class... Ts> struct Overloaded : Ts...
{
    using Ts::operator()...;
};
template <class... Ts> Overloaded(Ts...) -> Overloaded<Ts...>; // clang 14 deduces no aggregate's arguments

void readKey(const SpecKey &key, ViewSpec &spec, const Reader &r, const Json &v)
{
    std::visit(
        Overloaded {
            [&](std::string ViewSpec::*f) { spec.*f = key.choices.empty() ? r.string(v) : r.oneOf(v, key.choices); },
            [&](int ViewSpec::*f) { spec.*f = r.integer(v, key.minimum, key.rule); },
            [&](double ViewSpec::*f) {
                spec.*f = key.zeroAllowed && v.is_number() && v.get<double>() == 0 ? 0.0 : r.positive(v, key.maximum);
            },
            [&](bool ViewSpec::*f) { spec.*f = r.boolean(v); },
            [&](std::vector<int> ViewSpec::*f) { spec.*f = r.integers(v); },
            [&](std::vector<std::string> ViewSpec::*f) { spec.*f = r.strings(v); },
        },
        key.field);
    if (key.check)
        if (const std::string why = key.check(spec); !why.empty())
            r.fail(why);
}

const SpecKey *findKey(const std::string &name)
{
    for (const SpecKey &key : specKeys())
        if (key.name == name)
            return &key;
    return nullptr;
}

std::vector<std::string> keyNames()
{
    std::vector<std::string> names;
    for (const SpecKey &key : specKeys())
        names.push_back(key.name);
    return names;
}

} // namespace

std::vector<std::string> ViewSpec::viewKinds()
{
    std::vector<std::string> kinds;
    for (const ViewKind &k : atlas::viewKinds())
        kinds.push_back(k.kind);
    return kinds;
}

const std::vector<SpecKey> &specKeys()
{
    static const std::vector<SpecKey> keys = {
        {.name = "view",
            .field = &ViewSpec::view,
            .type = "string",
            .meaning
            = "`attention` (one head's heat map), `heads` (every layer × head), `lines` (token-to-token "
              "lines), `mask` (scores, mask, probabilities side by side), `scaling` (why √d: Var(q·k) against "
              "d, and one row's softmax with and without 1/√d), `neuron` (one query and key: q, k and q∘k "
              "component by component), `ablation` (heads switched off: the importance table, the next token "
              "and the task's scores with and without them), `architecture` (the model's operations as a "
              "diagram; a click steps there), `next-token` (bar chart), `tensor` (any traced tensor), "
              "`kernels` (one head under every attention kernel, see below), `lsh` (one head's LSH buckets, "
              "sorted chunks and misses, see below), `pattern` (the editor of a fixed sparse pattern, see "
              "below), `approximation` (Linformer and Performer against softmax, see below), `memory-timeline` "
              "(one training step's live memory under each memory strategy, see below), `memory-graph` (the "
              "layers as a chain, each node's state at the cursor), `memory-depth` (peak activations and step "
              "time against depth), `memory-tradeoff` (checkpointing every k = 1 … L), `inversion-error` "
              "(reversible blocks' rebuild error per block and precision), `objective` (a pretraining "
              "objective applied to the input, see below), `fills` (a masked LM's first choices at each hidden "
              "position, see below), `tokenizer` (how the model's tokenizer splits the input, beside "
              "`compare_tokenizer`'s), `logit-lens` (the residual stream after each block read through the output "
              "head, see below), `rollout` (attention rollout and flow through every layer, see below), "
              "`patching` (activation patching: which activations restore the clean output, see below)",
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
                       "`next-token`, `architecture` and `objective` show it; the rest (kernels, memory …) say they "
                       "show one-stack models",
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
            .meaning = "trace name for the tensor view, e.g. `layer.0.attn.q` (see trace-names.md)"},
        {.name = "scale",
            .field = &ViewSpec::scale,
            .type = "string",
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
            .meaning = "bars in the next-token view",
            .minimum = 1,
            .rule = ">= 1"},
        {.name = "position",
            .field = &ViewSpec::position,
            .type = "int",
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
                       "`fixed`, `linformer`, `performer`",
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
            .meaning = "lines view with every head (`head` −1): the heads switched off, each toggled by clicking its "
                       "swatch (BertViz's head view)"},
        {.name = "thumbnail_size",
            .field = &ViewSpec::thumbnailSize,
            .type = "int, 0 or 48 … 1024",
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
                }},
        {.name = "key",
            .field = &ViewSpec::key,
            .type = "int ≥ −1",
            .meaning = "neuron view: the key of the pair; −1 = the key the query weights most",
            .minimum = -1,
            .rule = ">= 0, or -1 for the most weighted"},
        {.name = "ablate_heads",
            .field = &ViewSpec::ablateHeads,
            .type = "string",
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
                }},
        {.name = "ablation",
            .field = &ViewSpec::ablation,
            .type = "string",
            .meaning
            = "ablation view: `zero` (a head's context C_h is replaced by 0 in the merge, Michel et al.'s head "
              "pruning) or `mean` (by its mean over held-out examples of the model's task, or over the input "
              "for a model without one)",
            .choices = {"zero", "mean"}},
        {.name = "approximation",
            .field = &ViewSpec::approximation,
            .type = "string",
            .meaning = "approximation view: `linformer` or `performer`",
            .choices = {"linformer", "performer"}},
        {.name = "approximation_value",
            .field = &ViewSpec::approximationValue,
            .type = "int ≥ 0",
            .meaning = "approximation view: the k (Linformer) or number of features (Performer) drawn, the nearest "
                       "swept one; 0 = the middle of the sweep",
            .rule = ">= 1, or 0 for the middle of the sweep"},
        {.name = "op",
            .field = &ViewSpec::op,
            .type = "string",
            .meaning = "the stepper's position: the model runs up to and including this operation (`ln_f`), or the one "
                       "that writes this tensor (`layer.0.attn.probs`); `\"\"` = the end (docs/trace-names.md lists "
                       "them)"},
        {.name = "query",
            .field = &ViewSpec::query,
            .type = "int",
            .meaning = "a query row the Attention view outlines (a lesson's predict question sets it on Reveal); −1 = "
                       "none; the neuron view's query (−1: the last token)",
            .minimum = -1,
            .rule = ">= 0, or -1 for none"},
        {.name = "veil_query",
            .field = &ViewSpec::veilQuery,
            .type = "bool",
            .meaning = "attention view: row `query` is covered (\"hidden until Reveal\") and its hover says nothing of "
                       "its weights. A lesson step with a predict question opens with it on, so the heat map does not "
                       "give the answer away; Reveal turns it off"},
        {.name = "temperature",
            .field = &ViewSpec::temperature,
            .type = "number, 0 < T ≤ 100",
            .meaning = "the next-token view's bars are softmax(z / T), computed from the traced `next_probs` = "
                       "softmax(z) as p^(1/T) / Σ p^(1/T): below 1 sharpens, above 1 flattens; what sampling at that "
                       "temperature draws from",
            .maximum = 100},
        {.name = "checkpoint_every",
            .field = &ViewSpec::checkpointEvery,
            .type = "int ≥ 0",
            .meaning = "memory views: gradient checkpointing keeps every k-th block boundary, 1 … L; 0 = ⌈√L⌉",
            .rule = ">= 1, or 0 for the square root of the depth"},
        {.name = "ffn_chunks",
            .field = &ViewSpec::ffnChunks,
            .type = "int ≥ 1",
            .meaning
            = "memory views: the feed-forward sub-layers run over the sequence in this many chunks (at most T)",
            .minimum = 1,
            .rule = ">= 1"},
        {.name = "memory_scope",
            .field = &ViewSpec::memoryScope,
            .type = "string",
            .meaning = "memory timeline: `all` (every category stacked) or `activations` (stored, recomputed and "
                       "workspace only: the part the strategies change)",
            .choices = {"all", "activations"}},
        {.name = "cursor",
            .field = &ViewSpec::cursor,
            .type = "int ≥ −1",
            .meaning = "memory timeline and computation graph: the op of the training step singled out (the scrub "
                       "position); −1 = none",
            .minimum = -1,
            .rule = ">= 0, or -1 for none"},
        {.name = "depth",
            .field = &ViewSpec::depth,
            .type = "int 0 … 64",
            .meaning = "memory-depth (the deepest of depths 1, 2, 4 …), memory-tradeoff and inversion-error: models of "
                       "the model's shape with random weights at this depth; 0 = the model's own depth "
                       "(inversion-error: the model's own weights, which must be reversible)",
            .rule = ">= 0, or 0 for the model's own depth",
            .check =
                [](const ViewSpec &s) {
                    return s.depth > ViewSpec::kMaxDepth
                        ? "at most " + std::to_string(ViewSpec::kMaxDepth) + " blocks (a sweep trains every depth)"
                        : std::string();
                }},
        {.name = "capacity_factor",
            .field = &ViewSpec::capacityFactor,
            .type = "number ≥ 0",
            .meaning = "experts view: route with this capacity factor (each expert takes ⌈factor · T / E⌉ tokens); 0 = "
                       "the model's own (`atlas_capacity_factor`)",
            .maximum = 1024,
            .zeroAllowed = true},
        {.name = "expert_top_k",
            .field = &ViewSpec::expertTopK,
            .type = "int ≥ 0",
            .meaning = "experts view: send each token to this many experts (at most E); 0 = the model's own "
                       "(`atlas_expert_top_k`)",
            .rule = ">= 1, or 0 for the model's own"},
        {.name = "devices",
            .field = &ViewSpec::devices,
            .type = "int ≥ 1",
            .meaning = "experts view: the devices the experts are spread over (clamped to E)",
            .minimum = 1,
            .rule = ">= 1"},
        {.name = "block_size",
            .field = &ViewSpec::blockSize,
            .type = "int ≥ 1",
            .meaning = "sparse FFN view: one neuron kept per block of this many (N)",
            .minimum = 1,
            .rule = ">= 1"},
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
            .meaning = "objective and fills views: the draw of the masked LM's choices and replacements, of the spans, "
                       "of the prefix length, or of the sentence pair (`dump --objective … --seed` draws the same); "
                       "patching view: the draw of the noise at `noise_positions`"},
        {.name = "compare_tokenizer",
            .field = &ViewSpec::compareTokenizer,
            .type = "string",
            .meaning = "tokenizer view: the tokenizer whose split of the input is shown beside the model's own: a "
                       "built-in tokenizer (`gpt2`, `mistral-7b`, `bert-base-uncased`), a built-in model or a "
                       "directory with a tokenizer (as `tokenize --model`)",
            .check =
                [](const ViewSpec &s) {
                    return s.compareTokenizer.empty() ? std::string("compare_tokenizer: name a tokenizer")
                                                      : std::string();
                }},
        {.name = "rollout_heads",
            .field = &ViewSpec::rolloutHeads,
            .type = "string",
            .meaning = "rollout view: how each layer's heads are combined before the residual is added: `mean` (Abnar "
                       "& Zuidema's), or `max` / `min` (the largest or smallest weight of any head on each pair, rows "
                       "renormalised)",
            .choices = {"mean", "max", "min"}},
        {.name = "target",
            .field = &ViewSpec::target,
            .type = "string",
            .meaning = "logit lens: a token whose probability and rank each cell reports and whose probability colours "
                       "the grid; patching: the token the metric reads (needed there). `#id`, or a text the model's "
                       "tokenizer reads as exactly one token (`\" the\"`); `\"\"` = none (the lens then colours "
                       "by each cell's most probable token)"},
        {.name = "contrast",
            .field = &ViewSpec::contrast,
            .type = "string",
            .meaning
            = "patching view: the metric is logit(`target`) − logit(`contrast`) at `position`, a token written "
              "as `target` is; `\"\"` = the probability of `target`"},
        {.name = "patch",
            .field = &ViewSpec::patch,
            .type = "string",
            .meaning = "patching view: what is patched, one cell each: `residual` (the residual stream entering each "
                       "block at each position), `heads` (each head's output, its context C_h at every position) or "
                       "`mlp` (each layer's feed-forward output at every position)",
            .choices = {"residual", "heads", "mlp"}},
        {.name = "corrupted_text",
            .field = &ViewSpec::corruptedText,
            .type = "string",
            .meaning = "patching view: the corrupted input, read by the model's tokenizer into as many tokens as the "
                       "input; `\"\"` = the input with noise at `noise_positions`"},
        {.name = "noise_positions",
            .field = &ViewSpec::noisePositions,
            .type = "array of ints",
            .meaning = "patching view, without `corrupted_text`: the positions whose embedding gets Gaussian noise of "
                       "3 × the embedding matrix's standard deviation (Meng et al. 2022), drawn from `seed`"},
    };
    return keys;
}

std::string specKeysMarkdown()
{
    const ViewSpec defaults;
    std::string out = "| key | type | default | meaning |\n| --- | --- | --- | --- |\n";
    for (const SpecKey &key : specKeys()) {
        const std::string value = std::visit([&](auto f) { return Json(defaults.*f).dump(); }, key.field);
        out += "| `" + key.name + "` | " + key.type + " | `" + value + "` | " + key.meaning + " |\n";
    }
    return out;
}

ViewSpec ViewSpec::fromJson(const std::string &json, const std::string &source)
{
    if (json.size() > limits::kSpecBytes)
        throw Error(source + ": a view spec is at most " + std::to_string(limits::kSpecBytes) + " bytes, this one has "
            + std::to_string(json.size()));
    const Json root = parseJson(json, source); // a number too large for a double names its key, too
    if (!root.is_object())
        throw Error(source + ": expected a JSON object with view-spec keys, got " + typeName(root));

    ViewSpec spec;
    for (const auto &[key, value] : root.items()) {
        const Reader reader(source, key);
        const SpecKey *specKey = findKey(key);
        if (specKey == nullptr)
            reader.fail("unknown key (" + suggestion(key, keyNames()) + ")");
        readKey(*specKey, spec, reader, value);
    }
    Reader(source, "attention_params").checkKernel(spec.attention, spec.attentionParams);
    return spec;
}

std::string ViewSpec::toJson(bool changedOnly) const
{
    if (changedOnly) {
        const nlohmann::ordered_json all = nlohmann::ordered_json::parse(toJson()),
                                     defaults = nlohmann::ordered_json::parse(ViewSpec().toJson());
        nlohmann::ordered_json j;
        for (const auto &[key, value] : all.items())
            if (key == "view" || key == "model" || value != defaults[key])
                j[key] = value;
        return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    }
    nlohmann::ordered_json j;
    for (const SpecKey &key : specKeys())
        std::visit([&](auto f) { j[key.name] = this->*f; }, key.field);
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace atlas
