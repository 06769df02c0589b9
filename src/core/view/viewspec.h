#pragma once

#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace atlas {

// A value of a view's own key, as ViewSpec::own stores it.
using SpecValue = std::variant<std::string, int, double, bool, std::vector<int>, std::vector<std::string>>;

// A key that belongs to one view: declared in the view's folder (src/views/NAME/) with its default, and documented
// there by the SpecKey its descriptor lists (ViewKind::keys). Read and written through ViewSpec::get and set.
template <typename T> struct OwnKey
{
    const char *name;
    T fallback;
};

// What is on screen, as a small JSON object (docs/view-spec.md). The app copies it, `render` draws it
// headless, and a lesson step is one. Unknown keys and wrong types are errors naming the source and key.
struct ViewSpec
{
    std::string view = "attention"; // ViewSpec::viewKinds(): attention, heads, lines, mask, … (docs/view-spec.md)
    std::string model = "tiny-bytes"; // a built-in model name or a model directory
    // Run the model with another positional encoding that needs no parameters (sinusoidal, rope, rope-half, alibi,
    // none: Model::withPositions); "" = its own.
    std::string positions;
    std::string text = "The cat sat on the mat.";
    std::vector<int> tokens; // explicit token ids; when not empty they replace `text`
    std::vector<int> padding; // positions treated as padding: no query may attend to them
    // An encoder-decoder reads two inputs: text, tokens and padding above are its source (the encoder's input, as
    // dump --text), these its decoder's input (as dump --decoder-text); tokens, when given, replace the text.
    std::string decoderText;
    std::vector<int> decoderTokens;
    // Which attention the attention views show: "self" (the model's only stack, or an encoder-decoder's decoder),
    // "encoder" (an encoder-decoder's encoder) or "cross" (its decoder's cross-attention). `layer` counts blocks of
    // that stack.
    std::string site = "self";
    int layer = 0;
    int head = 0; // -1 means every head of the layer (lines view)
    std::string tensor; // trace name shown by the tensor view, e.g. "layer.0.attn.q"
    std::string scale = "linear"; // linear | log  (colour scale of heat maps)
    std::string colormap = "viridis"; // viridis | magma | cividis | greys
    int topK = 20; // bars in the next-token view
    int position = -1; // query position of the next-token view; -1 = the last token
    std::string theme = "light"; // light | dark
    std::string attention = "full"; // attention kernel: full | lsh | bigbird | longformer | …
    std::vector<std::string> attentionParams; // its parameters as "key=value", e.g. "window=16"
    std::vector<int> attentionLayers; // the layers that run it (the others run full attention); empty = every layer
    std::string op; // the stepper's position: up to and including this op (or the op writing this tensor); "" = end
    int query = -1; // a query row the views single out (a lesson's question, a click); -1 = none (neuron: the last)
    int checkpointEvery = 0; // memory views: checkpointing keeps every k-th block boundary; 0 = ⌈√L⌉
    int ffnChunks = 1; // memory views: the feed-forward sub-layers run in this many chunks of rows
    int cursor = -1; // memory timeline and graph: the op of the training step singled out (a scrub position); -1 = none
    int depth = 16; // memory-depth, memory-tradeoff, inversion-error: random-weight models of the model's shape at
                    // this depth (the sweep's deepest); 0 = the model's own depth (inversion-error: its own weights)
    // Objectives view: the pretraining objective applied to the input (next | mlm | span | prefix | nsp; "" = the
    // model's own, analysis/objectiveexample.h). Masked fills view: "mlm" corrupts the input from `seed` first, ""
    // fills the [MASK]s the input holds.
    std::string objective;
    int seed = 0; // the draw of the objective's corruption (mlm, span) or prefix length (prefix)
    // Logit lens: a token whose probability and rank every cell reports ("#id", or text the tokenizer reads as one
    // token); "" = none, the cells coloured by their most probable token's probability.
    std::string target;
    // LayerDrop, PoWER-BERT, Lost in the middle and Funnel views: a second model whose sweep is drawn beside the spec's
    // model's.
    std::string baselineModel;
    // Two runs side by side (view/comparison.h): "" = one run; "side" draws the view for the spec's run (A) and for
    // a second run (B) next to it, layer, head and position linked; "difference" draws A − B (attention view). B is
    // the spec with these applied: another model, another text, another attention kernel and its parameters.
    std::string compare;
    std::string compareModel;
    std::string compareText;
    std::string compareAttention;
    std::vector<std::string> compareAttentionParams;
    // The views' own keys (OwnKey): each value away from its key's default, by the key's name.
    std::map<std::string, SpecValue> own;

    template <typename T> const T &get(const OwnKey<T> &key) const
    {
        const auto it = own.find(key.name);
        return it == own.end() ? key.fallback : std::get<T>(it->second);
    }
    template <typename T> void set(const OwnKey<T> &key, std::type_identity_t<T> value)
    {
        if (value == key.fallback)
            own.erase(key.name);
        else
            own[key.name] = std::move(value);
    }

    static constexpr int kMaxDepth = 64;
    static std::vector<std::string> viewKinds();
    // `source` names where the JSON came from (a file path, "clipboard", "lesson x step 3") for errors.
    static ViewSpec fromJson(const std::string &json, const std::string &source);
    // Pretty-printed, every key present; or, when `changedOnly`, "view", "model" and the keys the view reads whose
    // value differs from the default (what a lesson step needs, and nothing to drift when a default changes).
    std::string toJson(bool changedOnly = false) const;
    bool operator==(const ViewSpec &) const = default;
};

// One key of a view spec, written once: its name, the field it sets, how its values are checked and what
// docs/view-spec.md says of it. The parser, the JSON writer and the docs' table of keys are made from specKeys().
struct SpecKey
{
    // A field of ViewSpec (a key every view, or several, read), or a view's own key.
    using Field = std::variant<std::string ViewSpec::*, int ViewSpec::*, double ViewSpec::*, bool ViewSpec::*,
        std::vector<int> ViewSpec::*, std::vector<std::string> ViewSpec::*, OwnKey<std::string>, OwnKey<int>,
        OwnKey<double>, OwnKey<bool>, OwnKey<std::vector<int>>, OwnKey<std::vector<std::string>>>;
    std::string name; // a view's own key: left out, specKeys() gives it its OwnKey's
    Field field;
    std::string type; // the docs' "type" column: "int ≥ 0", "string"
    // Read by some views only: those whose descriptor names it (ViewKind::analysisKeys or alsoReads). Otherwise every
    // view reads it (the model, its input and its run, the page's look).
    bool someViews = false;
    // The view kinds that read it, in the order of the tabs; empty: every view. specKeys() fills it in from the
    // descriptors (leave it out). A lesson step that sets a key its view does not read is a problem `lesson check`
    // names.
    std::vector<std::string> views;
    std::string meaning; // the docs' "meaning" column (Markdown)
    std::vector<std::string> choices; // a string key's values; empty: any string
    int minimum = 0; // an int key's least value, and the rule a smaller one breaks (">= 0, or -1 for none")
    std::string rule = ">= 0";
    double maximum = 0; // a number key's largest value (the least is above 0, or 0 itself when zeroAllowed)
    bool zeroAllowed = false;
    // A rule beyond the type and range, on the value just read: why the spec breaks it, or "" when it does not.
    std::function<std::string(const ViewSpec &)> check;
    // A view's own setting: each view that reads it keeps its own value while others are shown (the Logit lens's
    // tracked token is not Patching's target). Keys without it (layer, head, the input, the stepper) are shared.
    bool ownedByView = false;
    // It names something of one model (a token, a head, a second model, an expert count): another model opened
    // afresh starts from its default.
    bool perModel = false;
};

// Every key: the ones ViewSpec's fields hold (view/speckeys.cpp), then each view's own (its ViewKind::keys, which read
// by that view alone), in the order of the tabs.
const std::vector<SpecKey> &specKeys();

// The value of a key's field in `spec`, and setting it (an own key at its default is not stored).
template <typename T> T fieldValue(const ViewSpec &spec, T ViewSpec::*field)
{
    return spec.*field;
}
template <typename T> T fieldValue(const ViewSpec &spec, const OwnKey<T> &key)
{
    return spec.get(key);
}
template <typename T> void setField(ViewSpec &spec, T ViewSpec::*field, std::type_identity_t<T> value)
{
    spec.*field = std::move(value);
}
template <typename T> void setField(ViewSpec &spec, const OwnKey<T> &key, std::type_identity_t<T> value)
{
    spec.set(key, std::move(value));
}

// The key named `name`; nullptr for none.
const SpecKey *findSpecKey(const std::string &name);
// Whether a view of kind `view` reads `key`.
bool viewReadsKey(const std::string &view, const SpecKey &key);
// The keys `spec` sets (away from their defaults) that its view does not read.
std::vector<std::string> unreadKeys(const ViewSpec &spec);

// docs/view-spec.md's table of keys (key, type, default, meaning), one row per specKeys() entry in its order.
std::string specKeysMarkdown();

} // namespace atlas
